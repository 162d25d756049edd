package otlpsend

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// Options configure a Sender.
type Options struct {
	// Timeout bounds one send (0: DefaultTimeout).
	Timeout time.Duration
	// MinBackoff and MaxBackoff bound the wait after a failed send: it
	// doubles from MinBackoff at each failure in a row, up to MaxBackoff,
	// with up to a quarter more at random (0: DefaultMinBackoff,
	// DefaultMaxBackoff).
	MinBackoff, MaxBackoff time.Duration
	// Warn, if set, is told (from the Sender's goroutine) when sending
	// starts failing and when it works again, and of each request the
	// endpoint refused in part.
	Warn func(string)
}

// Defaults of Options.
const (
	DefaultTimeout    = 10 * time.Second
	DefaultMinBackoff = time.Second
	DefaultMaxBackoff = 30 * time.Second
)

// Stats say what a Sender did.
type Stats struct {
	Sent     int   // requests the endpoint took
	Rejected int64 // profiles it refused in requests it took (partial success)
	Failures int   // sends that failed (each retried later)
	Waiting  int   // requests left in the spool
	Bytes    int64 // their size
	Dropped  int   // requests the spool dropped (no room, unreadable)
	LastErr  error // the last send's error, nil once one succeeded
}

// Sender sends a spool's requests on its own goroutine.
type Sender struct {
	c  *Client
	sp *Spool
	o  Options

	wake   chan struct{}
	stop   chan time.Time // the deadline of the last sends
	done   chan struct{}
	ctx    context.Context // cancelled at the deadline: ends a send under way
	cancel context.CancelFunc

	mu sync.Mutex
	st Stats
}

// Start starts sending the requests of sp (those a previous run left
// first) to c. Close ends it.
func Start(c *Client, sp *Spool, o Options) *Sender {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = DefaultMinBackoff
	}
	if o.MaxBackoff < o.MinBackoff {
		o.MaxBackoff = max(DefaultMaxBackoff, o.MinBackoff)
	}
	s := &Sender{c: c, sp: sp, o: o, wake: make(chan struct{}, 1), stop: make(chan time.Time, 1), done: make(chan struct{})}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	go s.run()
	return s
}

// Submit spools a request for sending and returns at once; it never waits
// for the endpoint. Its error is the spool's (the request was dropped).
func (s *Sender) Submit(req []byte) error {
	err := s.sp.Put(req)
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return err
}

// Close stops the Sender once the spool is empty or, at the latest, after
// wait (its last sends are bounded by it too), and returns what it did.
// What is left stays in the spool for the next run.
func (s *Sender) Close(wait time.Duration) Stats {
	s.stop <- time.Now().Add(wait)
	t := time.AfterFunc(wait, s.cancel)
	<-s.done
	t.Stop()
	s.cancel()
	return s.Stats()
}

// Stats says what the Sender has done so far.
func (s *Sender) Stats() Stats {
	s.mu.Lock()
	st := s.st
	s.mu.Unlock()
	st.Waiting, st.Bytes, st.Dropped = s.sp.Len(), s.sp.Bytes(), s.sp.Dropped()
	return st
}

func (s *Sender) run() {
	defer close(s.done)
	var deadline time.Time // set once stopping
	backoff := time.Duration(0)
	for {
		seq, req, ok := s.sp.Oldest()
		if !ok {
			if !deadline.IsZero() {
				return
			}
			select {
			case <-s.wake:
			case deadline = <-s.stop:
			}
			continue
		}
		if !deadline.IsZero() && !time.Now().Before(deadline) {
			return
		}
		if s.send(seq, req, deadline) {
			backoff = 0
			continue
		}
		backoff = min(max(2*backoff, s.o.MinBackoff), s.o.MaxBackoff)
		wait := backoff + rand.N(backoff/4+1)
		if !deadline.IsZero() {
			wait = min(wait, time.Until(deadline))
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case deadline = <-s.stop:
			t.Stop()
		}
	}
}

// send sends request seq once, removing it from the spool when taken; it
// reports whether it was.
func (s *Sender) send(seq int64, req []byte, deadline time.Time) bool {
	timeout := s.o.Timeout
	if !deadline.IsZero() {
		timeout = min(timeout, time.Until(deadline))
	}
	ctx, cancel := context.WithTimeout(s.ctx, timeout)
	res, err := s.c.Send(ctx, req)
	cancel()
	s.mu.Lock()
	failing := s.st.LastErr != nil
	if err != nil {
		s.st.Failures++
		s.st.LastErr = err
	} else {
		s.st.Sent++
		s.st.Rejected += res.Rejected
		s.st.LastErr = nil
	}
	s.mu.Unlock()
	switch {
	case err != nil && !failing:
		s.warn(fmt.Sprintf("%v (profiles wait in %s and are sent when it answers)", err, s.sp.Dir()))
	case err == nil && failing:
		s.warn(fmt.Sprintf("%v answers again: sending the profiles that waited", s.c.ep))
	}
	if err != nil {
		return false
	}
	if res.Rejected > 0 {
		s.warn(fmt.Sprintf("%v refused %d profiles: %s", s.c.ep, res.Rejected, res.Message))
	}
	s.sp.Remove(seq)
	return true
}

func (s *Sender) warn(msg string) {
	if s.o.Warn != nil {
		s.o.Warn(msg)
	}
}
