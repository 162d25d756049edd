package engine

import (
	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/ccmap"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/unwind"
)

// exactState is the folding of probe hits: hits without a return
// address, and for Go programs each thread's last probe event and the
// hits whose next one is a restart after stack growth (goRestart).
type exactState struct {
	noRetAddr  uint64
	notCall    uint64 // hits whose return address follows no call
	lastExact  map[uint32]exactHit
	restart    map[exactHit]int
	goRestarts uint64
	// cache holds the folded form of recent hits (see exactCached)
	cache   *stackCache
	key     []uint64 // buffer: a hit's cache key
	lastHit int      // the cache entry foldExactHit found last (findHit)
}

// goRestart reports whether an exact hit is a Go function restarting
// rather than being called: when a goroutine's stack must grow (or it is
// asked to yield), the function's prologue calls runtime.morestack_noctxt,
// which copies the stack and jumps back to the function's entry, so its
// entry probe fires twice for one call, with the same return address, and
// possibly on another thread when the goroutine was rescheduled. A hit of
// morestack (probed: its event is named after it) right after a function's
// entry on the same thread marks that (function entry, return address) as
// due for one restart; the next such hit, on any thread, is not counted. (If
// another goroutine calls the function from the same return address
// meanwhile, the one skipped is that call: the edge's count is the same.)
// Without a probe on morestack the restarts count as calls.
func (l *loader) goRestart(s *perf.Sample, ev int) bool {
	if !l.ev.morestack {
		return false // no event probes morestack: nothing restarts
	}
	if l.probes.lastExact == nil {
		l.probes.lastExact, l.probes.restart = map[uint32]exactHit{}, map[exactHit]int{}
	}
	ra, _ := unwind.EntryReturnAddress(s)
	hit := exactHit{s.IP, ra}
	prev, hadPrev := l.probes.lastExact[s.TID]
	l.probes.lastExact[s.TID] = hit
	if ev < len(l.ev.isMore) && l.ev.isMore[ev] {
		if hadPrev {
			l.probes.restart[prev]++
		}
		return false
	}
	if n := l.probes.restart[hit]; n > 0 {
		if n == 1 {
			delete(l.probes.restart, hit)
		} else {
			l.probes.restart[hit] = n - 1
		}
		l.probes.goRestarts++
		return true
	}
	return false
}

// exactHit is a probe hit as goRestart matches them: the IP (the
// function's entry: one event may probe many functions, see uprobe.Define)
// and the return address.
type exactHit struct {
	ip uint64
	ra uint64
}

// exact folds one uprobe hit: a call of the function at the IP from the
// call instruction before the return address on top of the user stack.
func (l *loader) exact(s *perf.Sample, ev int, weight uint64) {
	ra, ok := unwind.EntryReturnAddress(s)
	if !ok {
		l.probes.noRetAddr++
		return
	}
	if l.probes.cache == nil {
		l.probes.cache = newStackCache()
	}
	c := l.probes.cache
	// The key: the callee's entry, the return address and the callchain.
	key := append(l.probes.key[:0], s.IP, ra)
	if s.Has(perf.SampleCallchain) {
		key = append(key, s.Callchain...)
	}
	l.probes.key = key
	h := hashChain(s.PID, key)
	if i := c.find(h, s.PID, key); i >= 0 {
		l.foldExact(i, weight)
		return
	}
	if !l.exactSlow(s, ra) {
		return
	}
	// l.cframes is the context (the caller first) and the callee after
	// it; the context lacks its outer frames when the callchain reached
	// the depth limit (--max-stack)
	shape := stackWhole
	if s.Has(perf.SampleCallchain) {
		if cut, limit := l.cutStack(s, ev); cut {
			shape = stackCut
			l.rec.Stacks.MaxStack = max(l.rec.Stacks.MaxStack, limit)
		}
	}
	i := c.put(h, s.PID, key, l.cframes, shape)
	if i < 0 {
		l.clearStacks()
		i = c.put(h, s.PID, key, l.cframes, shape)
	}
	if i >= 0 {
		l.foldExact(i, weight)
		return
	}
	l.countShape(shape, nil, weight) // exact contexts are not judged for roots (unrooted)
	l.addExact(l.cframes, weight)
}

// foldExact folds a hit of the exact cache's entry i: its weight is summed
// in the entry (folded at the next clearStacks), or, with redundancy
// skipping, folded now.
func (l *loader) foldExact(i int, weight uint64) {
	c := l.probes.cache
	e := &c.entries[i]
	l.countShape(e.shape, nil, weight)
	if l.sumStacks {
		e.pending += weight
		e.count++
		return
	}
	l.addExact(c.frames[e.frame:e.frameTo], weight)
}

// addExact folds weight calls of a hit in its cached form: the context
// (the caller, whose Site is the call site, then its callers) and last
// the callee.
func (l *loader) addExact(frames []ccmap.Frame, weight uint64) {
	n := len(frames) - 1
	ctx := frames[:n]
	site := ccmap.CallSite{Caller: ctx[0].Func, Addr: ctx[0].Site}
	l.fold.AddEdge(ctx, site, frames[n].Func, weight)
}

// exactSlow derives the call of a probe hit with return address ra: it
// leaves in l.cframes the context (the caller first, its Site the call
// site) followed by the callee, and reports whether the hit is a call.
func (l *loader) exactSlow(s *perf.Sample, ra uint64) bool {
	all := unwind.AppendCallchain(l.frames[:0], s, l.maps)
	user := all[:0]
	for _, f := range all {
		if !f.Kernel {
			user = append(user, f)
		}
	}
	if len(user) == 0 {
		user = l.eng.IPFrame(user, s)
	}
	if len(user) == 0 {
		l.probes.noRetAddr++
		return false
	}
	l.frames = all
	callee := l.addrs.id(l.frameKey(&user[0], s.PID))
	caller := unwind.Frame{Addr: addrspace.Addr(ra), Kind: unwind.FrameReturn}
	if m, oa, ok := l.maps.Lookup(s.PID, s.TID, s.Time, addrspace.Addr(ra)); ok && m.Object != nil {
		caller.Object, caller.ObjAddr = m.Object, oa
	}
	if c := l.addrs.checkReturn(caller.Object, caller.ObjAddr); c == retNotCall || c == retNotCode {
		// not a call: nothing returns there (argc at _start's entry, a
		// goroutine's made-up goexit+1)
		l.probes.notCall++
		return false
	}
	ck := l.frameKey(&caller, s.PID)
	site := ccmap.CallSite{Caller: l.addrs.id(ck), Addr: uint64(ck.addr)}
	// The frame-pointer chain at a function's entry skips the caller (the
	// callee has not pushed its frame yet), unless the kernel put the
	// return address in itself (Linux 6.12+ does for uprobes at function
	// entry): the context is the caller, then its callers.
	above := user[1:]
	if len(above) > 0 && above[0].Addr == caller.Addr {
		above = above[1:]
	}
	l.cframes = append(l.cframes[:0], ccmap.Frame{Func: site.Caller, Site: site.Addr})
	l.cframes = l.toFrames(l.cframes, above, s.PID, true)
	l.cframes = append(l.cframes, ccmap.Frame{Func: callee})
	return true
}
