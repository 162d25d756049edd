package record

import (
	"runtime"
	"sync"
	"time"

	"github.com/hwprof/hwprof/perf"
)

// loop drains every ring at each wake-up until done reports the end,
// writing a FINISHED_ROUND after each round and a header checkpoint about
// once a second. At the first failed write it stops the recording (stop)
// and goes on calling done, which decides what happens to the targets.
func (r *recorder) loop(start time.Time, done func(ready []int) bool) {
	// The adaptive budget times each drain with this thread's CPU clock.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// One goroutine does all the work while the targets run. With more
	// than one P, every wake-up of this loop also wakes the Go runtime's
	// other threads (an M spinning for work on another P, the monitor
	// thread polling while a P sits in a system call), each a context
	// switch on a CPU the program runs on; with one P the runtime takes
	// back the P of a blocked wait at once and sleeps.
	defer oneP()()
	lastCheckpoint, lastStatus := time.Now(), time.Now()
	for {
		ready, hup, _, err := r.poller.Wait(100 * time.Millisecond)
		if err != nil {
			r.stats.RingErrors++
		}
		// An event whose task exited hangs up, and epoll reports it at
		// every wait until it is removed. Its ring is still drained below.
		for _, fd := range hup {
			r.poller.Remove(fd)
		}
		r.drain()
		now := time.Now()
		if r.writeErr == nil {
			r.observe(now)
			if now.Sub(lastCheckpoint) >= time.Second {
				r.failed(r.w.Checkpoint())
				lastCheckpoint = now
			}
		}
		if r.writeErr != nil && r.stopErr == nil {
			r.stop(now.Sub(start))
		}
		if done(ready) {
			break
		}
		if r.o.Status != nil && now.Sub(lastStatus) >= StatusInterval && r.stopErr == nil {
			r.o.Status(r.status(now.Sub(start)))
			lastStatus = now
		}
	}
	r.drain()
	if r.writeErr != nil && r.stopErr == nil {
		r.stop(time.Since(start))
	}
}

// onePs counts the loops running (in one process: tests run several),
// the first of which set GOMAXPROCS to 1, and what it was.
var onePs struct {
	sync.Mutex
	n, was int
}

// oneP runs the process on one P until the function it returns is
// called, for as long as any loop does.
func oneP() func() {
	onePs.Lock()
	defer onePs.Unlock()
	if onePs.n == 0 {
		onePs.was = runtime.GOMAXPROCS(1)
	}
	onePs.n++
	return func() {
		onePs.Lock()
		defer onePs.Unlock()
		if onePs.n--; onePs.n == 0 {
			runtime.GOMAXPROCS(onePs.was)
		}
	}
}

// stop stops the recording at its first failed write: the events are
// disabled, so that the kernel stops sampling, the rings are read no more
// (drain), and Options.Stopped is told at once. The targets are the
// loop's done function's business (see WriteError).
func (r *recorder) stop(at time.Duration) {
	for _, e := range r.events {
		perf.Disable(e.fd)
	}
	r.stopErr = r.writeError(true, at)
	if r.o.Stopped != nil {
		r.o.Stopped(r.stopErr)
	}
}

// writeError describes r.writeErr with what the output holds.
func (r *recorder) writeError(stopped bool, at time.Duration) *WriteError {
	stream := r.out != nil && r.out.Stream()
	return &WriteError{Path: r.o.Output, Stream: stream, Err: r.writeErr, Stopped: stopped, At: at, Samples: r.stats.Samples}
}

// elapsed is the recording's duration: since start, or until it stopped
// at a failed write.
func (r *recorder) elapsed(start time.Time) time.Duration {
	if r.stopErr != nil && r.stopErr.Stopped {
		return r.stopErr.At
	}
	return time.Since(start)
}
