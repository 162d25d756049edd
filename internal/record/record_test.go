package record

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hwprof/hwprof/internal/launch"
	"github.com/hwprof/hwprof/internal/selfexec"
	"github.com/hwprof/hwprof/internal/testenv"
	"github.com/hwprof/hwprof/internal/testprog"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/event"
	"github.com/hwprof/hwprof/perf/perfdata"
	"github.com/hwprof/hwprof/tuning"
)

// init keeps the main goroutine on the main thread into TestMain, for the
// launcher trampoline (see launch.Main).
func init() { runtime.LockOSThread() }

// The test binary doubles as the launcher trampoline and the releaser of
// perf events, as hwprof does, and as the recorded program: "workload MS
// THREADS" burns MS milliseconds of CPU time (by the thread's CPU clock: a loaded
// machine stretches the run instead of thinning the samples, and a fast
// CPU does not shorten it) on the main thread, and half as much on each
// of THREADS threads started one after the other (so some exist only
// after recording began). Each thread prints its tid when it starts.
func TestMain(m *testing.M) {
	if code, ok := selfexec.Run(os.Args); ok {
		os.Exit(code)
	}
	runtime.UnlockOSThread()
	if len(os.Args) == 4 && os.Args[1] == "workload" {
		ms, _ := strconv.Atoi(os.Args[2])
		threads, _ := strconv.Atoi(os.Args[3])
		workload(time.Duration(ms)*time.Millisecond, threads)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func workload(d time.Duration, threads int) {
	runtime.LockOSThread() // burn reads this thread's CPU clock
	var wg sync.WaitGroup
	for i := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread() // a thread of its own, made after start
			time.Sleep(time.Duration(i) * d / time.Duration(2*threads))
			fmt.Println("thread", syscall.Gettid())
			burn(d / 2)
		}()
	}
	burn(d)
	wg.Wait()
}

// burn works until the calling thread (locked to its goroutine) has used
// d of CPU time.
//
//go:noinline
func burn(d time.Duration) uint64 {
	var x uint64
	for i := 0; i&0xffff != 0 || threadCPU() < d; i++ {
		x = x*31 + uint64(i)
	}
	return x
}

// cpuClock is the attr perf builds for `-e cpu-clock -c PERIOD -g` with a
// command, set by hand so this package's tests do not depend on the parser.
func cpuClock(period uint64, target event.Target) perf.Event {
	a := perf.Attr{
		Type:         perf.TypeSoftware,
		Config:       perf.SWCPUClock,
		SamplePeriod: period,
		SampleType:   perf.SampleIP | perf.SampleTID | perf.SampleTime | perf.SampleCallchain | perf.SamplePeriod,
		ReadFormat:   perf.FormatID | perf.FormatLost,
		Flags: perf.FlagDisabled | perf.FlagInherit | perf.FlagMmap | perf.FlagComm |
			perf.FlagTask | perf.FlagSampleIDAll | perf.FlagExcludeGuest | perf.FlagMmap2 |
			perf.FlagCommExec,
	}
	if target == event.TargetCommand {
		a.Flags |= perf.FlagEnableOnExec
	}
	return perf.Event{Name: "cpu-clock", Attr: a}
}

// needPerfEvents skips when this machine cannot open a cpu-clock event,
// checked with a raw perf_event_open (not perf.Open, which is hwprof's).
func needPerfEvents(t *testing.T) {
	t.Helper()
	testenv.PerfEvents(t)
}

func TestRecordCommand(t *testing.T) {
	needPerfEvents(t)
	out := filepath.Join(t.TempDir(), "rec.data")
	var child int
	st, err := Record(Options{
		Events:  []perf.Event{cpuClock(100_000, event.TargetCommand)}, // 10 kHz per CPU
		Argv:    []string{os.Args[0], "workload", "400", "2"},
		Output:  out,
		Started: func(pids []int) { child = pids[0] },
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.ExitCode != 0 {
		t.Errorf("exit code %d", st.ExitCode)
	}
	// 400 ms on the main thread plus 2×200 ms at 10 kHz: about 8000.
	if st.Samples < 2000 {
		t.Errorf("only %d samples", st.Samples)
	}
	if st.Lost+st.LostSamples != 0 {
		t.Errorf("lost %d+%d samples", st.Lost, st.LostSamples)
	}
	perfReportClean(t, out)
	pids := perfScriptPIDs(t, out, st.Samples)
	for pid, n := range pids {
		if pid != child {
			t.Errorf("%d samples of pid %d, not of the program (pid %d): hwprof measured itself", n, pid, child)
		}
	}
}

// perfReportClean runs `perf report --stdio` on the file: it must exit 0
// and print nothing on stderr.
func perfReportClean(t *testing.T, file string) {
	t.Helper()
	if _, err := exec.LookPath("perf"); err != nil {
		return
	}
	cmd := exec.Command("perf", "report", "--stdio", "-i", file)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("perf report: %v\n%s", err, stderr.String())
	}
	if s := strings.TrimSpace(stderr.String()); s != "" {
		t.Errorf("perf report complained:\n%s", s)
	}
	if !bytes.Contains(out, []byte("# Samples:")) {
		t.Errorf("perf report shows no samples:\n%s", out)
	}
}

// perfScriptPIDs runs `perf script` on the file, checks it reads every
// sample without complaint, and counts samples per pid.
func perfScriptPIDs(t *testing.T, file string, samples uint64) map[int]int {
	t.Helper()
	return perfScriptCount(t, file, "pid", samples)
}

// perfScriptCount counts samples per value of a numeric perf script field.
func perfScriptCount(t *testing.T, file, field string, samples uint64) map[int]int {
	t.Helper()
	if _, err := exec.LookPath("perf"); err != nil {
		t.Logf("perf not installed: not cross-checking %s", file)
		return nil
	}
	cmd := exec.Command("perf", "script", "-F", field, "-i", file)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("perf script: %v\n%s", err, stderr.String())
	}
	if s := strings.TrimSpace(stderr.String()); s != "" {
		t.Errorf("perf script complained:\n%s", s)
	}
	pids := map[int]int{}
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		pid, err := strconv.Atoi(strings.TrimSpace(sc.Text()))
		if err != nil {
			t.Fatalf("perf script line %q", sc.Text())
		}
		pids[pid]++
		n++
	}
	if uint64(n) != samples {
		t.Errorf("perf script read %d samples, hwprof wrote %d", n, samples)
	}
	return pids
}

func TestExitStatusPassedOn(t *testing.T) {
	needPerfEvents(t)
	for _, tc := range []struct {
		argv []string
		want int
	}{
		{[]string{"sh", "-c", "exit 7"}, 7},
		{[]string{"sh", "-c", "kill -SEGV $$"}, 128 + int(syscall.SIGSEGV)},
	} {
		st, err := Record(Options{
			Events: []perf.Event{cpuClock(100_000, event.TargetCommand)},
			Argv:   tc.argv,
			Output: filepath.Join(t.TempDir(), "x.data"),
		})
		if err != nil || st.ExitCode != tc.want {
			t.Errorf("%q: exit %d, %v; want %d", tc.argv, st.ExitCode, err, tc.want)
		}
	}
}

func TestCannotExecute(t *testing.T) {
	needPerfEvents(t)
	_, err := Record(Options{
		Events: []perf.Event{cpuClock(100_000, event.TargetCommand)},
		Argv:   []string{"./does-not-exist"},
		Output: filepath.Join(t.TempDir(), "x.data"),
	})
	var ee *launch.ExecError
	if !errors.As(err, &ee) || ee.Code != 127 {
		t.Fatalf("err = %v, want ExecError 127", err)
	}
}

// An interrupt ends the program with SIGTERM; the file is complete.
func TestInterrupt(t *testing.T) {
	needPerfEvents(t)
	sig := make(chan os.Signal, 1)
	out := filepath.Join(t.TempDir(), "x.data")
	st, err := Record(Options{
		Events:    []perf.Event{cpuClock(100_000, event.TargetCommand)},
		Argv:      []string{os.Args[0], "workload", "20000", "1"},
		Output:    out,
		Interrupt: sig,
		Started:   func([]int) { time.AfterFunc(300*time.Millisecond, func() { sig <- syscall.SIGINT }) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.Stop != StopSignal || st.Signal != syscall.SIGINT || st.ExitCode != 128+int(syscall.SIGTERM) {
		t.Errorf("stop %v (%v), exit %d; want %v (interrupt), %d", st.Stop, st.Signal, st.ExitCode, StopSignal, 128+int(syscall.SIGTERM))
	}
	if st.Duration > 5*time.Second {
		t.Errorf("took %v to stop", st.Duration)
	}
	perfScriptPIDs(t, out, st.Samples)
}

// Attaching follows existing threads and threads created later, and
// writes the process's mappings first.
func TestAttach(t *testing.T) {
	needPerfEvents(t)
	cmd := exec.Command(os.Args[0], "workload", "800", "3")
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	time.Sleep(100 * time.Millisecond) // let it start
	out := filepath.Join(t.TempDir(), "attach.data")
	st, err := Record(Options{
		Events: []perf.Event{cpuClock(100_000, event.TargetPIDs)},
		PIDs:   []int{cmd.Process.Pid},
		Output: out,
	})
	if err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if st.Samples < 1000 {
		t.Errorf("only %d samples", st.Samples)
	}
	if st.Duration < 700*time.Millisecond {
		t.Errorf("recording lasted %v; the process ran at least 0.8s", st.Duration)
	}
	perfReportClean(t, out)
	if pids := perfScriptPIDs(t, out, st.Samples); pids != nil && len(pids) != 1 {
		t.Errorf("samples of pids %v, want only %d", pids, cmd.Process.Pid)
	}
	// The last burning thread starts 270 ms after the process, 170 ms
	// after the recording began: its samples show that threads created
	// after attaching are followed.
	var late int
	for line := range strings.Lines(stdout.String()) {
		fmt.Sscanf(line, "thread %d", &late)
	}
	if tids := perfScriptCount(t, out, "tid", st.Samples); tids != nil && tids[late] < 50 {
		t.Errorf("samples per thread %v: the thread created after attaching (tid %d) has %d", tids, late, tids[late])
	}
}

func TestAttachDuration(t *testing.T) {
	needPerfEvents(t)
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	st, err := Record(Options{
		Events:   []perf.Event{cpuClock(100_000, event.TargetPIDs)},
		PIDs:     []int{cmd.Process.Pid},
		Output:   filepath.Join(t.TempDir(), "x.data"),
		Duration: 300 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.Duration < 300*time.Millisecond || st.Duration > 2*time.Second {
		t.Errorf("duration %v, want 300ms", st.Duration)
	}
	if st.Records == 0 {
		t.Error("no records: the mappings of the process should have been synthesized")
	}
}

func TestAttachNoSuchProcess(t *testing.T) {
	needPerfEvents(t)
	_, err := Record(Options{
		Events: []perf.Event{cpuClock(100_000, event.TargetPIDs)},
		PIDs:   []int{1 << 22},
		Output: filepath.Join(t.TempDir(), "x.data"),
	})
	if err == nil || !strings.Contains(err.Error(), "no process") {
		t.Fatalf("err = %v, want no such process", err)
	}
}

// The adaptive controller changes the period live, and the samples'
// PERIOD fields follow it: the period history is in the recording.
func TestAdaptivePeriodApplied(t *testing.T) {
	needPerfEvents(t)
	events, p, tuned := adaptiveCPUClock(t)
	start := events[0].Attr.SamplePeriod
	out := filepath.Join(t.TempDir(), "adaptive.data")
	// A tight loop in main of a single-threaded C program with frame
	// pointers (the kernel changes the period of the task hwprof opened,
	// not of threads that inherited the event before the change): every
	// sample has the same top frame, so the share of repeats is far above
	// 15% and the period must grow. The controller first judges after
	// MinSamples (1000) samples, 1 s of CPU at the start period of 1 ms
	// (sooner only if the budget rule acts): the loop runs for 2.5 s of
	// CPU time, leaving 1.5 s (≥ 180 samples at the largest period, 8 ms)
	// after the change, whatever the CPU's speed or the machine's load.
	prog := testprog.Build(t, "c/mainloop.c", "-O1", "-fno-omit-frame-pointer")
	st := recordAdaptive(t, Options{
		Events: events, Argv: []string{prog, "2500"},
		Output: out, Adaptive: &p, Tuned: tuned,
	})
	if len(st.Periods) == 0 {
		t.Fatalf("no period change in %d samples", st.Samples)
	}
	final := st.Periods[len(st.Periods)-1].Period
	if final <= start {
		t.Errorf("period went %d → %d; a loop without calls must grow it", start, final)
	}
	for _, c := range st.Periods {
		t.Logf("%.3fs period %d: %s", c.Time.Seconds(), c.Period, c.Reason)
	}
	// The samples in the file: after the change they come at the new
	// interval. (Their PERIOD field keeps the start period: for hrtimer
	// clock events the kernel does not update it; see adaptive.go. The
	// test pins that kernel behaviour, so a kernel that fixes it is
	// noticed.)
	r, err := perfdata.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var times, periods []uint64
	var s perf.Sample
	for r.Next() {
		if r.Record().Type() != perf.RecordSample {
			continue
		}
		if err := r.DecodeSample(&s); err != nil {
			t.Fatal(err)
		}
		times = append(times, s.Time)
		periods = append(periods, s.Period)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	// The samples between the first change and the next one (if any), at
	// the first change's period: the controller may change it again near
	// the end, too late for its own samples to be judged.
	changed := uint64(st.Periods[0].Time) // since the recording began, roughly
	next, inForce := uint64(1<<63), st.Periods[0].Period
	if len(st.Periods) > 1 {
		next = uint64(st.Periods[1].Time)
	}
	var late []uint64
	for i := 1; i < len(times); i++ {
		if at := times[i] - times[0]; at > changed+uint64(200*time.Millisecond) && at < next {
			late = append(late, times[i]-times[i-1])
		}
	}
	if len(late) < 10 {
		t.Fatalf("only %d samples after the change", len(late))
	}
	// Samples stand for CPU time: n samples per n periods of it, and wall
	// time is at least CPU time, so the mean gap is at least the period.
	// (Single gaps can be shorter: each CPU's event keeps its own remaining
	// period, so a task that migrates can be sampled early.)
	var sum uint64
	for _, g := range late {
		sum += g
	}
	// Without the change the mean gap would be the start period (1 ms),
	// more only on a machine so loaded that the loop gets under a quarter
	// of a CPU. (Before the launcher waited for the trampoline's threads,
	// the program ran with inherited copies of the events in about half the
	// runs, and the ioctl did not reach them: see package launch.)
	mean := sum / uint64(len(late))
	t.Logf("mean gap between samples after the change: %d ns (period %d)", mean, inForce)
	if mean < inForce/3 { // a third: migrating tasks are sometimes sampled early
		t.Errorf("mean gap after the change %d ns, want about the new period %d ns: the change did not take effect", mean, inForce)
	}
	// The samples' PERIOD fields follow the change: the kernel leaves a
	// clock event's field at the creation period, and the recorder writes
	// the period in force into the samples of the events it changed.
	if st.PeriodsFixed == 0 {
		t.Errorf("no PERIOD field corrected")
	}
	wrong, checked := 0, 0
samples:
	for i, p := range periods {
		at := time.Duration(times[i] - times[0])
		want := start
		for _, c := range st.Periods {
			if at > c.Time-50*time.Millisecond && at < c.Time+200*time.Millisecond {
				continue samples // too near a change to say which period held
			}
			if at > c.Time {
				want = c.Period
			}
		}
		checked++
		if p != want {
			wrong++
		}
	}
	if wrong > 0 || checked < len(periods)/2 {
		t.Errorf("%d of %d samples checked carry a PERIOD other than the one in force (%d samples in all)",
			wrong, checked, len(periods))
	}
}

// recordAdaptive records o, whose period is tuned, and fails the test if
// the recording or a period change failed.
func recordAdaptive(t *testing.T, o Options) Stats {
	t.Helper()
	st, err := Record(o)
	if err != nil {
		t.Fatal(err)
	}
	if st.AdaptiveErr != nil {
		t.Fatal(st.AdaptiveErr)
	}
	return st
}

// adaptiveCPUClock is a cpu-clock event of the command at perf's default
// frequency, prepared for the adaptive controller under a budget of 2%
// (prepareAdaptive replaces the frequency by its start period), with
// prepareAdaptive's tuned flags. With a budget the accuracy rule moves the
// period, as these tests of how a change is applied need; the default
// holds it near perf's rate (TestAdaptiveLoadIsNotCost).
func adaptiveCPUClock(t *testing.T) ([]perf.Event, tuning.Policy, []bool) {
	return adaptiveCPUClockWith(t, budgeted(t), func([]perf.Event) {})
}

// budgeted is the policy of --adaptive=1%,15%,2%.
func budgeted(t *testing.T) tuning.Policy {
	t.Helper()
	p, err := tuning.ParsePolicy("1%,15%,2%")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// adaptiveCPUClockWith is adaptiveCPUClock under policy p, with prepare
// applied to the events before prepareAdaptive (hwprof record adds the
// leaf copy first).
func adaptiveCPUClockWith(t *testing.T, p tuning.Policy, prepare func([]perf.Event)) ([]perf.Event, tuning.Policy, []bool) {
	t.Helper()
	ev := cpuClock(0, event.TargetCommand)
	ev.Attr.SamplePeriod, ev.Attr.Flags = event.DefaultFreq, ev.Attr.Flags|perf.FlagFreq
	events := []perf.Event{ev}
	prepare(events)
	tuned, err := prepareAdaptive(events, p, false)
	if err != nil || !tuned[0] {
		t.Fatalf("prepareAdaptive: %v %v", tuned, err)
	}
	return events, p, tuned
}
