package unwind

import (
	"strconv"

	"github.com/go-delve/delve/pkg/dwarf/regnum"

	"github.com/hwprof/hwprof/perf"
)

// Leaf frames. The kernel's frame-pointer callchain starts at the sampled
// IP and then follows rbp. Where the running function has not set up its
// frame — a leaf compiled without one (gcc 12 at -O2 drops it even with
// -mno-omit-leaf-frame-pointer), a prologue before `mov %rsp,%rbp`, an
// epilogue after `pop %rbp`, a PLT stub, a libc routine without frame
// pointers — rbp is still the caller's frame, so the chain's second entry
// is the caller's return address, not the running function's: a sample
// in D called by C called by B reads D ← B, losing C and inventing B → D.
//
// RepairCallchain puts the lost caller back from what every hwprof sample
// of a frame-pointer call graph also carries (source.AddLeafCopy): the user IP, SP and BP (PERF_SAMPLE_REGS_USER)
// and a small copy of the top of the user stack (PERF_SAMPLE_STACK_USER).
// It applies the object's CFI at the IP to find the return address (the
// CFA rule and the return-address rule of that PC, as DWARF unwinding does
// for every frame) and compares it with the chain's second user entry:
// equal, the frame was set up and the chain is right; different, the chain
// skipped the real caller, which is inserted. A routine without frame
// pointers may itself be called by another (a lock wait in libc, two calls
// below the program's pthread_mutex_lock call): the repair goes on up the
// CFI while the frames keep none, within the stack copy, and inserts every
// caller up to the first frame the kernel's walk reached: the one whose
// return address is the chain's second entry, or the one that set up its
// frame pointer (an rbp-based CFA with rbp unchanged since the sample,
// where the kernel's walk started). When it finds neither it inserts the
// first caller alone. The frames above come from the frame pointers as
// before.

// LeafRepair says what RepairCallchain found for a sample.
type LeafRepair uint8

const (
	// LeafNotChecked: the sample has no user registers, no stack copy or
	// no user part in its callchain, or its user IP is not the chain's
	// first user entry; the chain is as the kernel wrote it.
	LeafNotChecked LeafRepair = iota
	// LeafIntact: the CFI's return address is the chain's second user
	// entry (or the CFA is rbp-based, the frame is set up, or the CFI
	// marks the outermost frame): nothing was missing.
	LeafIntact
	// LeafInserted: the chain skipped the running function's caller; its
	// return address was inserted after the IP.
	LeafInserted
	// LeafUnknown: the CFI could not tell: the IP is in no mapping or no
	// FDE, the object is unreadable, or the return address lies beyond
	// the stack copy. The chain is left as it was.
	LeafUnknown
)

var leafNames = [...]string{"not checked", "intact", "caller inserted", "unknown"}

func (r LeafRepair) String() string {
	if int(r) < len(leafNames) {
		return leafNames[r]
	}
	return "leaf(" + strconv.Itoa(int(r)) + ")"
}

// RepairCallchain returns s's callchain with the caller of the first user
// frame restored where the frame pointers skipped it (see above), and what
// it found. When nothing changes it returns s.Callchain itself; otherwise
// the repaired chain is appended to dst[:0]. It does not modify s.
func (u *Unwinder) RepairCallchain(dst []uint64, s *perf.Sample, maps Maps) ([]uint64, LeafRepair) {
	chain := s.Callchain
	if !s.Has(perf.SampleCallchain) || !hasStackCopy(s) {
		return chain, LeafNotChecked
	}
	at := userStart(chain) // index of the first user entry (the IP)
	if at < 0 {
		return chain, LeafNotChecked
	}
	ip, okIP := s.RegsUser.Get(perf.RegIP)
	sp, okSP := s.RegsUser.Get(perf.RegSP)
	if !okIP || !okSP || ip != chain[at] {
		return chain, LeafNotChecked
	}
	var want uint64
	haveWant := at+1 < len(chain)
	if haveWant {
		want = chain[at+1]
	}
	var ras [maxLeafCallers]uint64
	n, r := u.leafCallers(ras[:], s, maps, ip, sp, want, haveWant)
	if n == 0 {
		return chain, r
	}
	dst = append(dst[:0], chain[:at+1]...)
	dst = append(dst, ras[:n]...)
	return append(dst, chain[at+1:]...), LeafInserted
}

// maxLeafCallers bounds the callers the repair inserts into one chain:
// routines without frame pointers calling each other (a libc wrapper
// calling its internal routine) are a few deep.
const maxLeafCallers = 8

// userStart returns the index of the first user entry of a raw callchain:
// the one after PERF_CONTEXT_USER, or 0 for a chain without markers; -1
// when the chain has no user entry.
func userStart(chain []uint64) int {
	for i, v := range chain {
		if v == perf.ContextUser {
			if i+1 < len(chain) && !perf.IsCallchainContext(chain[i+1]) {
				return i + 1
			}
			return -1
		}
	}
	if len(chain) > 0 && !perf.IsCallchainContext(chain[0]) {
		return 0
	}
	return -1
}

// hasUserChain reports whether a sample's callchain holds user frames (it
// was not recorded with exclude_callchain_user, as --call-graph dwarf is).
func hasUserChain(s *perf.Sample) bool {
	return s.Has(perf.SampleCallchain) && userStart(s.Callchain) >= 0
}

// leafCallers writes to out the return addresses the kernel's chain
// skipped (see above) and says LeafInserted with their number; 0 with
// LeafIntact when the chain was right (the frame at ip is set up, is
// outermost, or returns to want, the chain's second user entry, when
// haveWant), or with LeafUnknown when the CFI cannot tell.
func (u *Unwinder) leafCallers(out []uint64, s *perf.Sample, maps Maps, ip, sp, want uint64, haveWant bool) (int, LeafRepair) {
	fs := lookup(nil, maps, s, ip, FrameIP, false)
	if fs[0].Object == nil {
		return 0, LeafUnknown
	}
	rw, _ := u.rowFor(&fs[0], nil)
	if rw == nil {
		return 0, LeafUnknown
	}
	if setUp(rw) {
		return 0, LeafIntact
	}
	var r regs
	for _, m := range perfToDWARF {
		if v, ok := s.RegsUser.Get(m.perf); ok {
			r.v[m.dwarf], r.known[m.dwarf] = v, true
		}
	}
	bp, okBP := s.RegsUser.Get(perf.RegBP)
	st := stack{sp0: sp, data: s.StackUser.Valid()}
	n := 0
	for n < len(out) {
		next, stop := step(&r, rw, &st)
		if stop != nil {
			if n == 0 {
				if *stop == StopOutermost || *stop == StopZeroReturn {
					return 0, LeafIntact
				}
				return 0, LeafUnknown
			}
			break
		}
		ra := next.v[regnum.AMD64_Rip]
		if haveWant && ra == want {
			if n == 0 {
				return 0, LeafIntact
			}
			return n, LeafInserted
		}
		out[n] = ra
		n++
		if next.v[regnum.AMD64_Rsp] <= r.v[regnum.AMD64_Rsp] {
			break
		}
		r = next
		fs = lookup(fs[:0], maps, s, ra, FrameReturn, false)
		if fs[0].Object == nil {
			break
		}
		if rw, _ = u.rowFor(&fs[0], nil); rw == nil {
			break
		}
		if setUp(rw) {
			// the kernel's walk starts at this frame when rbp is the
			// sampled one: the callers found so far are all it skipped
			if okBP && r.known[regnum.AMD64_Rbp] && r.v[regnum.AMD64_Rbp] == bp {
				return n, LeafInserted
			}
			break
		}
	}
	// neither the chain's next entry nor a frame set up: the first caller
	// alone is sure to be missing (the frame pointers cannot have given it)
	return 1, LeafInserted
}

// setUp reports whether a CFI row says its frame is set up: the CFA is
// rbp-based, so rbp is the frame's pointer and the kernel's walk read the
// same return address the CFI gives.
func setUp(rw *row) bool {
	return rw.cfa.kind == ruleCFA && rw.cfa.reg == regnum.AMD64_Rbp
}
