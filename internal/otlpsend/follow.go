package otlpsend

import (
	"errors"
	"runtime/debug"
	"sync"
	"time"

	"github.com/hwprof/hwprof/internal/engine"
	"github.com/hwprof/hwprof/perf/perfdata"
	"github.com/hwprof/hwprof/report/otlp"
)

// Follower sends a recording that is being written, one export request
// per interval: every interval it reads the file again (what the recorder
// has written so far: it brings the file's header up to date about once a
// second), makes its pprof profile, and submits the difference from the
// last one it sent (otlp.Deltas). Samples that reach the file late are in
// the next interval's request, so the requests of a whole recording add
// up to its profile.
//
// It reads the recording without source positions (engine.LoadOptions
// without SiteLines: functions by their symbols, no files, lines or
// inlined frames), as `hwprof report` does: reading every object's DWARF
// again at each interval would cost the recording far more than its
// budget. `hwprof push` of the finished recording sends them.
type Follower struct {
	path  string
	names Names
	host  string
	o     engine.LoadOptions
	s     *Sender
	warn  func(string)

	stop chan struct{}
	done chan struct{}

	mu     sync.Mutex // held while a request is made
	deltas *otlp.Deltas
	warned map[string]bool
	sent   int // requests submitted
}

// Follow starts following the recording at path, written by a recorder
// that has started, every interval (on a goroutine of its own, which Stop
// ends). Its requests go to s; warn is told (once per kind) what went
// wrong reading the file or making a request.
func Follow(path string, interval time.Duration, n Names, s *Sender, warn func(string)) *Follower {
	f := &Follower{
		path: path, names: n, s: s, warn: warn, deltas: otlp.NewDeltas(),
		stop: make(chan struct{}), done: make(chan struct{}), warned: map[string]bool{},
	}
	go f.run(interval)
	return f
}

func (f *Follower) run(interval time.Duration) {
	defer close(f.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			f.step(false)
		case <-f.stop:
			return
		}
	}
}

// Stop ends the intervals and submits the last request, of what the
// recording added since the last one: call it once the recorder has
// finished the file. It returns the number of requests submitted.
func (f *Follower) Stop() int {
	close(f.stop)
	<-f.done
	f.step(true)
	return f.sent
}

// step reads the recording and submits what it added. A read that stops
// early is normal while the recording is written (the file ends at its
// last header update) and not said; at the end it is.
func (f *Follower) step(final bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	// What a reading took goes back to the system until the next: a
	// reading of a whole recording takes far more than a recorder keeps.
	defer debug.FreeOSMemory()
	if f.host == "" {
		f.host = hostOf(f.path)
	}
	p, err := engine.Load(f.path, f.o)
	if err != nil && (final || !errors.Is(err, perfdata.ErrTruncated)) {
		f.once(err.Error())
	}
	if p == nil {
		return
	}
	pp, err := build(p, func(string) {})
	if err != nil {
		f.once(err.Error())
		return
	}
	d := f.deltas.Next(pp)
	if len(d.Sample) == 0 {
		return
	}
	req, err := request(d, resource(p, pp, f.names, f.host))
	if err != nil {
		f.once(err.Error())
		return
	}
	f.sent++
	if err := f.s.Submit(req); err != nil {
		f.once(err.Error())
	}
}

// once warns of msg the first time it is seen.
func (f *Follower) once(msg string) {
	if !f.warned[msg] {
		f.warned[msg] = true
		f.warn(msg)
	}
}
