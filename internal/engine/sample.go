package engine

import (
	"encoding/binary"

	"github.com/hwprof/hwprof/internal/pipeline"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/profile"
)

// Fold is the fold stage (pipeline.Stages): it folds the records of b in
// their order, as the preparers left them (foldPrepared).
func (l *loader) Fold(b *pipeline.Batch[prepared]) {
	for i, raw := range b.Records {
		var p *prepSample // allocated for the records prepareSlow took
		if i < len(b.Prep.slow) {
			p = &b.Prep.slow[i]
		}
		l.foldPrepared(&b.Prep.fast[i], p, raw)
	}
}

// Flush hands the folder what the fold stage still holds
// (pipeline.Stages): the stack caches' sums and the LBR edges' estimates.
func (l *loader) Flush() {
	l.clearStacks()
	l.flushLBR()
	if !l.follow || l.last { // a Follower's threads go on off the CPU
		l.flushOff()
	}
}

// foldPrepared folds a prepared sample record (on the folding goroutine):
// f and, unless it was left to a fast fold, p are what prepareFast or
// prepareSlow found (p may be nil for one left to a fast fold).
func (l *loader) foldPrepared(f *fastPrep, p *prepSample, raw []byte) {
	l.filter.counted = false // a new record (a fast fold may pass it on to sample)
	switch f.state {
	case prepFast:
		var done bool
		switch {
		case f.fast == fastStack && f.ok:
			done = l.foldFast(raw, int(f.ev), f.lay, f.pid, f.chain(raw), f.hash)
		case f.fast == fastExact && f.ok && l.exactFastOn():
			done = l.foldExactHit(raw, f)
		}
		if done {
			return
		}
		s := &l.decoded
		if err := l.ev.format.DecodeSample(raw, s); err != nil {
			l.eng.Skips.Samples++ // only this goroutine counts samples
			return
		}
		l.sample(s, nil)
	case prepBad:
		l.eng.Skips.Samples++
	case prepOther:
		l.switchRecord(raw)
	case prepDecoded:
		l.sample(&p.s, nil)
	default:
		l.sample(&p.s, p)
	}
}

// event returns the index of s's event, or -1.
func (l *loader) event(s *perf.Sample) int {
	ev := s.Attr
	if ev < 0 && l.ev.format.Len() == 1 {
		ev = 0
	}
	if ev >= l.ev.format.Len() {
		return -1
	}
	return ev
}

// period is s's period: its PERIOD field, or the event's fixed period; 0
// when neither is known (a frequency-mode event without PERIOD).
func (l *loader) period(s *perf.Sample, ev int) uint64 {
	return l.periodOf(ev, s.Has(perf.SamplePeriod), s.Period)
}

// periodOf is the period of a sample of event ev whose PERIOD field, if
// it has one (has), holds v.
func (l *loader) periodOf(ev int, has bool, v uint64) uint64 {
	if has {
		return v
	}
	if ev >= 0 {
		if a := l.ev.format.Attr(ev); a != nil && !a.Freq() {
			return a.SamplePeriod
		}
	}
	return 0
}

// foldFast folds a sample whose stack is in the stack cache without
// decoding it, when its event's samples are stacks alone (timer-like,
// unwound from the frame-pointer callchain: l.ev.fast) and have their
// callchain at a fixed place (perf.SampleLayout): it reads the thread,
// time, period and callchain where they sit and does what sample does
// for them. A preparer found the record's event ev, layout lay, process,
// callchain (fastChain) and its hash h (hashChainBytes). It returns
// false when the cache does not hold the stack, to be decoded.
func (l *loader) foldFast(raw []byte, ev int, lay *perf.SampleLayout, pid uint32, chain []byte, h uint64) bool {
	tid := binary.LittleEndian.Uint32(raw[lay.TID+4:])
	if !l.keep(pid, tid, true) {
		return true // filtered out: done with it
	}
	i := l.stacks.findBytes(h, pid, chain)
	if i < 0 {
		return false
	}
	var v uint64
	if lay.Period >= 0 {
		v = binary.LittleEndian.Uint64(raw[lay.Period:])
	}
	period := l.periodOf(ev, lay.Period >= 0, v)
	var t uint64
	if lay.Time >= 0 {
		t = binary.LittleEndian.Uint64(raw[lay.Time:])
	}
	l.rec.Samples++
	l.ev.used[ev] = true
	l.notePeriodAt(ev, tid, t, lay.Time >= 0, period)
	l.tally(pid, max(period, 1))
	l.foldCached(i, max(period, 1))
	if l.test.fastCount != nil {
		*l.test.fastCount++
	}
	return true
}

// sample folds one sample (on the folding goroutine); p, when not nil,
// is what prepare found of it.
func (l *loader) sample(s *perf.Sample, p *prepSample) {
	if l.test.sampleHook != nil {
		l.hookFrames = nil
		defer func() { l.test.sampleHook(s, l.hookFrames) }()
	}
	ev := l.event(s)
	if ev < 0 || ev >= len(l.ev.srcs) {
		return
	}
	if l.o.Event != "" && l.ev.attrs[ev].Name != l.o.Event {
		return
	}
	if !l.keep(s.PID, s.TID, s.Has(perf.SampleTID)) {
		return
	}
	if ev < len(l.ev.offcpu) && l.ev.offcpu[ev] {
		l.ev.used[ev] = true
		l.offSample(s, p) // a stack, weighted by the time off the CPU that follows
		return
	}
	l.rec.Samples++
	l.ev.used[ev] = true
	period := l.period(s, ev)
	l.notePeriod(s, ev, period)
	weight := max(period, 1)
	l.tally(s.PID, weight)
	switch l.ev.srcs[ev] {
	case profile.Exact:
		if l.goRestart(s, ev) {
			return
		}
		l.exact(s, ev, weight)
	case profile.LBR:
		l.stack(s, ev, weight, p)
		l.branches(s, period)
		if l.o.Instrs && l.allBranches(ev) {
			l.countRanges(s)
		}
	case profile.Calls:
		l.stack(s, ev, weight, p)
		l.callSample(s, ev, weight)
	default:
		l.stack(s, ev, weight, p)
	}
}
