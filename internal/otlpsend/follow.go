package otlpsend

import (
	"sync"
	"time"

	"github.com/hwprof/hwprof/internal/engine"
	"github.com/hwprof/hwprof/internal/pipeline"
)

// Follower sends a recording that is being written, one export request
// per interval: every interval it reads what the recorder has added to
// the file since the last (engine.Follower: the records its header
// covers, which the recorder brings up to date about once a second),
// makes the pprof profile of their samples and submits it. Each record is
// read once, and what the reading keeps from interval to interval is the
// recording's model (processes, objects, symbols), not its samples: the
// cost of an interval is that of its samples, and the memory stays flat
// however long the recording. Samples that reach the file late are in
// the next interval's request, so the requests of a whole recording add
// up to its profile.
//
// It reads the recording with source positions (engine.LoadOptions
// SiteLines: functions with their files and lines, call sites with their
// inlined frames), as `hwprof push` does: each object's DWARF is read
// once, at its first sample, and kept for the intervals after.
type Follower struct {
	path  string
	names Names
	host  string
	o     engine.LoadOptions
	s     *Sender
	warn  func(string)

	stop chan struct{}
	done chan struct{}

	mu     sync.Mutex       // held while a request is made
	eng    *engine.Follower // nil until the recording could be opened
	since  time.Time        // the start of the interval being read
	warned map[string]bool
	sent   int // requests submitted
}

// followOptions are how a Follower reads: with source positions, and with
// one goroutine preparing the samples (a recording's own share of the
// machine is small; the interval's samples are few).
var followOptions = engine.LoadOptions{SiteLines: true, Workers: 1}

// Follow starts following the recording at path, written by a recorder
// that has started, every interval (on a goroutine of its own, which Stop
// ends). Its requests go to s; warn is told (once per kind) what went
// wrong reading the file or making a request.
func Follow(path string, interval time.Duration, n Names, s *Sender, warn func(string)) *Follower {
	f := &Follower{
		path: path, names: n, s: s, warn: warn, o: followOptions, since: time.Now(),
		stop: make(chan struct{}), done: make(chan struct{}), warned: map[string]bool{},
	}
	pipeline.Beside(func() { f.run(interval) })
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
	if f.eng != nil {
		f.eng.Close()
	}
	return f.sent
}

// step reads what the recording added and submits it; last: the recorder
// is done, the file is read to its end.
func (f *Follower) step(last bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.eng == nil {
		e, err := engine.Follow(f.path, f.o)
		if err != nil {
			f.once(err.Error())
			return
		}
		f.eng = e
		if f.names.Host == "" {
			f.host = hostOf(f.path)
		}
	}
	p, err := f.eng.Next(last)
	if err != nil {
		f.once(err.Error())
	}
	if p == nil {
		return
	}
	if p.Map.Totals().Stacks == 0 && p.Map.Totals().Edges == 0 && (p.OffCPU == nil || p.OffCPU.Totals().Stacks == 0) {
		return // nothing sampled in the interval
	}
	pp, err := build(p, func(string) {})
	if err != nil {
		f.once(err.Error())
		return
	}
	if len(pp.Sample) == 0 {
		return
	}
	// The request covers the time since the last one's end.
	now := time.Now()
	pp.TimeNanos, pp.DurationNanos = f.since.UnixNano(), now.Sub(f.since).Nanoseconds()
	f.since = now
	req, err := request(pp, resource(p, pp, f.names, f.host))
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
