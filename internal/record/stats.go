package record

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/hwprof/hwprof/internal/output"
	"github.com/hwprof/hwprof/perf"
)

// WriteError is the error of a recording whose output could not be
// written. The recording stops at the first failed write, as perf record
// does: the events are disabled and their rings read no more, and in
// command mode the program (or the timer command) gets SIGTERM and is
// waited for, as after an interrupt (a second interrupt kills it);
// processes attached to are left running. The file keeps every whole
// record written before, its header covering exactly them, and Stats
// count those records only.
type WriteError struct {
	Path    string        // the output as given ("-": standard output)
	Stream  bool          // the output is a stream (pipe mode)
	Err     error         // the failed write's error (ENOSPC, EPIPE, ...)
	Stopped bool          // the recording was cut short (else its last write failed)
	At      time.Duration // when it stopped, since the program started or the targets were attached
	Samples uint64        // the samples the output holds
}

func (e *WriteError) Error() string {
	cause := e.Err
	var pe *os.PathError
	if errors.As(cause, &pe) {
		cause = pe.Err // "no space left on device", without the path again
	}
	path := e.Path
	if path == output.Stdout {
		path = "standard output"
	}
	holds := "the file holds"
	if e.Stream {
		holds = "the stream got"
	}
	if e.Stopped {
		return fmt.Sprintf("writing %s: %v: recording stopped at %.1f s; %s the %d samples written before",
			path, cause, e.At.Seconds(), holds, e.Samples)
	}
	return fmt.Sprintf("writing %s: %v: %s the %d samples written before", path, cause, holds, e.Samples)
}

func (e *WriteError) Unwrap() error { return e.Err }

// Stats is what a recording counted. Loss is never silent: Lost and
// LostSamples come from the kernel's LOST and LOST_SAMPLES records.
// The counts of records (Samples to Unthrottle, Undecoded) are of the
// records in the output: after a failed write, those written before it,
// and Duration ends where the write failed.
type Stats struct {
	Samples      uint64   // PERF_RECORD_SAMPLE records written
	EventSamples []uint64 // samples per event, in Options.Events order
	Records      uint64   // all records written
	Bytes        uint64   // bytes of records written
	Lost         uint64   // samples dropped because a ring was full (LOST)
	LostSamples  uint64   // samples the kernel could not output (LOST_SAMPLES)
	Throttle     uint64   // THROTTLE records
	Unthrottle   uint64   // UNTHROTTLE records
	Wakeups      uint64   // loop iterations that found data
	RingErrors   uint64   // corrupted ring reads, skipped (not write errors)
	Undecoded    uint64   // records the decoder rejected (written all the same)
	Duration     time.Duration
	CPU          time.Duration // hwprof's own CPU time (user+system)
	ExitCode     int           // command mode: the program's status, 128+N if signal N; with a Timer, its status (0 when the recording ended it)
	Stop         Stop          // why the recording ended
	Signal       os.Signal     // with StopSignal: the first interrupt
	Limit        string        // with StopLimit: why Options.Watch stopped it
	Opened       int           // event file descriptors opened
	Rings        int           // ring buffers mapped
	Attach       time.Duration // opening every event (and mapping the rings)
	Detach       time.Duration // closing them, or handing them to the background releaser
	// ReleasedInBackground is the number of event fds handed to a
	// background process to close (see release.go), 0 when closed here.
	ReleasedInBackground int
	CleanupErr           error          // removing the exact source's probes from tracefs failed
	Periods              []PeriodChange // adaptive period changes, in time order
	AdaptiveErr          error          // the first period change the kernel refused
	// PeriodsFixed counts the samples of tuned clock events whose PERIOD
	// field was set to the period in force (see adaptive.go).
	PeriodsFixed uint64
	// ThreadPeriods is, for each tuned event and thread, the period of
	// the thread's last sample, by event and thread id: the period of the
	// event that took it. A change reaches only the events hwprof opened,
	// not the copies inherited before it, and threads may take turns
	// with both (see adaptive.go), so at the end threads may differ.
	ThreadPeriods []ThreadPeriod
	// Trades says, per event in Options.Events order, how its tuned rate
	// compared at the end with perf's default and why
	// (tuning.Controller.Trade); "" for an event not tuned.
	Trades []string
	// SampleCPU is hwprof's CPU time spent on the records (draining,
	// decoding, writing; the part the adaptive budget covers), measured
	// only when the period is tuned; the rest of CPU is fixed.
	SampleCPU time.Duration
	// Events are the events as opened and written to the file, in
	// Options.Events order: an event the kernel refused to let count the
	// kernel was opened user space only (see open), its name with perf's
	// :u added. UserOnly lists the names of those events.
	Events   []perf.Event
	UserOnly []string
}
