package engine

import (
	"encoding/binary"
	"math/bits"

	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/profile"
)

// foldExactFast folds an exact hit (a probe sample) that the exact cache
// holds without decoding the record: it reads the IP, thread, time,
// period, callchain and the stack copy's return address where they sit
// (perf.SampleLayout; the fields between the callchain and the stack copy
// are the user registers at most) and does what sample and exact do for
// such a hit. It returns false for every other sample, to be decoded: a
// hit the cache does not hold yet, other events, samples of a layout with
// other fields there, recordings of Go programs (whose morestack hits
// goRestart follows hit by hit), and under test switches that want every
// sample decoded.
func (l *loader) foldExactFast(raw []byte) bool {
	if l.test.noFast || l.test.sampleHook != nil || l.probes.cache == nil {
		return false
	}
	ev, lay, ok := l.rawEvent(raw)
	if !ok || lay.IP < 0 || lay.TID < 0 || lay.Callchain < 0 {
		return false
	}
	if ev >= len(l.ev.srcs) || l.ev.srcs[ev] != profile.Exact || l.isMorestack(ev) || l.probes.morestack ||
		(l.o.Event != "" && l.ev.attrs[ev].Name != l.o.Event) {
		return false
	}
	a := l.ev.format.Attr(ev)
	if a.SampleType&(perf.SampleRaw|perf.SampleBranchStack) != 0 || a.SampleType&perf.SampleStackUser == 0 {
		return false
	}
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
	if a.SampleType&perf.SampleRegsUser != 0 { // abi, then one u64 per mask bit unless the abi is NONE
		abi, ok := u64(off)
		if !ok {
			return false
		}
		off += 8
		if abi != uint64(perf.RegsABINone) {
			off += 8 * bits.OnesCount64(a.SampleRegsUser)
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
	pid := le.Uint32(raw[lay.TID:])
	tid := le.Uint32(raw[lay.TID+4:])
	ip := le.Uint64(raw[lay.IP:])
	key := append(l.probes.key[:0], ip, ra)
	for i := 0; i < len(chain); i += 8 {
		key = append(key, le.Uint64(chain[i:]))
	}
	l.probes.key = key
	c := l.probes.cache
	i := c.find(hashChain(pid, key), pid, key)
	if i < 0 {
		return false
	}
	if !l.keep(pid, tid, true) {
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
	l.notePeriodAt(ev, tid, t, lay.Time >= 0, period)
	l.tally(pid, weight)
	l.foldExact(i, weight)
	if l.test.fastCount != nil {
		*l.test.fastCount++
	}
	return true
}
