package record

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/hwprof/hwprof/internal/launch"
	"github.com/hwprof/hwprof/internal/objcache"
	"github.com/hwprof/hwprof/internal/output"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/perfdata"
	"github.com/hwprof/hwprof/perf/ring"
	"github.com/hwprof/hwprof/tuning"
	"golang.org/x/sys/unix"
)

// DefaultDataPages is the default size of each ring's data area in pages
// (512 KiB with 4 KiB pages), perf's default for root.
const DefaultDataPages = ring.DefaultDataPages

// SharedDataPages is the default ring size with Options.ShareRing: 4 MiB
// per CPU, since one ring takes the samples of every event of the CPU
// (exact-source probes hit up to a few hundred thousand times a second,
// ~150 bytes each).
const SharedDataPages = 1024

// Options say what to record and where.
type Options struct {
	Events []perf.Event // attrs to open, from event.BuildAttrs
	Argv   []string     // command mode: the program and its arguments
	PIDs   []int        // attach mode: processes to follow
	// SystemWide records every task on every CPU (perf record -a): the
	// events, built for event.TargetCPUs, are opened with pid -1, and
	// every process in /proc is described first, as for PIDs.
	SystemWide bool
	// Timer, with PIDs or SystemWide, is a command run while recording
	// and not recorded itself (perf's `record -p PID -- sleep 5`): it
	// starts once the events are enabled and the recording ends when it
	// exits; Stats.ExitCode is then its status.
	Timer []string
	// Duration bounds the recording (0: until the targets exit or an
	// interrupt).
	Duration time.Duration
	// Output is the perf.data path, opened by internal/output's rules
	// once the events are open, and locked while it is written: a file
	// another recording is writing is refused. It gets its name only once
	// the program (or the timer command) runs: a regular file is rotated
	// to .old then, and a recording that fails before leaves the path as
	// it was. A device, FIFO or socket is written as a pipe-mode stream;
	// "-" is standard output, and the program's standard output then
	// goes to hwprof's stderr.
	Output    string
	DataPages int // pages per ring, a power of two (0: DefaultDataPages)
	// Interrupt delivers SIGINT/SIGTERM. The first one ends the recording
	// (in command mode by sending SIGTERM to the program and waiting for
	// it), a second one kills the program. Stats.Stop says which ended it.
	Interrupt <-chan os.Signal
	// Started, if set, is called once the events are open and the program
	// runs (or the processes are attached).
	Started func(targets []int)
	// Adaptive, if set, tunes every event's period while recording (the
	// events must have been made ready for it: Options.Adapt sets both).
	Adaptive *tuning.Policy
	Tuned    []bool // which events Adaptive tunes (nil: all), from Options.Adapt
	// Status, if set, is called from the recording loop about every
	// StatusInterval with what was recorded so far.
	Status func(Status)
	// ShareRing makes all events of one CPU write into one ring (the
	// CPU's first event's), for recordings of thousands of events such as
	// uprobes; the events need PERF_SAMPLE_IDENTIFIER.
	ShareRing bool
	// BuildIDCache, if set, is filled at the end of the recording with
	// the object files mapped executable by the recorded processes that
	// had samples (an address of a sample's IP, callchain, branch stack
	// or user stack copy in them) and have a build-id (package objcache),
	// read as the recording's build-id table is: for a process in another
	// mount namespace, through /proc/PID/root while it lived.
	BuildIDCache *objcache.Cache
	// Notice, if set, is told once when the recording measures less than
	// asked: events that count the kernel fell back to user space only,
	// as perf record does where perf_event_paranoid forbids the kernel;
	// and of Watch's notes.
	Notice func(msg string)
	// Watch, if set, is called about every WatchInterval while the
	// targets run (command mode and -p) with what they have used. A note
	// it returns goes to Notice; stop ends the recording as the end of
	// Duration does (Stats.Stop is StopLimit, Stats.Limit the note: why).
	// The exact source's cost limit is one (internal/uprobe.Meter).
	Watch func(Usage) (note string, stop bool)
	// Stopped, if set, is called once, at once, when the recording stops
	// before its end because its output cannot be written (a full disk,
	// a pipe whose reader left), with the *WriteError that Record will
	// return (joined with any other error): the caller can say so while
	// the program is still being ended (see WriteError).
	Stopped func(err error)
}

// Record runs one recording. In command mode the error is an
// *launch.ExecError when the program cannot be executed. Whatever was
// recorded before an error is kept in the file.
func Record(o Options) (Stats, error) {
	r, err := newRecorder(o)
	if err != nil {
		return Stats{}, err
	}
	defer r.closeEvents() // also removes probes the events' making defined
	defer r.poller.Close()
	// A path that cannot be written (or that another recording writes)
	// is refused before anything starts; it is opened only once the
	// events are open, and a previous recording rotated only once the
	// targets run.
	if _, err := output.Check(o.Output); err != nil {
		return Stats{}, fmt.Errorf("record: %w", err)
	}
	if len(o.Argv) > 0 {
		err = r.runCommand()
	} else {
		err = r.runAttach()
	}
	t0 := time.Now()
	r.closeEvents()
	r.stats.Detach = time.Since(t0)
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) == nil {
		r.stats.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	r.stats.Events = r.o.Events
	return r.stats, err
}

// TryOpen opens the events of o as Record does in command mode (on every
// online CPU, each with its ring, falling back to user space where Record
// would) for a program started for the purpose, o.Argv, which never runs,
// and closes them again: whether Record can open them here, checked by
// doing it. The Stats say what was opened (Opened, Rings, Events,
// UserOnly); o.Output is not written.
func TryOpen(o Options) (Stats, error) {
	if len(o.Argv) == 0 {
		return Stats{}, errors.New("record: try: no command")
	}
	r, err := newRecorder(o)
	if err != nil {
		return Stats{}, err
	}
	defer r.poller.Close()
	// Closed here: the caller may look at tracefs right after.
	r.foreground = true
	child, err := launch.Start(r.o.Argv)
	if err != nil {
		r.closeEvents()
		return Stats{}, err
	}
	t0 := time.Now()
	err = r.openAll([]int{child.Pid()})
	r.stats.Attach = time.Since(t0)
	child.Abort()
	r.stats.Events = r.o.Events
	t0 = time.Now()
	r.closeEvents()
	r.stats.Detach = time.Since(t0)
	if err == nil {
		err = r.stats.CleanupErr
	}
	return r.stats, err
}

// newRecorder checks o and makes a recorder with its own copy of the
// events (a fallback changes them) and a poller.
func newRecorder(o Options) (*recorder, error) {
	if len(o.Events) == 0 {
		return nil, errors.New("record: no events")
	}
	targets := 0
	for _, t := range []bool{len(o.Argv) > 0, len(o.PIDs) > 0, o.SystemWide} {
		if t {
			targets++
		}
	}
	if targets != 1 {
		return nil, errors.New("record: give one of a command, pids or system-wide")
	}
	if len(o.Timer) > 0 && len(o.Argv) > 0 {
		return nil, errors.New("record: a timer command goes with pids or system-wide, not with a recorded command")
	}
	if o.DataPages == 0 {
		o.DataPages = DefaultDataPages
		if o.ShareRing {
			o.DataPages = SharedDataPages
		}
	}
	if o.DataPages&(o.DataPages-1) != 0 {
		return nil, fmt.Errorf("record: ring size of %d pages is not a power of two", o.DataPages)
	}
	o.Events = slices.Clone(o.Events)
	if o.ShareRing {
		var err error
		if o.Events, err = shareRing(o.Events, o.DataPages*os.Getpagesize()); err != nil {
			return nil, err
		}
	}
	raiseFileLimit()
	r := &recorder{o: o, buildIDs: map[string]int32{}, tried: make([]bool, len(o.Events))}
	r.stats.EventSamples = make([]uint64, len(o.Events))
	var err error
	if r.poller, err = ring.NewPoller(); err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	return r, nil
}

type recorder struct {
	o      Options
	poller *ring.Poller
	cpus   []int
	events []openEvent // every fd opened
	rings  []*ring.Ring
	w      *perfdata.Writer
	out    *output.Output // where w writes
	stats  Stats
	format *perf.SampleFormat // the shared decoder, for the events and their ids
	// the recording's span (sample_time feature): its first and last
	// sample, and when an attached recording's events started and stopped
	timeFirst, timeLast uint64
	buildIDs            map[string]int32 // mapped object path -> first pid
	files               containerFiles   // the files of buildIDs of other mount namespaces
	hits                *hits            // the objects that had samples, with a BuildIDCache
	perfMaps            perfMaps         // the /tmp of processes whose perf maps are not the host's
	liveHits            *hits            // hits, when the output is a stream: fed as samples are read
	synth               []byte           // scratch for synthesized records
	writeErr            error            // the first failed write: the recording stops
	stopErr             *WriteError      // what Record returns for writeErr
	adaptive            *adaptive        // nil unless Options.Adaptive
	tried               []bool           // by event: opened once (or refused), so its attr is settled
	noticed             bool             // Options.Notice was told of the user-only fallback
	foreground          bool             // close here, never in the background (TryOpen)
}

type openEvent struct {
	fd    int
	event int // index in o.Events
	cpu   int
	tid   int
	id    uint64
}
