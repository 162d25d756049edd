package engine

import (
	"encoding/binary"

	"github.com/hwprof/hwprof/perf"
)

// exactFastOn reports whether foldExactHit may fold anything: not under
// the test switches that want every sample decoded, and once the exact
// cache exists.
func (l *loader) exactFastOn() bool {
	return !l.test.noFast && l.test.sampleHook == nil && l.probes.cache != nil
}

// exactFields sets f to what foldExactHit needs of the sample record raw
// of event ev (layout lay), a hit of an exact event: its fields (f.ok) or
// that it may not fold it (not ok: another event than LoadOptions.Event,
// other fields between the callchain and the stack copy, a short record).
// It depends on the record and the event table alone (a preparer runs
// it). It stores each field of f once: no zeroing first, no struct
// built elsewhere and copied (wide loads of narrow stores stall).
func (l *loader) exactFields(f *fastPrep, raw []byte, ev int, lay *perf.SampleLayout) {
	f.lay, f.ev, f.state, f.fast = lay, int32(ev), prepFast, fastExact
	f.ok = l.exactHitFields(f, raw, ev, lay)
}

// exactHitFields sets the fields of f that exactFields reads, false when
// it may not fold the record (f's other fields are then left as they
// were).
func (l *loader) exactHitFields(f *fastPrep, raw []byte, ev int, lay *perf.SampleLayout) bool {
	if lay.IP < 0 || lay.TID < 0 || lay.Callchain < 0 {
		return false
	}
	if ev >= len(l.ev.exact) || !l.ev.exact[ev].ok {
		return false
	}
	xe := &l.ev.exact[ev]
	le := binary.LittleEndian
	u64 := func(off int) (uint64, bool) {
		if off < 0 || off+8 > len(raw) {
			return 0, false
		}
		return le.Uint64(raw[off:]), true
	}
	n, ok := u64(lay.Callchain)
	if !ok || n > uint64(len(raw)-lay.Callchain-8)/8 {
		return false
	}
	chain := raw[lay.Callchain+8 : lay.Callchain+8+8*int(n)]
	off := lay.Callchain + 8 + 8*int(n)
	if xe.regs { // abi, then one u64 per mask bit unless the abi is NONE
		abi, ok := u64(off)
		if !ok {
			return false
		}
		off += 8
		if abi != uint64(perf.RegsABINone) {
			off += 8 * xe.regWords
		}
	}
	size, ok := u64(off) // stack_user: size, data, dyn_size
	if !ok || size < 8 || size > uint64(len(raw)) {
		return false
	}
	ra, _ := u64(off + 8)
	dyn, ok := u64(off + 8 + int(size))
	if !ok || dyn < 8 {
		return false
	}
	pid, ip := le.Uint32(raw[lay.TID:]), le.Uint64(raw[lay.IP:])
	// hashChain of the key foldExactHit builds
	h := mixChain(mixChain(chainSeed(pid), ip), ra)
	for i := 0; i < len(chain); i += 8 {
		h = mixChain(h, le.Uint64(chain[i:]))
	}
	f.pid, f.tid, f.ip, f.ra, f.hash = pid, le.Uint32(raw[lay.TID+4:]), ip, ra, h
	f.chainOff, f.chainEnd = uint32(lay.Callchain+8), uint32(lay.Callchain+8+len(chain))
	return true
}

// foldExactHit folds an exact hit (a probe sample) that the exact cache
// holds without decoding the record: from the IP, thread, callchain and
// the stack copy's return address that exactFields read where they sit
// (perf.SampleLayout; the fields between the callchain and the stack copy
// are the user registers at most) on a preparer (x, ok), and the time
// and period it reads, it does what sample and exact do for such a hit. It
// returns false for every other sample, to be decoded: a hit the cache
// does not hold yet, and recordings of Go programs (whose morestack hits
// goRestart follows hit by hit). The caller checks exactFastOn first.
func (l *loader) foldExactHit(raw []byte, x *fastPrep) bool {
	ev, lay := int(x.ev), x.lay
	if l.ev.morestack {
		return false
	}
	le := binary.LittleEndian
	i := l.findHit(x, x.chain(raw))
	if i < 0 {
		return false
	}
	if !l.keep(x.pid, x.tid, true) {
		return true // filtered out: done with it
	}
	var v, t uint64
	if lay.Period >= 0 {
		v = le.Uint64(raw[lay.Period:])
	}
	if lay.Time >= 0 {
		t = le.Uint64(raw[lay.Time:])
	}
	period := l.periodOf(ev, lay.Period >= 0, v)
	weight := max(period, 1)
	l.rec.Samples++
	l.ev.used[ev] = true
	l.notePeriodAt(ev, x.tid, t, lay.Time >= 0, period)
	l.tally(x.pid, weight)
	l.foldExact(i, weight)
	if l.test.fastCount != nil {
		*l.test.fastCount++
	}
	return true
}

// findHit returns the exact cache's entry of the hit x (callchain chain,
// as it sits in the record), or -1: the entry of the last hit found when
// it is the same (a hot call repeats its hit), else the cache's. It
// compares the key exact keeps, (ip, ra, callchain...), with the record's
// fields where they are, building none.
func (l *loader) findHit(x *fastPrep, chain []byte) int {
	c := l.probes.cache
	same := func(e *stackEntry) bool {
		k := c.raw[e.raw:e.rawEnd]
		return len(k) >= 2 && k[0] == x.ip && k[1] == x.ra && equalChainBytes(k[2:], chain)
	}
	// the entry index may be stale (the cache was cleared since): the
	// comparison of the whole key decides
	if i := l.probes.lastHit; i < len(c.entries) {
		if e := &c.entries[i]; e.hash == x.hash && e.pid == x.pid && same(e) {
			return i
		}
	}
	i := c.lookup(x.hash, x.pid, same)
	if i >= 0 {
		l.probes.lastHit = i
	}
	return i
}
