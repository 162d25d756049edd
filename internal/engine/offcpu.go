package engine

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/hwprof/hwprof/ccmap"
	"github.com/hwprof/hwprof/internal/pipeline"
	"github.com/hwprof/hwprof/offcpu"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/profile"
)

// The address keys of the off-CPU map's made-up frames: no object, a
// process id no address key has (as brokenKey).
var (
	preemptedKey = addrKey{obj: nil, pid: math.MaxUint32 - 1}
	noStackKey   = addrKey{obj: nil, pid: math.MaxUint32 - 2}
)

// offState is the time threads spend off the CPU, from a recording's
// switch records and off-CPU samples (package offcpu), on the folding
// goroutine: the tracker pairs each switch out with the next switch in of
// its thread, and every interval is folded into its own map (fold), its
// stack weighted by its length.
type offState struct {
	tracker *offcpu.Tracker[[]ccmap.Frame] // nil until the first switch record or off-CPU sample
	fold    *pipeline.Folder
	stats   profile.OffCPUStats
	first   uint64 // the first record's time, for threads first seen coming in
	last    uint64 // the last switch record's or sample's time
	frames  []ccmap.Frame
	// attached are the threads of the processes the recording attached
	// to (their synthesized COMM records), by thread id: one that never
	// switched was idle, or busy, the whole recording
	attached map[uint32]uint32
	// cpuWide: a system-wide recording (-a: CPU-wide switch records, or
	// the FORK records synthesized for every thread), which attached to
	// no process: a thread never seen there is no thread it measured
	cpuWide bool
	// stacks holds each thread's stack for the tracker, reused from
	// switch to switch: a thread's stack is taken (folded, or replaced)
	// before its next one, so no switch allocates one
	stacks map[uint32][]ccmap.Frame
}

// offTracker returns the tracker, made at the first use with the
// recording's first time.
func (l *loader) offTracker() *offcpu.Tracker[[]ccmap.Frame] {
	o := &l.off
	if o.tracker == nil {
		start := o.first
		if l.per.timed && l.per.first < start || start == 0 {
			start = l.per.first
		}
		// an attached recording's span starts when its events did
		if f := l.r.Features().SampleTimeFirst; f != 0 && (start == 0 || f < start) {
			start = f
		}
		o.tracker = offcpu.NewTracker[[]ccmap.Frame](start)
		o.fold = pipeline.NewFolder(pipeline.FoldOptions{Workers: l.o.Workers, Seed: l.o.Seed})
		o.stats.Recorded = true
	}
	return o.tracker
}

// seenAt notes the time of a record the off-CPU time is measured by.
func (o *offState) seenAt(t uint64) {
	if o.first == 0 || t < o.first {
		o.first = t
	}
	o.last = max(o.last, t)
}

// switchRecord feeds a switch record to the tracker (on the folding
// goroutine, in reading order) and folds the interval a switch in ends.
func (l *loader) switchRecord(raw []byte) {
	d, err := l.ev.format.Decode(raw)
	if err != nil {
		l.eng.Skips.Records++
		return
	}
	var tr perf.Trailer
	var out, preempted bool
	switch x := d.(type) {
	case *perf.Switch:
		tr, out, preempted = x.Trailer, x.Out(), x.Preempted()
	case *perf.SwitchCPUWide:
		tr, out, preempted = x.Trailer, x.Out(), x.Preempted()
		l.off.cpuWide = true
	default:
		return
	}
	if tr.Present&perf.SampleTID == 0 || tr.Present&perf.SampleTime == 0 || tr.PID == 0 && tr.TID == 0 || deadTask(tr.TID) {
		return // no thread or time to measure by (the idle task's switches, a dead task's)
	}
	l.off.seenAt(tr.Time)
	if iv, ok := l.offTracker().Switch(tr.PID, tr.TID, tr.Time, out, preempted); ok {
		l.foldInterval(iv)
	}
}

// deadTask reports whether a record's thread id is the kernel's -1 for a
// task whose pid is gone (perf_event_tid of a task past exit_notify): its
// last switch out, system-wide, which is no thread's.
func deadTask(tid uint32) bool { return tid == ^uint32(0) }

// offSample hands the tracker the stack of a sample of an off-CPU event:
// the stack its thread is leaving the CPU with.
func (l *loader) offSample(s *perf.Sample, p *prepSample) {
	if deadTask(s.TID) {
		return
	}
	l.off.seenAt(s.Time)
	if p != nil {
		l.countLeaf(p.leaf)
	} else {
		l.repairLeaf(s)
	}
	o := &l.off
	switch {
	case p != nil && p.state == prepUnwound && p.broken:
		o.frames = l.brokenFrames(o.frames[:0])
	case p != nil && p.state == prepUnwound:
		o.frames = l.keyedFrames(o.frames[:0], p.keys)
	default:
		l.frames = l.eng.Frames(l.frames[:0], s)
		if l.brokenStack(l.frames, false) {
			o.frames = l.brokenFrames(o.frames[:0])
		} else {
			o.frames = l.toFrames(o.frames[:0], l.frames, s.PID, false)
		}
	}
	if len(o.frames) == 0 {
		return
	}
	if o.stacks == nil {
		o.stacks = map[uint32][]ccmap.Frame{}
	}
	st := append(o.stacks[s.TID][:0], o.frames...)
	o.stacks[s.TID] = st
	l.offTracker().Stack(s.PID, s.TID, s.Time, st)
}

// offLost counts the records lost from the ring of an event that asks
// for switch records (the read stage): switches the tracker cannot see.
func (l *loader) offLost(x *perf.Lost) {
	if ev, ok := l.r.Format().EventOfID(x.ID); ok && offcpu.HasSwitches(l.r.Format().Attr(ev)) {
		l.off.stats.SwitchesLost += x.Lost
	}
}

// offFork and offExit feed a thread's creation and end to the tracker
// (Apply: no sample in flight).
func (l *loader) offFork(f *perf.Fork) {
	if f.Time == 0 {
		l.off.cpuWide = true // synthesized forks: every thread of the system (-a)
	}
	if l.off.tracker != nil && f.Time != 0 {
		l.off.tracker.Fork(f.PID, f.TID, f.Time)
	}
}

// offComm notes the thread of a synthesized COMM record (no time: what
// /proc said of a process the recording attached to).
func (l *loader) offComm(c *perf.Comm) {
	if c.Trailer.Time != 0 || c.TID == 0 {
		return
	}
	if l.off.attached == nil {
		l.off.attached = map[uint32]uint32{}
	}
	l.off.attached[c.TID] = c.PID
}

func (l *loader) offExit(f *perf.Fork) {
	if l.off.tracker == nil || f.Time == 0 {
		return
	}
	l.off.seenAt(f.Time)
	if iv, ok := l.off.tracker.Exit(f.TID, f.Time); ok {
		l.foldInterval(iv)
	}
	delete(l.off.stacks, f.TID)
}

// foldInterval folds one interval off the CPU: its stack (or
// NoOffCPUStack), ending in Preempted when its thread was runnable,
// weighted by its length; filtered as samples are.
func (l *loader) foldInterval(iv offcpu.Interval[[]ccmap.Frame]) {
	ns := iv.NS()
	if ns == 0 || !l.keep(iv.PID, iv.TID, true) {
		return
	}
	o := &l.off
	st := &o.stats
	st.NS += ns
	st.Intervals++
	switch iv.Cut {
	case offcpu.CutAtStart:
		st.OpenAtStart++
	case offcpu.CutAtEnd:
		st.OpenAtEnd++
	case offcpu.CutAtExit:
		st.EndedByExit++
	}
	o.frames = o.frames[:0]
	if iv.Preempted {
		st.PreemptedNS += ns
		st.Preempted++
		o.frames = append(o.frames, ccmap.Frame{Func: l.addrs.id(preemptedKey)})
	}
	if iv.HasStack {
		o.frames = append(o.frames, iv.Stack...)
		if iv.Preempted && len(o.frames) > 1 {
			o.frames[1].Site = 0 // no call leads to the made-up frame
		}
	} else {
		st.NoStack++
		st.NoStackNS += ns
		if iv.Cut == offcpu.Whole && !iv.New {
			st.StackLost++
		}
		o.frames = append(o.frames, ccmap.Frame{Func: l.addrs.id(noStackKey)})
	}
	o.fold.AddStacks(o.frames, ns, 1)
}

// flushOff closes the intervals still open at the end of the recording
// (on the folding goroutine, after the last batch).
func (l *loader) flushOff() {
	o := &l.off
	if len(o.attached) > 0 && !o.cpuWide && l.switchesAsked() {
		// threads that existed at the start and never switched: idle
		// the whole time, or running (they have samples)
		ran := map[uint32]bool{}
		for k := range l.per.lastPeriod {
			ran[k.tid] = true
		}
		tr := l.offTracker()
		for _, tid := range slices.Sorted(maps.Keys(o.attached)) {
			tr.Idle(o.attached[tid], tid, ran[tid])
		}
	}
	if o.tracker == nil {
		return
	}
	// an attached recording's span ends when its events stopped
	o.tracker.End(max(o.last, l.r.Features().SampleTimeLast), l.foldInterval)
	o.stats.Unmatched = o.tracker.Unmatched
	for _, th := range o.tracker.Threads() {
		if !l.keep(th.PID, th.TID, true) {
			continue
		}
		o.stats.Threads = append(o.stats.Threads, profile.ThreadTime{PID: th.PID, TID: th.TID, Comm: l.procNow(th.PID).comm,
			LifeNS: th.Last - th.First, OnNS: th.OnNS, OffNS: th.OffNS})
	}
}

// switchesAsked reports whether an event of the recording asks for
// switch records.
func (l *loader) switchesAsked() bool {
	f := l.r.Format()
	for ev := range len(l.r.Attrs()) {
		if offcpu.HasSwitches(f.Attr(ev)) {
			return true
		}
	}
	return false
}

// offMap closes the off-CPU folder: the address-level map of the time off
// the CPU, nil when the recording has none.
func (l *loader) offMap() *ccmap.Map {
	if l.off.fold == nil {
		return nil
	}
	m := l.off.fold.Close()
	if l.follow && !l.last { // a fresh map for the next part (Follower)
		l.off.fold = pipeline.NewFolder(pipeline.FoldOptions{Workers: l.o.Workers, Seed: l.o.Seed})
	}
	return m
}

// offWarnings says what the off-CPU time lacks.
func (l *loader) offWarnings() {
	st := &l.off.stats
	if !st.Recorded || st.NS == 0 {
		return
	}
	// Without an off-CPU event (a recording that could not sample the
	// kernel, or perf's --switch-events) no interval has a stack: the
	// report's header says so. With one, a stack missing was lost.
	if st.StackLost > 0 && slices.Contains(l.ev.offcpu, true) {
		l.warn(fmt.Sprintf("%d intervals off the CPU have no stack (their off-CPU samples were lost): they show as %s", st.StackLost, profile.NoOffCPUStack))
	}
	if st.SwitchesLost > 0 {
		l.warn(fmt.Sprintf("%d records were lost from the ring of the switch records: the intervals off the CPU around them are too long or missing", st.SwitchesLost))
	}
	if st.Unmatched > 0 {
		l.warn(fmt.Sprintf("%d off-CPU stacks had no switch record to measure them by (records lost): left out", st.Unmatched))
	}
}

// onCPUTime reports whether every event that gave on-CPU samples is a
// clock (cpu-clock, task-clock): its samples weigh nanoseconds.
func (l *loader) onCPUTime() bool {
	any := false
	for i, used := range l.ev.used {
		if !used || i < len(l.ev.offcpu) && l.ev.offcpu[i] {
			continue
		}
		a := l.ev.format.Attr(i)
		if a.Type != perf.TypeSoftware || a.Config != perf.SWCPUClock && a.Config != perf.SWTaskClock {
			return false
		}
		any = true
	}
	return any
}
