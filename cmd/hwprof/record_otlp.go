package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hwprof/hwprof/internal/otlpsend"
	"github.com/hwprof/hwprof/internal/output"
	"github.com/hwprof/hwprof/internal/record"
	"github.com/hwprof/hwprof/perf"
)

// recordOTLP are record's flags for sending profiles while recording
// (hwprof record --otlp URL): a continuous profiler.
type recordOTLP struct {
	otlpFlags
	interval  time.Duration
	spool     string
	spoolSize string
}

// Defaults of record --otlp.
const (
	defaultOTLPInterval  = 10 * time.Second
	defaultSpoolSize     = "64M"
	otlpCloseWait        = 10 * time.Second // how long the last sends may take at the end
	defaultSpoolSubdir   = "hwprof/otlp-spool"
	minimumOTLPIntervals = time.Second // the recorder's header is brought up to date about once a second
)

func (f *recordOTLP) register(fs *flag.FlagSet) {
	f.registerEndpoint(fs)
	fs.DurationVar(&f.interval, "interval", defaultOTLPInterval, "with --otlp: send a profile of what was recorded every `D`")
	fs.StringVar(&f.spool, "otlp-spool", "", "with --otlp: keep the profiles the Collector has not taken yet in `DIR` (created; default: hwprof/otlp-spool in the user's cache directory)")
	fs.StringVar(&f.spoolSize, "otlp-spool-size", defaultSpoolSize, "with --otlp: keep at most `SIZE` bytes of profiles waiting (K, M, G suffixes); the oldest are dropped, counted, past it")
}

// otlpRun is one recording's sending.
type otlpRun struct {
	ep       otlpsend.Endpoint
	client   *otlpsend.Client
	sender   *otlpsend.Sender
	spool    *otlpsend.Spool
	follower *otlpsend.Follower
	warn     func(string)
}

// check checks the flags set and the recording's output, before
// anything is said or opened (and before start). Errors are usage
// errors.
func (f *recordOTLP) check(set map[string]bool, out string) error {
	if f.url == "" {
		for _, n := range []string{"interval", "otlp-spool", "otlp-spool-size", "service", "host-name"} {
			if set[n] {
				return fmt.Errorf("--%s goes with --otlp URL", n)
			}
		}
		return nil
	}
	if _, err := f.endpoint(); err != nil {
		return err
	}
	if f.interval < minimumOTLPIntervals {
		return fmt.Errorf("--interval %v: at least %v", f.interval, minimumOTLPIntervals)
	}
	if kind, err := output.Check(out); out == output.Stdout || err == nil && kind == output.Stream {
		return errors.New("--otlp reads the recording back while it is written: give -o a regular file, not a stream")
	}
	if _, err := parseSize(f.spoolSize); err != nil {
		return fmt.Errorf("--otlp-spool-size: %w", err)
	}
	return nil
}

// start starts sending, the flags checked (check): the spool is opened
// and its sender started now, the intervals once the recording runs
// (o.Started). Errors are usage errors. A nil run means no --otlp.
func (f *recordOTLP) start(o *record.Options, stderr io.Writer) (*otlpRun, error) {
	if f.url == "" {
		return nil, nil
	}
	ep, err := f.endpoint()
	if err != nil {
		return nil, err
	}
	// A continuous profile is of the work done: the idle task's samples
	// (all of an idle machine's, with -a) are left out (exclude_idle), as
	// continuous profilers leave them, and an idle machine costs next to
	// nothing to profile.
	for i := range o.Events {
		if a := &o.Events[i].Attr; !(a.Type == perf.TypeSoftware && a.Config == perf.SWDummy) {
			a.Flags |= perf.FlagExcludeIdle
		}
	}
	size, err := parseSize(f.spoolSize)
	if err != nil {
		return nil, fmt.Errorf("--otlp-spool-size: %w", err)
	}
	dir := f.spool
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return nil, fmt.Errorf("--otlp-spool: no default (%v): give a directory", err)
		}
		dir = filepath.Join(cache, defaultSpoolSubdir)
	}
	sp, err := otlpsend.OpenSpool(dir, size)
	if err != nil {
		return nil, err
	}
	c, err := otlpsend.Dial(ep)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	r := &otlpRun{ep: ep, client: c, spool: sp, warn: func(msg string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(stderr, "hwprof: otlp: %s\n", msg)
	}}
	r.sender = otlpsend.Start(c, sp, otlpsend.Options{Warn: r.warn})
	names := f.names()
	if names.Host == "" {
		names.Host, _ = os.Hostname()
	}
	started := o.Started
	o.Started = func(targets []int) {
		if started != nil {
			started(targets)
		}
		r.follower = otlpsend.Follow(o.Output, f.interval, names, r.sender, r.warn)
	}
	return r, nil
}

// finish sends the last interval, waits a while for the sends, and says
// what was sent, what waits and what was dropped.
func (r *otlpRun) finish(quiet bool, stderr io.Writer) {
	if r == nil {
		return
	}
	made := 0
	if r.follower != nil {
		made = r.follower.Stop()
	}
	st := r.sender.Close(otlpCloseWait)
	r.client.Close()
	msg := fmt.Sprintf("%d profiles made, %d requests sent to %v", made, st.Sent, r.ep)
	if st.Waiting > 0 {
		msg += fmt.Sprintf("; %d (%d bytes) wait in %s (the next record --otlp with this spool sends them)", st.Waiting, st.Bytes, r.spool.Dir())
	}
	if st.Dropped > 0 {
		msg += fmt.Sprintf("; %d dropped: the spool was full", st.Dropped)
	}
	if !quiet || st.Waiting > 0 || st.Dropped > 0 {
		r.warn(msg)
	}
}

// parseSize parses a byte count with an optional K, M or G suffix (powers
// of 1024).
func parseSize(s string) (int64, error) {
	mult := int64(1)
	num := strings.TrimSuffix(strings.ToUpper(s), "B")
	switch {
	case strings.HasSuffix(num, "K"):
		mult, num = 1<<10, strings.TrimSuffix(num, "K")
	case strings.HasSuffix(num, "M"):
		mult, num = 1<<20, strings.TrimSuffix(num, "M")
	case strings.HasSuffix(num, "G"):
		mult, num = 1<<30, strings.TrimSuffix(num, "G")
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("%q: want a positive size such as 64M", s)
	}
	return n * mult, nil
}
