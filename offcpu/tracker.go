package offcpu

import (
	"maps"
	"slices"
)

// Interval is one stretch of a thread's life off the CPU.
type Interval[K any] struct {
	PID, TID   uint32
	Start, End uint64 // perf clock, nanoseconds
	// Preempted: the thread was switched out while still runnable (an
	// involuntary switch), or was new and waiting for its first turn;
	// otherwise it blocked, or its state is unknown (Cut says where).
	Preempted bool
	// Stack is the key of the stack the thread left the CPU with (the
	// off-CPU event's sample at the switch out), valid when HasStack.
	Stack    K
	HasStack bool
	Cut      Cut
	// New: the wait of a new thread for its first turn on a CPU (from
	// its creation), which has no stack.
	New bool
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
	// Whole: a switch out (or the thread's creation) and the switch in
	// after it.
	Whole Cut = iota
	// CutAtStart: the thread was off the CPU when the recording first saw
	// it (its first record is a switch in); the interval starts at the
	// recording's start and has no stack.
	CutAtStart
	// CutAtEnd: the recording ended while the thread was off the CPU; the
	// interval ends at the recording's end.
	CutAtEnd
	// CutAtExit: the thread exited without running again; the interval
	// ends at its exit.
	CutAtExit
)

var cutNames = [...]string{"whole", "open at the start", "open at the end", "ended by exit"}

func (c Cut) String() string {
	if int(c) < len(cutNames) {
		return cutNames[c]
	}
	return "cut?"
}

// Thread is what a Tracker saw of one thread's life: from its creation
// (or the recording's start, for a thread that existed then) to its exit
// (or the recording's end), its time on the CPU (switch in to switch out)
// and off it (the intervals).
type Thread struct {
	PID, TID    uint32
	First, Last uint64 // perf clock, nanoseconds
	OnNS, OffNS uint64
	Intervals   uint64
}

// Tracker turns switch records, off-CPU samples and the threads' births
// and deaths, fed in time order, into intervals, and keeps each thread's
// time on and off the CPU. The zero value is not ready: use NewTracker.
type Tracker[K any] struct {
	start   uint64 // the recording's first time
	threads map[uint32]*thread[K]
	done    []Thread // threads that exited
	// exited are the thread ids whose exit was seen and that no FORK gave
	// a new thread since: system-wide (-a) the kernel writes a task's EXIT
	// record early in do_exit and goes on switching it (a wait in the exit
	// path, then the last switch out in do_task_dead), which would start
	// an interval of a dead thread that lasts to the End
	exited map[uint32]bool
	// Unmatched counts off-CPU samples no switch out took (a lost switch
	// record, or a sample whose thread never switched out after it).
	Unmatched uint64
}

type thread[K any] struct {
	life  Thread
	off   bool   // switched out (or new) and not in again
	since uint64 // when the current stretch (on or off) began
	known bool   // since is known: the thread's state has been seen
	// the current interval off the CPU
	preempted bool
	new       bool // the wait for the first turn
	stack     K
	hasStack  bool
	// a stack sampled for the next switch out (the kernel samples it
	// just before the switch-out record)
	pending bool
}

// NewTracker returns a tracker for a recording whose first record is at
// start (perf clock).
func NewTracker[K any](start uint64) *Tracker[K] {
	return &Tracker[K]{start: start, threads: map[uint32]*thread[K]{}}
}

// thread returns a thread's state, making it (existing since the
// recording's start) on first sight; nil for a thread that exited and
// whose tid no new thread took since: what comes of it now is its last
// switches (see exited).
func (t *Tracker[K]) thread(pid, tid uint32) *thread[K] {
	th := t.threads[tid]
	if th == nil {
		if t.exited[tid] {
			return nil
		}
		th = &thread[K]{life: Thread{PID: pid, TID: tid, First: t.start, Last: t.start}, since: t.start}
		t.threads[tid] = th
	}
	return th
}

// Fork feeds the creation of a thread: it waits, runnable, for its first
// turn on a CPU.
func (t *Tracker[K]) Fork(pid, tid uint32, time uint64) {
	delete(t.exited, tid) // the tid is a new thread's
	th := &thread[K]{life: Thread{PID: pid, TID: tid, First: time, Last: time}, since: time, known: true, off: true, preempted: true, new: true}
	t.threads[tid] = th
}

// Stack feeds the off-CPU event's sample of a thread: the stack it is
// leaving the CPU with. A stack that arrives once the thread is already
// out (records of equal times) goes to that interval.
func (t *Tracker[K]) Stack(pid, tid uint32, time uint64, key K) {
	th := t.thread(pid, tid)
	if th == nil {
		return // the stack of its last switch out, in do_task_dead
	}
	if th.pending {
		t.Unmatched++ // the previous one's switch out never came
	}
	th.stack, th.hasStack = key, true
	th.pending = !th.off || !th.known
}

// Switch feeds a switch record of a thread (out, or in) and returns the
// interval a switch in ends.
func (t *Tracker[K]) Switch(pid, tid uint32, time uint64, out, preempted bool) (Interval[K], bool) {
	th := t.thread(pid, tid)
	if th == nil {
		return Interval[K]{}, false // a dead thread's
	}
	th.life.Last = max(th.life.Last, time)
	if out {
		if th.off && th.known {
			return Interval[K]{}, false // two outs in a row: the in between was lost; keep the first
		}
		// on the CPU until now (since the start, when first seen)
		th.life.OnNS += time - min(th.since, time)
		th.off, th.known, th.since, th.preempted = true, true, time, preempted
		if !th.pending {
			var zero K
			th.stack, th.hasStack = zero, false
		}
		th.pending = false
		return Interval[K]{}, false
	}
	if th.known && !th.off {
		th.since = time // two ins in a row: the out between was lost
		return Interval[K]{}, false
	}
	cut := Whole
	if !th.known {
		cut = CutAtStart // off the CPU since the start, why unknown
		var zero K
		th.stack, th.hasStack, th.pending = zero, false, false
	}
	iv := t.close(tid, th, time, cut)
	th.off, th.known, th.since = false, true, time
	return iv, true
}

// close returns a thread's current interval ended at end, and counts it.
func (t *Tracker[K]) close(tid uint32, th *thread[K], end uint64, cut Cut) Interval[K] {
	iv := Interval[K]{PID: th.life.PID, TID: tid, Start: min(th.since, end), End: end, Preempted: th.preempted,
		Stack: th.stack, HasStack: th.hasStack, Cut: cut, New: th.new}
	var zero K
	th.preempted, th.stack, th.hasStack, th.new = false, zero, false, false
	th.life.OffNS += iv.NS()
	th.life.Intervals++
	th.life.Last = max(th.life.Last, end)
	return iv
}

// Exit ends a thread: an interval it was still off the CPU in ends at its
// exit (CutAtExit).
func (t *Tracker[K]) Exit(tid uint32, time uint64) (Interval[K], bool) {
	if t.exited == nil {
		t.exited = map[uint32]bool{}
	}
	t.exited[tid] = true
	th := t.threads[tid]
	if th == nil {
		return Interval[K]{}, false
	}
	delete(t.threads, tid)
	if th.pending {
		t.Unmatched++
	}
	var iv Interval[K]
	off := th.off && th.known
	if off {
		iv = t.close(tid, th, time, CutAtExit)
	} else {
		th.life.OnNS += time - min(th.since, time)
	}
	th.life.Last = max(th.life.Last, time)
	t.done = append(t.done, th.life)
	return iv, off
}

// Idle feeds a thread that existed when the recording started (an
// attached process's) and was never seen since: no switch record, no
// off-CPU sample, no exit. It ran the whole time when running (its
// samples say so), else it was off the CPU the whole time, why unknown:
// an interval from the start that End closes. A thread already seen is
// left as it is. Call it before End.
func (t *Tracker[K]) Idle(pid, tid uint32, running bool) {
	if t.threads[tid] != nil || t.exited[tid] {
		return // seen, or exited (and in done)
	}
	th := t.thread(pid, tid)
	th.known, th.off = true, !running
}

// End ends the recording at time: the intervals of threads still off the
// CPU close then (CutAtEnd), in thread order, each given to fn; a thread
// on the CPU counts its time until then.
func (t *Tracker[K]) End(time uint64, fn func(Interval[K])) {
	for _, tid := range slices.Sorted(maps.Keys(t.threads)) {
		th := t.threads[tid]
		if th.pending {
			t.Unmatched++
		}
		switch {
		case th.off && th.known:
			fn(t.close(tid, th, time, CutAtEnd))
		case th.known:
			th.life.OnNS += time - min(th.since, time)
		}
		th.life.Last = max(th.life.Last, time)
		t.done = append(t.done, th.life)
	}
	clear(t.threads)
}

// Threads returns the life of every thread that exited or lived to the
// End, by thread id (a thread id reused by a later thread appears twice).
func (t *Tracker[K]) Threads() []Thread {
	out := slices.Clone(t.done)
	slices.SortStableFunc(out, func(a, b Thread) int {
		if a.TID != b.TID {
			return int(a.TID) - int(b.TID)
		}
		return int(a.First - b.First)
	})
	return out
}
