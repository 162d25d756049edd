package engine

import (
	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/ccmap"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/unwind"
)

// frameKey is the address a frame is interned by, and its call site: the
// instruction pointer, or the call instruction of a return address.
func (l *loader) frameKey(f *unwind.Frame, pid uint32) addrKey {
	return frameKey(&l.addrs.retTable, f, pid)
}

// frameKey is the loader's frameKey with the call sites found in rt.
func frameKey(rt *retTable, f *unwind.Frame, pid uint32) addrKey {
	obj := f.Object
	a := f.ObjAddr
	if obj == nil {
		a = addrspace.Unmapped(f.Addr)
	}
	if f.Kind == unwind.FrameReturn {
		if obj == nil {
			return addrKey{obj: nil, addr: max(a, 1) - 1}
		}
		a = rt.callOf(obj, a)
	}
	return newAddrKey(obj, pid, a)
}

// toFrames appends the address-level frames of an unwound stack, innermost
// first; each but the first has the call site leading to the one below.
func (l *loader) toFrames(dst []ccmap.Frame, frames []unwind.Frame, pid uint32, leafSite bool) []ccmap.Frame {
	for i := range frames {
		k := l.frameKey(&frames[i], pid)
		f := ccmap.Frame{Func: l.addrs.id(k)}
		if i > 0 || leafSite {
			f.Site = uint64(k.addr)
		}
		dst = append(dst, f)
	}
	return dst
}

// keyedFrames appends the address-level frames of a stack a preparer
// keyed (prepSample.keys), innermost first, as toFrames does.
func (l *loader) keyedFrames(dst []ccmap.Frame, keys []addrKey) []ccmap.Frame {
	for i, k := range keys {
		f := ccmap.Frame{Func: l.addrs.id(k)}
		if i > 0 {
			f.Site = uint64(k.addr)
		}
		dst = append(dst, f)
	}
	return dst
}

// stack folds s's stack; p, when not nil (prepared: prepStack or
// prepUnwound), holds the leaf repair, the chain's hash or the unwound
// stack's address keys, done by a preparer.
func (l *loader) stack(s *perf.Sample, ev int, weight uint64, p *prepSample) {
	shape := stackWhole
	fp := l.ev.fpOnly[ev] && s.Has(perf.SampleCallchain) && len(s.Callchain) > 0
	if p != nil {
		fp = p.fp
	}
	if fp { // before the leaf repair lengthens the chain
		var cut bool
		var limit uint64
		if p != nil {
			limit = l.maxStack(ev)
			cut = p.real >= limit // as cutStack (the chain is at least as long)
		} else {
			cut, limit = l.cutStack(s, ev)
		}
		if cut {
			shape = stackCut
			l.rec.Stacks.MaxStack = max(l.rec.Stacks.MaxStack, limit)
		}
	}
	if p != nil {
		l.countLeaf(p.leaf) // s.Callchain is the repaired chain
	} else {
		l.repairLeaf(s)
	}
	var h uint64
	if fp {
		if p != nil {
			h = p.hash
		} else {
			h = hashChain(s.PID, s.Callchain)
		}
		if i := l.stacks.find(h, s.PID, s.Callchain); i >= 0 {
			if l.test.sampleHook != nil {
				e := &l.stacks.entries[i]
				l.hookFrames = l.stacks.frames[e.frame:e.frameTo]
			}
			l.foldCached(i, weight)
			return
		}
	}
	if p != nil && p.state == prepUnwound {
		if len(p.frames) == 0 {
			return
		}
		if p.broken {
			shape = stackBroken
			l.cframes = l.brokenFrames(l.cframes[:0])
		} else {
			l.cframes = l.keyedFrames(l.cframes[:0], p.keys)
		}
	} else {
		l.frames = l.eng.Frames(l.frames[:0], s)
		if len(l.frames) == 0 {
			return
		}
		if l.brokenStack(l.frames, shape == stackCut) {
			shape = stackBroken
			l.cframes = l.brokenFrames(l.cframes[:0])
		} else {
			l.cframes = l.toFrames(l.cframes[:0], l.frames, s.PID, false)
		}
	}
	l.hookFrames = l.cframes
	if fp && !l.maps.HasJIT(s.PID) { // a jitdump's code changes with no record to clear the cache
		i := l.stacks.put(h, s.PID, s.Callchain, l.cframes, shape)
		if i < 0 {
			l.clearStacks()
			i = l.stacks.put(h, s.PID, s.Callchain, l.cframes, shape)
		}
		if i >= 0 {
			l.foldCached(i, weight)
			return
		}
	}
	roots := l.cframes
	if !s.Has(perf.SampleCallchain) && !s.Has(perf.SampleStackUser) {
		roots = nil // no call graph recorded: the sampled function alone is no stack to judge (unrooted)
	}
	l.countShape(shape, roots, weight)
	l.fold.AddStacks(l.cframes, weight, 1)
}

// foldCached folds a sample of the stack of cache entry i: its weight is
// summed in the entry (folded at the next clearStacks), or, with
// redundancy skipping, which decides sample by sample, folded now.
func (l *loader) foldCached(i int, weight uint64) {
	e := &l.stacks.entries[i]
	l.countShape(e.shape, l.stacks.frames[e.frame:e.frameTo], weight)
	if l.sumStacks {
		e.pending += weight
		e.count++
		return
	}
	l.fold.AddStacks(l.stacks.frames[e.frame:e.frameTo], weight, 1)
}

// clearStacks folds the stack cache's pending weights and empties it.
func (l *loader) clearStacks() {
	l.stacks.flush(l.fold.AddStacks)
	l.stacks.clear()
	l.lbr.edges.reset()
	if c := l.probes.cache; c != nil {
		c.flush(func(frames []ccmap.Frame, weight, _ uint64) { l.addExact(frames, weight) })
		c.clear()
	}
}
