package engine

import (
	"cmp"
	"slices"

	"github.com/hwprof/hwprof/ccmap"
	"github.com/hwprof/hwprof/lbr"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/profile"
	"github.com/hwprof/hwprof/symbolize"
	"golang.org/x/arch/x86/x86asm"

	"github.com/hwprof/hwprof/addrspace"
)

// maxRange is the longest stretch of code between two taken branches
// counted as run straight through: a longer one is not a real range (a
// branch stack spanning an interrupt, or two branches of different
// threads), as AutoFDO also drops them.
const maxRange = 1 << 14

// rangeKey is a stretch of one object's code run from lo to hi, both
// included (hi is the address of the branch that ended it).
type rangeKey struct {
	obj    *addrspace.Object
	lo, hi addrspace.ObjAddr
}

// branchCallKey is a call from site to callee, by their objects and
// addresses in them.
type branchCallKey struct {
	siteObj, calleeObj *addrspace.Object
	site, callee       addrspace.ObjAddr
}

// rangeState counts, for LoadOptions.Instrs, what the tools that read
// LBR for sample-based FDO count of each branch stack: how often each
// stretch of code between two taken branches ran, and each call taken,
// in entries (not weighted by the sample's period), as create_llvm_prof
// and llvm-profgen count them.
type rangeState struct {
	ranges map[rangeKey]uint64
	calls  map[branchCallKey]uint64
	// jumps are the other taken branches between objects' code: those
	// to a function's entry from another function are tail calls
	jumps map[branchCallKey]uint64
	// branches are every taken branch from an object's code (the target
	// object nil when unknown), with their mispredictions; not-taken
	// counts the conditional branches in the ranges, by their addresses
	// and the next instruction's
	branches map[branchCallKey]branchCount
	notTaken map[branchCallKey]uint64
	// after ids: executions of each address id, and calls by their
	// sites' and callees' ids
	execs     map[ccmap.FuncID]uint64
	callIDs   map[[2]ccmap.FuncID]uint64
	jumpIDs   map[[2]ccmap.FuncID]uint64
	callAddr  map[ccmap.FuncID]uint64 // a call site id's address in its object
	branchIDs map[branchID]branchCount
}

// branchCount is how often a branch was taken, and mispredicted.
type branchCount struct{ n, mispreds uint64 }

// branchID is a branch by the address ids of its two ends, and whether it
// is a conditional branch not taken.
type branchID struct {
	from, to    ccmap.FuncID
	fallThrough bool
}

// allBranches says whether event ev's branch stacks hold every taken
// branch (-j any), so that the code between two entries ran straight
// through: a filtered stack (-j any_call) has no ranges.
func (l *loader) allBranches(ev int) bool {
	return ev < len(l.ev.attrs) && l.ev.attrs[ev].Attr.BranchSampleType&perf.BranchAny != 0
}

// countRanges counts s's branch stack: the code between each entry's
// target and the next newer entry's source ran once, and the calls
// among the entries (the decoder's, in l.lbr.calls) were taken once.
func (l *loader) countRanges(s *perf.Sample) {
	if len(s.Branches) == 0 {
		return // l.lbr.calls are another sample's
	}
	r := &l.ranges
	if r.ranges == nil {
		r.ranges, r.calls, r.jumps = map[rangeKey]uint64{}, map[branchCallKey]uint64{}, map[branchCallKey]uint64{}
		r.branches, r.notTaken = map[branchCallKey]branchCount{}, map[branchCallKey]uint64{}
	}
	br := s.Branches // newest first
	for i := 0; i+1 < len(br); i++ {
		lo, hi := br[i+1].To, br[i].From
		if hi < lo || hi-lo > maxRange {
			continue
		}
		m, olo, ok := l.maps.Lookup(s.PID, s.TID, s.Time, addrspace.Addr(lo))
		if !ok || m.Object == nil {
			continue
		}
		m2, ohi, ok := l.maps.Lookup(s.PID, s.TID, s.Time, addrspace.Addr(hi))
		if !ok || m2.Object != m.Object {
			continue
		}
		r.ranges[rangeKey{m.Object, olo, ohi}]++
	}
	for _, c := range l.lbr.calls {
		ms, os, ok1 := l.maps.Lookup(s.PID, s.TID, s.Time, c.Site)
		mc, oc, ok2 := l.maps.Lookup(s.PID, s.TID, s.Time, c.Callee)
		if ok1 && ok2 && ms.Object != nil && mc.Object != nil {
			r.calls[branchCallKey{ms.Object, mc.Object, os, oc}]++
		}
	}
	for _, b := range br {
		ms, os, ok := l.maps.Lookup(s.PID, s.TID, s.Time, addrspace.Addr(b.From))
		if !ok || ms.Object == nil || ms.Object.Kind != addrspace.KindFile {
			continue
		}
		k := branchCallKey{siteObj: ms.Object, site: os, callee: addrspace.ObjAddr(b.To)}
		if mt, ot, ok := l.maps.Lookup(s.PID, s.TID, s.Time, addrspace.Addr(b.To)); ok && mt.Object != nil {
			k.calleeObj, k.callee = mt.Object, ot
		}
		c := r.branches[k]
		c.n++
		if b.Flags.Mispred() {
			c.mispreds++
		}
		r.branches[k] = c
	}
	for i, b := range br {
		if l.isCall(s, i) {
			continue
		}
		ms, os, ok1 := l.maps.Lookup(s.PID, s.TID, s.Time, addrspace.Addr(b.From))
		mc, oc, ok2 := l.maps.Lookup(s.PID, s.TID, s.Time, addrspace.Addr(b.To))
		if ok1 && ok2 && ms.Object != nil && mc.Object != nil && ms.Object.Kind == addrspace.KindFile {
			r.jumps[branchCallKey{ms.Object, mc.Object, os, oc}]++
		}
	}
}

// isCall says whether entry i of s's branch stack is among the calls the
// decoder found in it (l.lbr.calls).
func (l *loader) isCall(s *perf.Sample, i int) bool {
	for _, c := range l.lbr.calls {
		if c.Index == i {
			return true
		}
	}
	return false
}

// rangeIDs spreads the ranges' counts over their instructions (decoded
// from the objects' code) and gives every instruction and call an
// address id, to be symbolized with the others.
func (l *loader) rangeIDs() {
	r := &l.ranges
	r.execs, r.callIDs, r.jumpIDs, r.callAddr = map[ccmap.FuncID]uint64{}, map[[2]ccmap.FuncID]uint64{}, map[[2]ccmap.FuncID]uint64{}, map[ccmap.FuncID]uint64{}
	r.branchIDs = map[branchID]branchCount{}
	for k, n := range r.ranges {
		code, ok := l.code.read(k.obj, k.lo, int(k.hi-k.lo)+lbr.MaxInstLen)
		if !ok {
			continue
		}
		for off := 0; off <= int(k.hi-k.lo) && off < len(code); {
			inst, err := x86asm.Decode(code[off:], 64)
			if err != nil || inst.Len == 0 {
				break
			}
			at := k.lo + addrspace.ObjAddr(off)
			r.execs[l.addrs.id(newAddrKey(k.obj, 0, at))] += n
			if off < int(k.hi-k.lo) && conditional(inst.Op) {
				// Run through before the range's end: not taken.
				r.notTaken[branchCallKey{k.obj, k.obj, at, at + addrspace.ObjAddr(inst.Len)}] += n
			}
			off += inst.Len
		}
	}
	for k, c := range r.branches {
		id := branchID{l.addrs.id(newAddrKey(k.siteObj, 0, k.site)), l.addrs.id(newAddrKey(k.calleeObj, 0, k.callee)), false}
		r.branchIDs[id] = c
	}
	for k, n := range r.notTaken {
		id := branchID{l.addrs.id(newAddrKey(k.siteObj, 0, k.site)), l.addrs.id(newAddrKey(k.calleeObj, 0, k.callee)), true}
		r.branchIDs[id] = branchCount{n: n}
	}
	for k, n := range r.calls {
		site := l.addrs.id(newAddrKey(k.siteObj, 0, k.site))
		r.callIDs[[2]ccmap.FuncID{site, l.addrs.id(newAddrKey(k.calleeObj, 0, k.callee))}] += n
		r.callAddr[site] = uint64(k.site)
	}
	for k, n := range r.jumps {
		site := l.addrs.id(newAddrKey(k.siteObj, 0, k.site))
		r.jumpIDs[[2]ccmap.FuncID{site, l.addrs.id(newAddrKey(k.calleeObj, 0, k.callee))}] += n
		r.callAddr[site] = uint64(k.site)
	}
}

// rangeProfile puts the counts into p (profile.Profile.Executed and
// BranchCalls), in address order.
func (l *loader) rangeProfile(p *profile.Profile, locs []symbolize.Location, fmap []ccmap.FuncID) {
	r := &l.ranges
	for id, n := range r.execs {
		p.Executed = append(p.Executed, profile.Instr{Func: fmap[id], Addr: uint64(l.addrs.keys[id].addr),
			Frames: sourceFrames(locs[id].Frames), Self: n})
	}
	slices.SortFunc(p.Executed, func(a, b profile.Instr) int { return cmp.Or(cmp.Compare(a.Func, b.Func), cmp.Compare(a.Addr, b.Addr)) })
	for k, n := range r.jumpIDs {
		// A jump to a function's entry from another function is a tail
		// call, as AutoFDO counts it: the source has a call there.
		callee := fmap[k[1]]
		if fmap[k[0]] != callee && p.Funcs[callee].Start == uint64(l.addrs.keys[k[1]].addr) && p.Funcs[callee].Start != 0 {
			r.callIDs[k] += n
		}
	}
	for k, n := range r.callIDs {
		p.BranchCalls = append(p.BranchCalls, profile.BranchCall{
			Site:   profile.Instr{Func: fmap[k[0]], Addr: r.callAddr[k[0]], Frames: sourceFrames(locs[k[0]].Frames), Self: n},
			Callee: fmap[k[1]],
		})
	}
	slices.SortFunc(p.BranchCalls, func(a, b profile.BranchCall) int {
		return cmp.Or(cmp.Compare(a.Site.Func, b.Site.Func), cmp.Compare(a.Site.Addr, b.Site.Addr), cmp.Compare(a.Callee, b.Callee))
	})
	for k, c := range r.branchIDs {
		p.Branches = append(p.Branches, profile.Branch{From: fmap[k.from], To: fmap[k.to],
			FromAddr: uint64(l.addrs.keys[k.from].addr), ToAddr: uint64(l.addrs.keys[k.to].addr),
			Count: c.n, Mispreds: c.mispreds, FallThrough: k.fallThrough})
	}
	slices.SortFunc(p.Branches, func(a, b profile.Branch) int {
		return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.FromAddr, b.FromAddr), cmp.Compare(a.To, b.To), cmp.Compare(a.ToAddr, b.ToAddr))
	})
}

// conditional says whether op is a conditional branch: one that, run
// through, was not taken.
func conditional(op x86asm.Op) bool {
	switch op {
	case x86asm.JA, x86asm.JAE, x86asm.JB, x86asm.JBE, x86asm.JCXZ, x86asm.JE, x86asm.JECXZ, x86asm.JG, x86asm.JGE,
		x86asm.JL, x86asm.JLE, x86asm.JNE, x86asm.JNO, x86asm.JNP, x86asm.JNS, x86asm.JO, x86asm.JP, x86asm.JRCXZ,
		x86asm.JS, x86asm.LOOP, x86asm.LOOPE, x86asm.LOOPNE:
		return true
	}
	return false
}
