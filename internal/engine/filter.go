package engine

import (
	"cmp"
	"slices"

	"github.com/hwprof/hwprof/profile"
)

// procTally counts one process's samples.
type procTally struct {
	samples, weight uint64
}

// filtering reports whether LoadOptions select samples by process.
func (o *LoadOptions) filtering() bool {
	return len(o.PIDs) > 0 || len(o.TIDs) > 0 || len(o.Comms) > 0
}

// keep reports whether a sample of thread tid of process pid passes the
// PIDs, TIDs and Comms filters; hasTID is false for a sample that does
// not say its thread, which no filter keeps. While filtering it counts
// every sample's thread (see sampled).
func (l *loader) keep(pid, tid uint32, hasTID bool) bool {
	o := &l.o
	if !o.filtering() {
		return true
	}
	if !hasTID {
		return false
	}
	now := l.procNow(pid)
	if !l.filter.counted {
		l.see(sampledKey{pid: pid, tid: tid, comm: now.comm})
		l.filter.counted = true
	}
	if len(o.PIDs) > 0 && !slices.Contains(o.PIDs, int(pid)) {
		return false
	}
	if len(o.TIDs) > 0 && !slices.Contains(o.TIDs, int(tid)) {
		return false
	}
	return len(o.Comms) == 0 || now.keep
}

// procState is what the filter knows of a process now: its command name
// and whether the Comms filter keeps it (emptied at every COMM, FORK and
// EXIT).
type procState struct {
	comm string
	keep bool
}

// procNow returns the state of process pid, from the cache.
func (l *loader) procNow(pid uint32) procState {
	st, known := l.filter.now[pid]
	if !known {
		p, _ := l.maps.Process(pid)
		st = procState{comm: p.Comm, keep: slices.Contains(l.o.Comms, p.Comm)}
		if l.filter.now == nil {
			l.filter.now = map[uint32]procState{}
		}
		l.filter.now[pid] = st
	}
	return st
}

// sampledKey is a thread under a command name.
type sampledKey struct {
	pid, tid uint32
	comm     string
}

// see counts a sample of k, kept or not.
func (l *loader) see(k sampledKey) {
	f := &l.filter
	if f.lastSeen == nil || f.lastKey != k {
		if f.seen == nil {
			f.seen = map[sampledKey]*uint64{}
		}
		n := f.seen[k]
		if n == nil {
			n = new(uint64)
			f.seen[k] = n
		}
		f.lastSeen, f.lastKey = n, k
	}
	*f.lastSeen++
}

// sampled lists the threads seen while filtering, busiest first.
func (l *loader) sampled() []profile.SampledThread {
	if len(l.filter.seen) == 0 {
		return nil
	}
	out := make([]profile.SampledThread, 0, len(l.filter.seen))
	for k, n := range l.filter.seen {
		comm := k.comm
		if comm == "" && k.pid == 0 {
			comm = "swapper" // the idle task, as perf names it
		}
		out = append(out, profile.SampledThread{PID: k.pid, TID: k.tid, Comm: comm, Samples: *n})
	}
	profile.SortSampled(out)
	return out
}

// tally counts a kept sample of process pid.
func (l *loader) tally(pid uint32, weight uint64) {
	t := l.filter.last
	if t == nil || l.filter.lastPID != pid {
		if l.filter.procs == nil {
			l.filter.procs = map[uint32]*procTally{}
		}
		t = l.filter.procs[pid]
		if t == nil {
			t = &procTally{}
			l.filter.procs[pid] = t
		}
		l.filter.last, l.filter.lastPID = t, pid
	}
	t.samples++
	t.weight += weight
}

// processes lists the processes that have kept samples, by weight, then
// samples, then pid.
func (l *loader) processes() []profile.Process {
	var total uint64
	for _, t := range l.filter.procs {
		total += t.weight
	}
	out := make([]profile.Process, 0, len(l.filter.procs))
	for pid, t := range l.filter.procs {
		p := profile.Process{PID: pid, Samples: t.samples, Weight: t.weight}
		if total > 0 {
			p.Share = float64(t.weight) / float64(total)
		}
		if pr, ok := l.maps.Process(pid); ok {
			p.Comm = pr.Comm
		}
		if p.Comm == "" && pid == 0 {
			p.Comm = "swapper" // the idle task, as perf names it
		}
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b profile.Process) int {
		return cmp.Or(cmp.Compare(b.Weight, a.Weight), cmp.Compare(b.Samples, a.Samples), cmp.Compare(a.PID, b.PID))
	})
	return out
}

// processFilter is the tally of the samples of each process kept, what
// the filter knows of each process now (procNow, emptied at every COMM,
// FORK and EXIT), and while filtering the count of every sample's thread.
type processFilter struct {
	procs map[uint32]*procTally
	now   map[uint32]procState
	seen  map[sampledKey]*uint64
	// the tally of the last sample's process, lastPID (nil: none yet)
	last    *procTally
	lastPID uint32
	// the count of the last sample's thread, lastKey (nil: none yet)
	lastSeen *uint64
	lastKey  sampledKey
	counted  bool // the record being folded was counted in seen
}
