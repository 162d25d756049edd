package record

import (
	"errors"
	"fmt"
	"os"

	"github.com/hwprof/hwprof/internal/pipeline"
	"github.com/hwprof/hwprof/internal/uprobe"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/ring"
	"golang.org/x/sys/unix"
)

// openAll opens every event on every online CPU for each task, and maps
// one ring per event per CPU. In attach mode (several tasks), the events
// of further tasks on a CPU write into that CPU's ring for the event.
func (r *recorder) openAll(tids []int) error {
	cpus, err := perf.OnlineCPUs()
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	r.cpus = cpus
	for _, tid := range tids {
		for ei := range r.o.Events {
			for _, cpu := range r.cpus {
				if err := r.openOne(&r.o.Events[ei], ei, tid, cpu); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (r *recorder) openOne(ev *perf.Event, ei, tid, cpu int) error {
	fd, err := r.open(ev, ei, tid, cpu)
	if err != nil {
		return err
	}
	id, err := perf.EventID(fd)
	if err != nil {
		unix.Close(fd)
		return fmt.Errorf("record: %s: %w", ev.Name, err)
	}
	oe := openEvent{fd: fd, event: ei, cpu: cpu, tid: tid, id: id}
	r.events = append(r.events, oe)
	r.stats.Opened++
	// The first task's event on this CPU owns the ring; later tasks'
	// events write into it. With ShareRing, every event of the CPU does.
	for _, prev := range r.events[:len(r.events)-1] {
		if prev.cpu == cpu && (prev.event == ei || r.o.ShareRing) {
			if err := perf.SetOutput(fd, prev.fd); err != nil {
				return fmt.Errorf("record: %s on cpu %d: %w", ev.Name, cpu, err)
			}
			return nil
		}
	}
	rg, err := ring.Map(fd, r.o.DataPages)
	if err != nil {
		return fmt.Errorf("record: %s on cpu %d: %w (%s)", ev.Name, cpu, err, r.ringHint(err))
	}
	r.rings = append(r.rings, rg)
	r.stats.Rings++
	return r.poller.Add(fd)
}

// open opens event ei on (tid, cpu). When the kernel refuses the event's
// first open because it counts the kernel and perf_event_paranoid forbids
// that, open retries it user space only, as perf record does
// (evsel__fallback), and the event keeps the user-only attr for its other
// opens and for the file: what the file says is what was opened. Only the
// first open may fall back, so all of an event's fds share one attr.
func (r *recorder) open(ev *perf.Event, ei, tid, cpu int) (int, error) {
	fd, err := perf.Open(ev.Name, &ev.Attr, tid, cpu, -1, perf.FlagFDCloexec)
	first := !r.tried[ei]
	r.tried[ei] = true
	if err == nil || !first {
		return fd, err
	}
	paranoid, perr := perf.Paranoid()
	if perr != nil || !perf.FallBackToUser(&ev.Attr, err, paranoid) {
		return fd, err
	}
	user, _ := perf.UserOnly(ev.Attr)
	name := ev.Name
	if ev.Attr.Type != perf.TypeTracepoint { // a probe's name is its function's
		name = perf.UserOnlyName(name)
	}
	fd, err = perf.Open(name, &user, tid, cpu, -1, perf.FlagFDCloexec)
	if err != nil {
		return fd, err // the user-only open's error names what user space needs
	}
	ev.Attr, ev.Name = user, name
	r.stats.UserOnly = append(r.stats.UserOnly, name)
	if !r.noticed && r.o.Notice != nil {
		r.noticed = true
		r.o.Notice(perf.UserOnlyNote(paranoid))
	}
	return fd, nil
}

// ringHint says what lets a ring be mapped: the kernel charges each
// ring's pages (and its header page) to the user, beyond
// kernel.perf_event_mlock_kb per online CPU to RLIMIT_MEMLOCK, and refuses
// with EPERM past both unless the process has CAP_IPC_LOCK or
// perf_event_paranoid is -1 (perf_mmap in kernel/events/core.c).
func (r *recorder) ringHint(err error) string {
	h := fmt.Sprintf("ring of %d pages; lower -m", r.o.DataPages)
	if !errors.Is(err, unix.EPERM) {
		return h
	}
	rings := len(r.cpus)
	if !r.o.ShareRing {
		rings *= len(r.o.Events)
	}
	kb := (rings*(r.o.DataPages+1)*os.Getpagesize()/1024 + len(r.cpus) - 1) / max(1, len(r.cpus))
	return h + fmt.Sprintf(", or allow %d KB of rings: sysctl kernel.perf_event_mlock_kb=%d, a higher ulimit -l, "+
		"or CAP_IPC_LOCK (or root)", rings*(r.o.DataPages+1)*os.Getpagesize()/1024, kb)
}

func (r *recorder) closeEvents() {
	for _, rg := range r.rings {
		rg.Close()
	}
	background := false
	if slowToRelease(r.o.Events) > releaseInBackgroundAbove && !r.foreground {
		background = releaseInBackground(r.events) // closes them too
		if background {
			r.stats.ReleasedInBackground = len(r.events)
		}
	} else {
		for _, e := range r.events {
			unix.Close(e.fd)
		}
	}
	r.rings, r.events = nil, nil
	if !background {
		// The exact source's tracefs probes, once their events are closed,
		// then the tracefs hwprof mounted for them, if it did (the
		// background releaser removes them itself).
		if err := uprobe.DropOwn(); err != nil && r.stats.CleanupErr == nil {
			r.stats.CleanupErr = err
		}
	}
}

// closeFilesParallel closes files from 64 threads at once
// (pipeline.Each): what is left to wait for when the releaser could not
// be started (see release.go) is then shared between threads where the
// kernel allows.
func closeFilesParallel(files []*os.File) {
	pipeline.Each(len(files), 64, func(i int) { files[i].Close() })
}

// raiseFileLimit lifts RLIMIT_NOFILE to its hard limit: attaching to a
// process with many threads opens threads × CPUs × events descriptors.
func raiseFileLimit() {
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) == nil && lim.Cur < lim.Max {
		lim.Cur = lim.Max
		unix.Setrlimit(unix.RLIMIT_NOFILE, &lim)
	}
}
