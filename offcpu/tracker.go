package offcpu

import "slices"

// Interval is one stretch of a thread's life off the CPU.
type Interval[K any] struct {
	PID, TID   uint32
	Start, End uint64 // perf clock, nanoseconds
	// Preempted: the thread was switched out while still runnable (an
	// involuntary switch); otherwise it blocked, or its state is unknown
	// (Cut says where).
	Preempted bool
	// Stack is the key of the stack the thread left the CPU with (the
	// off-CPU event's sample at the switch out), valid when HasStack.
	Stack    K
	HasStack bool
	Cut      Cut
}

// NS is the interval's length in nanoseconds.
func (iv Interval[K]) NS() uint64 {
	if iv.End < iv.Start {
		return 0
	}
	return iv.End - iv.Start
}

// Cut says where an interval was not seen whole.
type Cut uint8

const (
	// Whole: a switch out and the switch in after it.
	Whole Cut = iota
	// CutAtStart: the thread was off the CPU when the recording first saw
	// it (its first record is a switch in); the interval starts at the
	// recording's start (or the thread's creation) and has no stack.
	CutAtStart
	// CutAtEnd: the recording ended while the thread was off the CPU; the
	// interval ends at the recording's end.
	CutAtEnd
	// CutAtExit: the thread exited without running again (it was switched
	// out for the last time); the interval ends at its exit.
	CutAtExit
)

var cutNames = [...]string{"whole", "open at the start", "open at the end", "ended by exit"}

func (c Cut) String() string {
	if int(c) < len(cutNames) {
		return cutNames[c]
	}
	return "cut?"
}

// Tracker turns switch records and off-CPU samples, fed in time order,
// into intervals. The zero value is not ready: use NewTracker.
type Tracker[K any] struct {
	start   uint64 // the recording's first time, for CutAtStart
	threads map[uint32]*thread[K]
	// Unmatched counts off-CPU samples no switch out took (a lost switch
	// record, or a sample whose thread the recording never switched out).
	Unmatched uint64
}

type thread[K any] struct {
	pid       uint32
	off       bool   // switched out and not in again
	since     uint64 // off: when it went out; on: when it came in (0: not seen)
	preempted bool
	// the off-CPU event's stack, taken at (or just before) the switch out
	stack    K
	hasStack bool
	stackAt  uint64
	pending  bool // stack is waiting for its switch out
}

// NewTracker returns a tracker for a recording whose first record is at
// start (perf clock).
func NewTracker[K any](start uint64) *Tracker[K] {
	return &Tracker[K]{start: start, threads: map[uint32]*thread[K]{}}
}

func (t *Tracker[K]) thread(pid, tid uint32) *thread[K] {
	th := t.threads[tid]
	if th == nil {
		th = &thread[K]{pid: pid}
		t.threads[tid] = th
	}
	return th
}

// Stack feeds the off-CPU event's sample of a thread: the stack it is
// leaving the CPU with. The kernel samples it just before the switch-out
// record; a stack that arrives once the thread is already out (records
// reordered by equal times) goes to that interval.
func (t *Tracker[K]) Stack(pid, tid uint32, time uint64, key K) {
	th := t.thread(pid, tid)
	if th.pending {
		t.Unmatched++ // the previous one's switch out never came
	}
	if th.off && !th.hasStack {
		th.stack, th.hasStack, th.stackAt = key, true, time
		return
	}
	th.stack, th.hasStack, th.stackAt, th.pending = key, true, time, true
}

// Switch feeds a switch record of a thread (out, or in) and returns the
// interval a switch in ends.
func (t *Tracker[K]) Switch(pid, tid uint32, time uint64, out, preempted bool) (Interval[K], bool) {
	th := t.thread(pid, tid)
	if out {
		if th.off {
			// two outs in a row: the in between was lost; keep the first
			return Interval[K]{}, false
		}
		th.off, th.since, th.preempted = true, time, preempted
		if !th.pending {
			var zero K
			th.stack, th.hasStack = zero, false
		}
		th.pending = false
		return Interval[K]{}, false
	}
	if !th.off {
		if th.since == 0 {
			// first sight of the thread, coming in: it was off since the
			// recording started
			th.since = time
			if time > t.start {
				return Interval[K]{PID: pid, TID: tid, Start: t.start, End: time, Cut: CutAtStart}, true
			}
		}
		th.since = time
		return Interval[K]{}, false
	}
	iv := t.close(tid, th, time, Whole)
	th.since = time
	return iv, true
}

// close ends a thread's interval at end.
func (t *Tracker[K]) close(tid uint32, th *thread[K], end uint64, cut Cut) Interval[K] {
	iv := Interval[K]{PID: th.pid, TID: tid, Start: th.since, End: end, Preempted: th.preempted,
		Stack: th.stack, HasStack: th.hasStack, Cut: cut}
	var zero K
	th.off, th.preempted, th.stack, th.hasStack, th.pending = false, false, zero, false, false
	return iv
}

// Exit ends a thread: an interval it was still off the CPU in ends at its
// exit (CutAtExit).
func (t *Tracker[K]) Exit(tid uint32, time uint64) (Interval[K], bool) {
	th := t.threads[tid]
	if th == nil {
		return Interval[K]{}, false
	}
	delete(t.threads, tid)
	if th.pending {
		t.Unmatched++
	}
	if !th.off {
		return Interval[K]{}, false
	}
	return t.close(tid, th, time, CutAtExit), true
}

// End closes the intervals of every thread still off the CPU at the end
// of the recording (CutAtEnd), in thread order, and calls fn with each.
func (t *Tracker[K]) End(time uint64, fn func(Interval[K])) {
	tids := make([]uint32, 0, len(t.threads))
	for tid := range t.threads {
		tids = append(tids, tid)
	}
	slices.Sort(tids)
	for _, tid := range tids {
		th := t.threads[tid]
		if th.pending {
			t.Unmatched++
		}
		if th.off && time >= th.since {
			fn(t.close(tid, th, time, CutAtEnd))
		}
	}
	clear(t.threads)
}
