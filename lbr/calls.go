package lbr

import (
	"golang.org/x/arch/x86/x86asm"

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/perf"
)

// IPMeaning says what a calls sample's IP is.
//
// The calls source samples a retired-near-call event (BR_INST_RETIRED.
// NEAR_CALL on Intel) without a branch stack. Each sample is one call, and
// what its PERF_SAMPLE_IP means depends on the attr's precise_ip and on
// whether the kernel marked the sample PERF_RECORD_MISC_EXACT_IP. The
// facts below are from arch/x86/events/intel/ds.c (Linux 6.x):
//
//   - precise_ip 0: no PEBS. The counter overflows and the PMU interrupt
//     arrives some instructions later ("skid"); the IP is the interrupted
//     user IP, the same as the callchain's first entry. It can be in the
//     callee, deeper, or back in the caller after a short callee returned.
//     IPSkid.
//
//   - precise_ip 1: PEBS. setup_pebs_fixed_sample_data sets the IP from
//     the PEBS record's ip field ("When precise_ip == 1, return the PEBS
//     off-by-1 IP, no fixup attempted") and clears PERF_EFLAGS_EXACT. The
//     PEBS ip is the address of the instruction executed after the one that
//     caused the event: after a retired near call, the call's target, the
//     callee's entry. On adaptive PEBS (Ice Lake and later),
//     setup_pebs_adaptive_sample_data first takes the basic group's ip
//     ("The ip in basic is EventingIP") but pebs_update_adaptive_cfg adds
//     the GP-register group whenever precise_ip < 2 ("precise_ip < 2 for
//     the non event IP"), and the GP group's ip (the off-by-one IP)
//     replaces it with EXACT cleared: the same meaning. IPTarget.
//
//   - precise_ip 2 and 3: on PEBS format 2 and later (Haswell on) the
//     record's real_ip / EventingIP, the address of the instruction that
//     caused the event: the call instruction itself ("Haswell and later
//     processors have an 'eventing IP' (real IP) which fixes the off-by-1
//     skid in hardware"); EXACT is set. On older PEBS,
//     intel_pmu_pebs_fixup_ip walks from the last LBR entry's target to the
//     off-by-one IP decoding instructions, and on success sets the IP to
//     the instruction before it (the call) and EXACT; on failure the IP
//     stays the off-by-one one and EXACT is clear. IPCallInsn when EXACT,
//     IPTarget otherwise.
//
// The callchain of a PEBS sample is taken from the interrupt's registers,
// not the PEBS record's ("We must however always use iregs for the
// unwinder to stay sane"), so it shows the stack at the interrupt, which
// may be a few instructions after the call: in the callee before or after
// its frame-pointer prologue, or already back in the caller.
type IPMeaning uint8

const (
	// IPSkid is the interrupted IP some instructions after the call
	// retired (precise_ip 0).
	IPSkid IPMeaning = iota
	// IPTarget is the address of the instruction after the call: the
	// callee's entry (PEBS off-by-one IP: precise_ip 1, or 2-3 when the
	// kernel could not fix it up).
	IPTarget
	// IPCallInsn is the call instruction itself (the eventing IP:
	// PERF_RECORD_MISC_EXACT_IP set, precise_ip 2 or 3).
	IPCallInsn
)

func (m IPMeaning) String() string {
	switch m {
	case IPSkid:
		return "skid"
	case IPTarget:
		return "target"
	case IPCallInsn:
		return "call"
	}
	return "ipmeaning(?)"
}

// SampleIPMeaning returns the meaning of a calls sample's IP from its
// attr's precise_ip and its record header's misc field.
func SampleIPMeaning(precise uint8, misc uint16) IPMeaning {
	switch {
	case precise == 0:
		return IPSkid
	case misc&perf.MiscExactIP != 0:
		return IPCallInsn
	}
	return IPTarget
}

// CallSample is what CallFromSample needs of one calls sample.
type CallSample struct {
	PID     uint32
	IP      addrspace.Addr // PERF_SAMPLE_IP
	Meaning IPMeaning
	// Chain is the user part of the frame-pointer callchain (the entries
	// after PERF_CONTEXT_USER): Chain[0] the user IP at the interrupt, then
	// return addresses, innermost first.
	Chain []addrspace.Addr
}

// CallEdge is the call a calls sample stands for.
type CallEdge struct {
	// Site is the call instruction's address (the caller is the function
	// holding it); 0 when it could not be found.
	Site addrspace.Addr
	// Return is the call's return address (Site plus the call's length);
	// 0 when Site is 0.
	Return addrspace.Addr
	// Callee is the callee's entry when CalleeEntry, otherwise an address
	// inside the callee (symbolize it to its function); 0 when unknown.
	Callee      addrspace.Addr
	CalleeEntry bool
	Kind        Kind // KindCall, KindIndCall, or KindUnknown when Site is 0
	// SiteChecked says the call at Site was decoded as a direct call whose
	// target is Callee: the site and callee agree. Sites found for an
	// indirect call from the callchain alone are not checked.
	SiteChecked bool
}

// prologueLen is the length of the usual frame-pointer prologue, push %rbp
// (1 byte) and mov %rsp,%rbp (3 bytes): before it completes, the callee's
// frame is not in the frame-pointer chain.
const prologueLen = 4

// maxCallLen is the longest near call searched for before a return
// address (FF /2 with REX, SIB and disp32 is 7 bytes).
const maxCallLen = 7

// CallFromSample derives the call edge of one calls sample: the call site
// and the callee, read through code (nil: nothing can be decoded, and only
// what the IP says directly is returned). The second result is false when
// neither the site nor the callee could be derived.
//
// IPCallInsn: the site is the IP; a direct call's callee is its decoded
// target; an indirect call's callee is the function below the call's
// return address in the callchain (found when the callee's frame was set
// up at the interrupt, else unknown).
//
// IPTarget: the callee is the IP (its entry); the site is the call before
// the first return address in the callchain that is a direct call to the
// IP, or, failing that, the call before Chain[1] if it is an indirect
// call and the interrupt came after the callee's prologue (not checked).
//
// IPSkid: the edge on top of the stack at the interrupt: the call before
// Chain[1] (the call of the function holding Chain[0]) and its direct
// target, or Chain[0] as an address inside the callee for an indirect
// call. Skid makes this the edge of whatever ran at the interrupt, not
// necessarily the sampled call.
func CallFromSample(s CallSample, code CodeReader) (CallEdge, bool) {
	var e CallEdge
	switch s.Meaning {
	case IPCallInsn:
		c, ok := decodeCall(code, s.PID, s.IP)
		if !ok {
			return e, false
		}
		e.Site, e.Return, e.Kind = s.IP, s.IP+addrspace.Addr(c.len), c.kind
		if c.kind == KindCall {
			e.Callee, e.CalleeEntry, e.SiteChecked = c.target, true, true
			return e, true
		}
		for k := 1; k < len(s.Chain); k++ {
			if s.Chain[k] == e.Return {
				e.Callee = s.Chain[k-1]
				break
			}
		}
		return e, true
	case IPTarget:
		e.Callee, e.CalleeEntry = s.IP, true
		for k := 1; k < len(s.Chain); k++ {
			if c, ok := callBefore(code, s.PID, s.Chain[k]); ok && c.kind == KindCall && c.target == s.IP {
				e.Site, e.Return, e.Kind, e.SiteChecked = c.site, s.Chain[k], KindCall, true
				return e, true
			}
		}
		if len(s.Chain) > 1 && !(s.Chain[0] >= s.IP && s.Chain[0] < s.IP+prologueLen) {
			if c, ok := callBefore(code, s.PID, s.Chain[1]); ok && c.kind == KindIndCall {
				e.Site, e.Return, e.Kind = c.site, s.Chain[1], KindIndCall
			}
		}
		return e, true
	case IPSkid:
		if len(s.Chain) < 2 {
			return e, false
		}
		c, ok := callBefore(code, s.PID, s.Chain[1])
		if !ok {
			return e, false
		}
		e.Site, e.Return, e.Kind = c.site, s.Chain[1], c.kind
		if c.kind == KindCall {
			e.Callee, e.CalleeEntry = c.target, true
		} else {
			e.Callee = s.Chain[0]
		}
		return e, true
	}
	return e, false
}

// decodedCall is a near call instruction.
type decodedCall struct {
	site   addrspace.Addr
	len    int
	kind   Kind           // KindCall or KindIndCall
	target addrspace.Addr // for KindCall
}

// decodeCall decodes the instruction at addr and returns it if it is a
// near call.
func decodeCall(code CodeReader, pid uint32, addr addrspace.Addr) (decodedCall, bool) {
	if code == nil {
		return decodedCall{}, false
	}
	b, ok := code.Code(pid, addr)
	if !ok {
		return decodedCall{}, false
	}
	inst, err := x86asm.Decode(b, 64)
	if err != nil || inst.Op != x86asm.CALL || inst.Len == 0 || inst.Len > len(b) {
		return decodedCall{}, false
	}
	c := decodedCall{site: addr, len: inst.Len, kind: KindIndCall}
	if rel, ok := inst.Args[0].(x86asm.Rel); ok {
		c.kind, c.target = KindCall, addr+addrspace.Addr(inst.Len)+addrspace.Addr(int64(rel))
	}
	return c, true
}

// callBefore finds the near call instruction that ends at the return
// address ret: a direct CALL rel32 (5 bytes) first, then the shortest
// indirect call of 2 to maxCallLen bytes whose decoded length ends exactly
// at ret (with the REX prefix before it, if any). Bytes before a return
// address can decode as a call by chance; a direct call is checked against
// its target by the callers where they can.
func callBefore(code CodeReader, pid uint32, ret addrspace.Addr) (decodedCall, bool) {
	if c, ok := decodeCall(code, pid, ret-5); ok && c.kind == KindCall && c.len == 5 {
		return c, true
	}
	for n := 2; n <= maxCallLen && addrspace.Addr(n) <= ret; n++ {
		c, ok := decodeCall(code, pid, ret-addrspace.Addr(n))
		if !ok || c.len != n || c.kind != KindIndCall {
			continue
		}
		// A REX prefix right before belongs to the call: 41 FF 54 24 08
		// is call *0x8(%r12), not a byte then call *0x8(%rsp).
		if addrspace.Addr(n) < ret {
			if p, ok := code.Code(pid, ret-addrspace.Addr(n+1)); ok && len(p) > 0 && p[0]&0xf0 == 0x40 {
				if w, ok := decodeCall(code, pid, ret-addrspace.Addr(n+1)); ok && w.len == n+1 && w.kind == KindIndCall {
					return w, true
				}
			}
		}
		return c, true
	}
	return decodedCall{}, false
}
