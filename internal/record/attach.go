package record

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/synth"
	"golang.org/x/sys/unix"
)

const procRoot = "/proc"

// runAttach follows running processes (Options.PIDs): every thread they
// have now (and, through inherit, every thread they create later), or
// with Options.SystemWide every task on every CPU, until the processes
// all exit, the timer command exits, the duration passes, or an
// interrupt arrives.
func (r *recorder) runAttach() error {
	var tm *timer
	if len(r.o.Timer) > 0 {
		var err error
		if tm, err = startTimer(r.o.Timer); err != nil {
			return err
		}
		defer tm.abort() // if it never ran
	}
	pidfds := make([]int, 0, len(r.o.PIDs))
	defer func() {
		for _, fd := range pidfds {
			unix.Close(fd)
		}
	}()
	// A pidfd, taken first, pins which process the pid means.
	for _, pid := range r.o.PIDs {
		fd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			if errors.Is(err, unix.ESRCH) {
				return fmt.Errorf("record: no process with pid %d", pid)
			}
			return fmt.Errorf("record: watch pid %d: %w", pid, err)
		}
		pidfds = append(pidfds, fd)
	}
	t0 := time.Now()
	err := r.openTargets()
	r.stats.Attach = time.Since(t0)
	if err != nil {
		return err
	}
	// What /proc says of the processes is read once their events are
	// open (so that no mapping made meanwhile is missed) but before the
	// output is opened: a process whose maps cannot be read fails the
	// recording with the previous one left as it was.
	synthesized, err := r.synthesizeTargets()
	if err != nil {
		return err
	}
	if err := r.create(); err != nil {
		return err
	}
	if err := r.writeSynthesized(synthesized); err != nil {
		return r.abandon(err)
	}
	for _, e := range r.events {
		if r.o.Events[e.event].Attr.Flags.Has(perf.FlagDisabled) {
			if err := perf.Enable(e.fd); err != nil {
				return r.abandon(fmt.Errorf("record: %w", err))
			}
		}
	}
	r.markSpan()
	for _, fd := range pidfds {
		if err := r.poller.Add(fd); err != nil {
			return r.abandon(fmt.Errorf("record: %w", err))
		}
	}
	start := time.Now()
	if err := r.startAdaptive(); err != nil {
		return r.abandon(err)
	}
	if tm != nil {
		if err := tm.run(r.poller); err != nil {
			r.stats.ExitCode = tm.code
			return r.abandon(err)
		}
	}
	if err := r.commit(); err != nil {
		if tm != nil {
			tm.end()
		}
		return err
	}
	if r.o.Started != nil {
		r.o.Started(r.o.PIDs)
	}
	exited := map[int]bool{}
	timerDone := false
	var watched time.Time
	r.loop(start, func(ready []int) bool {
		for _, fd := range ready {
			if slices.Contains(pidfds, fd) {
				exited[fd] = true
			}
			timerDone = timerDone || (tm != nil && fd == tm.pidfd)
		}
		if timerDone || (len(pidfds) > 0 && len(exited) == len(pidfds)) {
			return true
		}
		select {
		case s := <-r.o.Interrupt:
			r.stats.Stop, r.stats.Signal = StopSignal, s
			return true
		default:
		}
		// A failed write ends the recording at once; the processes go on.
		return r.stopAsked(start, &watched, r.o.PIDs)
	})
	r.stats.Duration = r.elapsed(start)
	r.markSpan()
	if tm != nil {
		// The status of a timer the recording ended (duration, targets
		// gone, an interrupt) is not the user's: only one that ended by
		// itself is passed on.
		code, err := tm.end()
		if timerDone {
			r.stats.ExitCode = code
		}
		return r.finish(err)
	}
	return r.finish(nil)
}

// openTargets opens the events: on every thread of the processes, or
// system-wide on every CPU for every task (pid -1).
func (r *recorder) openTargets() error {
	if r.o.SystemWide {
		return r.openAll([]int{-1})
	}
	cpus, err := perf.OnlineCPUs()
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	r.cpus = cpus
	return r.openThreads()
}

// synthesizeTargets returns the COMM and MMAP2 records of the processes
// that run already, from /proc, as perf writes them: for the PIDs, or
// system-wide for every process (with a FORK per thread, as perf record
// -a writes). System-wide, a process that exits meanwhile or whose maps
// this user may not read is left out, as perf leaves it.
func (r *recorder) synthesizeTargets() ([]byte, error) {
	st := r.o.Events[0].Attr.SampleType
	pids := r.o.PIDs
	var so synth.Options
	if r.o.SystemWide {
		var err error
		if pids, err = allPIDs(procRoot); err != nil {
			return nil, err
		}
		so.Fork = true
	}
	var b []byte
	for _, pid := range pids {
		var err error
		b, err = so.Synthesize(b, procRoot, pid, st) // b as it was on error
		if errors.Is(err, os.ErrNotExist) || (r.o.SystemWide && err != nil) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("record: read /proc/%d: %w", pid, err)
		}
	}
	return b, nil
}

// allPIDs lists the processes in procRoot, in increasing order.
func allPIDs(procRoot string) ([]int, error) {
	ents, err := os.ReadDir(procRoot)
	if err != nil {
		return nil, fmt.Errorf("record: list processes: %w", err)
	}
	var pids []int
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil && pid > 0 && e.IsDir() {
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)
	return pids, nil
}

// openThreads opens the events on every thread of every target, then
// looks again for threads created meanwhile (they may have been cloned by
// a thread before its events were open) until no new one appears.
func (r *recorder) openThreads() error {
	opened := map[int]bool{}
	for pass := 0; ; pass++ {
		var fresh []int
		for _, pid := range r.o.PIDs {
			threads, err := synth.Threads(procRoot, pid)
			if err != nil {
				if pass == 0 {
					return fmt.Errorf("record: list threads of pid %d: %w", pid, err)
				}
				continue // the process exited meanwhile
			}
			for _, t := range threads {
				if !opened[t.TID] {
					fresh = append(fresh, t.TID)
					opened[t.TID] = true
				}
			}
		}
		if len(fresh) == 0 {
			if len(r.events) == 0 {
				return errors.New("record: the processes have no threads left")
			}
			return nil
		}
		for _, tid := range fresh {
			if err := r.openTask(tid); err != nil {
				return err
			}
		}
	}
}

// openTask opens the events of one thread on every CPU; a thread that
// exits before it is opened is skipped.
func (r *recorder) openTask(tid int) error {
	for ei := range r.o.Events {
		for _, cpu := range r.cpus {
			err := r.openOne(&r.o.Events[ei], ei, tid, cpu)
			if errors.Is(err, unix.ESRCH) {
				return nil
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// writeSynthesized writes records built from /proc as if the kernel had
// reported them.
func (r *recorder) writeSynthesized(b []byte) error {
	for len(b) >= 8 {
		size := int(le.Uint16(b[6:]))
		if size < 8 || size > len(b) {
			return fmt.Errorf("record: synthesized record of size %d", size)
		}
		if err := r.write(b[:size]); err != nil {
			return fmt.Errorf("record: write %s: %w", r.o.Output, err)
		}
		b = b[size:]
	}
	return nil
}
