package record

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/hwprof/hwprof/buildid"
	"github.com/hwprof/hwprof/internal/launch"
	"github.com/hwprof/hwprof/internal/output"
	"github.com/hwprof/hwprof/internal/uprobe"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/perfdata"
	"github.com/hwprof/hwprof/perf/ring"
	"github.com/hwprof/hwprof/perf/synth"
	"github.com/hwprof/hwprof/symbolize"
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
	Events []perf.Event // attrs to open, from perf.BuildAttrs
	Argv   []string     // command mode: the program and its arguments
	PIDs   []int        // attach mode: processes to follow
	// SystemWide records every task on every CPU (perf record -a): the
	// events, built for perf.TargetCPUs, are opened with pid -1, and
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
	// events must have been made ready with PrepareAdaptive).
	Adaptive *tuning.Policy
	Tuned    []bool // which events Adaptive tunes (nil: all), from PrepareAdaptive
	// Status, if set, is called from the recording loop about every
	// StatusInterval with what was recorded so far.
	Status func(Status)
	// ShareRing makes all events of one CPU write into one ring (the
	// CPU's first event's), for recordings of thousands of events such as
	// uprobes; the events need PERF_SAMPLE_IDENTIFIER.
	ShareRing bool
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
	// the first and last sample time (sample_time feature)
	timeFirst, timeLast uint64
	buildIDs            map[string]int32 // mapped object path -> first pid
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

func (r *recorder) runCommand() error {
	var streams launch.Streams
	if output.SharesStdout(r.o.Output) {
		streams.Stdout = os.Stderr // keep the program's output out of the data
	}
	child, err := launch.StartWith(r.o.Argv, streams)
	if err != nil {
		return err
	}
	pid := child.Pid()
	t0 := time.Now()
	err = r.openAll([]int{pid})
	r.stats.Attach = time.Since(t0)
	if err != nil {
		child.Abort()
		return err
	}
	if err := r.create(); err != nil {
		child.Abort()
		return err
	}
	// Until the program runs, a failure leaves the previous recording
	// where it was (abandon).
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		child.Abort()
		return r.abandon(fmt.Errorf("record: watch pid %d: %w", pid, err))
	}
	defer unix.Close(pidfd)
	if err := r.poller.Add(pidfd); err != nil {
		child.Abort()
		return r.abandon(fmt.Errorf("record: %w", err))
	}
	start := time.Now()
	if err := child.Go(); err != nil {
		r.stats.ExitCode = 127
		var ee *launch.ExecError
		if errors.As(err, &ee) {
			r.stats.ExitCode = ee.Code
		}
		return r.abandon(err) // nothing ran
	}
	if err := r.commit(); err != nil {
		child.Signal(syscall.SIGKILL)
		child.Wait()
		return err
	}
	if err := r.startAdaptive(); err != nil {
		child.Signal(syscall.SIGKILL)
		child.Wait()
		return r.finish(err)
	}
	if r.o.Started != nil {
		r.o.Started([]int{pid})
	}
	signals := 0
	var watched time.Time
	r.loop(start, func(ready []int) bool {
		if slices.Contains(ready, pidfd) {
			return true
		}
		select {
		case s := <-r.o.Interrupt:
			signals++
			if r.stats.Stop == StopTargets {
				r.stats.Stop, r.stats.Signal = StopSignal, s
			}
			if signals == 1 {
				child.Signal(syscall.SIGTERM)
			} else {
				child.Signal(syscall.SIGKILL)
			}
		default:
		}
		// The end of the duration and a failed write end the program as
		// perf does (perf stat --timeout, perf record: see WriteError).
		if signals == 0 {
			switch {
			case r.writeErr != nil:
				r.stats.Stop = StopWrite
			case r.o.Duration > 0 && time.Since(start) >= r.o.Duration:
				r.stats.Stop = StopDuration
			default:
				r.watch(start, &watched, []int{pid}) // StopLimit
			}
			if r.stats.Stop != StopTargets {
				signals++
				child.Signal(syscall.SIGTERM)
			}
		}
		return false
	})
	r.stats.ExitCode, err = child.Wait()
	r.stats.Duration = r.elapsed(start)
	return r.finish(err)
}

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

// closeFilesParallel closes files from several threads at once: what
// is left to wait for when the releaser could not be started (see
// release.go) is then shared between threads where the kernel allows.
func closeFilesParallel(files []*os.File) {
	const workers = 64
	var wg sync.WaitGroup
	next := make(chan *os.File)
	for range min(workers, len(files)) {
		wg.Go(func() {
			for f := range next {
				f.Close()
			}
		})
	}
	for _, f := range files {
		next <- f
	}
	close(next)
	wg.Wait()
}

// create writes the file's header and attrs with the ids of every open
// event.
func (r *recorder) create() error {
	attrs := make([]perfdata.EventAttr, len(r.o.Events))
	for i, ev := range r.o.Events {
		// The exact source's probes are written in the uprobe PMU's form
		// (see uprobe.FileAttr); the samples' layout is the same.
		a, _ := uprobe.FileAttr(ev.Attr)
		attrs[i] = perfdata.EventAttr{Attr: a, Name: ev.Name}
	}
	for _, e := range r.events {
		attrs[e.event].IDs = append(attrs[e.event].IDs, e.id)
	}
	r.format, _ = perf.NewSampleFormat()
	for _, a := range attrs {
		if _, err := r.format.Add(a.Attr, a.IDs); err != nil {
			return fmt.Errorf("record: %w", err)
		}
	}
	// Prepared: the file has no name until the targets run (commit).
	out, err := output.Prepare(r.o.Output)
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	var w *perfdata.Writer
	if out.Stream() {
		// A stream cannot seek back to a header: perf's pipe mode, with
		// the features up front.
		w, err = perfdata.NewPipeWriter(out.File, attrs, perfdata.CollectFeatures())
	} else {
		w, err = perfdata.NewWriter(out.File, attrs)
	}
	if err != nil {
		return errors.Join(fmt.Errorf("record: %w", err), out.Discard())
	}
	w.NotifyWritten(r.written) // Stats count what reached the file
	r.w, r.out = w, out
	return r.writeKernelMmap()
}

// discard undoes create when the recording could not start: a file is
// dropped (before commit: the path and its .old were never touched) or
// removed and the previous recording put back; a stream is ended as a
// valid recording without samples.
func (r *recorder) discard() error {
	if r.out.Stream() {
		return r.finish(nil)
	}
	return r.out.Discard()
}

// abandon ends a recording that failed before it started: the output is
// discarded (see discard), and err returned with what that found.
func (r *recorder) abandon(err error) error {
	return errors.Join(err, r.discard())
}

// commit gives the output its path once the targets run: a previous
// recording there becomes .old only now. A commit that fails abandons the
// recording; the caller ends the targets it started.
func (r *recorder) commit() error {
	if err := r.out.Commit(); err != nil {
		return r.abandon(fmt.Errorf("record: %w", err))
	}
	return nil
}

// writeKernelMmap writes the kernel's text mapping as perf does, so that
// kernel addresses in samples resolve, when an event samples the kernel
// and /proc/kallsyms shows addresses.
func (r *recorder) writeKernelMmap() error {
	kernel := false
	for _, ev := range r.o.Events {
		kernel = kernel || !ev.Attr.Flags.Has(perf.FlagExcludeKernel)
	}
	if !kernel {
		return nil
	}
	k, ok, err := synth.ReadKernelText(procRoot)
	if err != nil || !ok {
		return nil // restricted: kernel frames stay unresolved, as with perf
	}
	r.synth = synth.AppendKernelMmap(r.synth[:0], k, r.o.Events[0].Attr.SampleType, synth.SampleID{})
	return r.writeSynthesized(r.synth)
}

// finish writes the feature sections and closes the file; err is the
// recording's own error, returned joined with a *WriteError when a write
// failed (then or before: the Writer writes nothing after its first
// failure, and that failure is reported once).
func (r *recorder) finish(err error) error {
	if r.adaptive != nil {
		r.stats.Periods, r.stats.AdaptiveErr = r.adaptive.changes, r.adaptive.applyErr
		r.stats.ThreadPeriods, r.stats.SampleCPU = r.adaptive.threadPeriods(), r.adaptive.drainTotal
		r.stats.PeriodsFixed = r.adaptive.corrected
	}
	f := perfdata.CollectFeatures()
	f.SampleTimeFirst, f.SampleTimeLast = r.timeFirst, r.timeLast
	if r.writeErr == nil { // else Close writes no features
		f.BuildIDs = r.collectBuildIDs()
	}
	if cerr := r.w.Close(f); cerr != nil && r.writeErr == nil {
		r.writeErr = cerr // the last records or the feature sections
	}
	if r.writeErr != nil {
		if err != nil && errors.Is(err, r.writeErr) {
			err = nil // the same failure, passed up by a writer of records
		}
		if r.stopErr == nil { // it failed at the end, or before the loop
			r.stopErr = r.writeError(false, r.stats.Duration)
		}
		err = errors.Join(err, r.stopErr)
	}
	if r.out.Stream() { // the Writer closed a file, but leaves a stream open
		if cerr := r.out.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("record: close %s: %w", r.o.Output, cerr))
		}
	}
	return err
}

func (r *recorder) collectBuildIDs() []perfdata.BuildID {
	var ids []perfdata.BuildID
	for path, pid := range r.buildIDs {
		id, err := buildid.Read(path)
		if err != nil {
			continue // not an ELF file, or one without a build-id
		}
		ids = append(ids, perfdata.BuildID{PID: pid, Misc: perf.MiscUser, ID: id, Path: path})
	}
	// The kernel's, when an event samples it, as perf record writes it:
	// a report then knows whether /proc/kallsyms (or a kallsyms saved for
	// that build-id) names the kernel addresses.
	kernel := false
	for _, ev := range r.o.Events {
		kernel = kernel || !ev.Attr.Flags.Has(perf.FlagExcludeKernel)
	}
	if kid, err := buildid.Kernel(); kernel && err == nil && !kid.IsZero() {
		ids = append(ids, perfdata.BuildID{PID: -1, Misc: perf.MiscKernel, ID: kid, Path: symbolize.KernelPath})
	}
	return ids
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

// shareRing checks that the events can share a ring and makes each ring
// wake its reader every quarter ring (ring.DefaultWatermark) unless the
// caller chose a wake-up: the kernel takes the wake-up of the event that
// maps the ring, and the default of half a ring leaves a reader that is
// slow to be scheduled too little room when every hit is a sample.
func shareRing(events []perf.Event, dataBytes int) ([]perf.Event, error) {
	out := slices.Clone(events)
	for i := range out {
		a := &out[i].Attr
		if a.SampleType&(perf.SampleIdentifier|perf.SampleID) == 0 && len(out) > 1 {
			return nil, fmt.Errorf("record: %s: events sharing a ring need PERF_SAMPLE_IDENTIFIER or ID", out[i].Name)
		}
		if !a.Flags.Has(perf.FlagWatermark) && a.WakeupEvents == 0 {
			ring.SetWakeup(a, ring.DefaultWatermark(dataBytes))
		}
	}
	return out, nil
}
