package record

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/synth"
	"golang.org/x/sys/unix"
)

const procRoot = "/proc"

// runAttach follows running processes: every thread they have now (and,
// through inherit, every thread they create later), until they all exit,
// the duration passes, or an interrupt arrives.
func (r *recorder) runAttach() error {
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
	cpus, err := perf.OnlineCPUs()
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	r.cpus = cpus
	t0 := time.Now()
	err = r.openThreads()
	r.stats.Attach = time.Since(t0)
	if err != nil {
		return err
	}
	if err := r.create(); err != nil {
		return err
	}
	for _, pid := range r.o.PIDs {
		var err error
		r.synth, err = synth.SynthesizeProcess(r.synth[:0], procRoot, pid, r.o.Events[0].Attr.SampleType)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return r.finish(fmt.Errorf("record: read /proc/%d: %w", pid, err))
		}
		if err := r.writeSynthesized(r.synth); err != nil {
			return r.finish(err)
		}
	}
	for _, e := range r.events {
		if r.o.Events[e.event].Attr.Flags.Has(perf.FlagDisabled) {
			if err := perf.Enable(e.fd); err != nil {
				return r.finish(fmt.Errorf("record: %w", err))
			}
		}
	}
	for _, fd := range pidfds {
		if err := r.poller.Add(fd); err != nil {
			return r.finish(fmt.Errorf("record: %w", err))
		}
	}
	start := time.Now()
	if err := r.startAdaptive(); err != nil {
		return r.finish(err)
	}
	if r.o.Started != nil {
		r.o.Started(r.o.PIDs)
	}
	exited := map[int]bool{}
	r.loop(start, func(ready []int) bool {
		for _, fd := range ready {
			if slices.Contains(pidfds, fd) {
				exited[fd] = true
			}
		}
		if len(exited) == len(pidfds) {
			return true
		}
		select {
		case <-r.o.Interrupt:
			r.stats.Interrupted = true
			return true
		default:
		}
		return r.o.Duration > 0 && time.Since(start) >= r.o.Duration
	})
	r.stats.Duration = time.Since(start)
	return r.finish(nil)
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
