package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hwprof/hwprof/internal/engine"
	"github.com/hwprof/hwprof/internal/launch"
	"github.com/hwprof/hwprof/internal/record/release"
	"github.com/hwprof/hwprof/internal/selfexec"
	"github.com/hwprof/hwprof/internal/testenv"
)

// hwprofBin is hwprof built once for the tests that run it as users do.
var hwprofBin string

func TestMain(m *testing.M) {
	// The test binary doubles as the processes hwprof starts of itself
	// (the in-process recordings of exact_test.go start them), with
	// main.go's init.
	if code, ok := selfexec.Run(os.Args); ok {
		os.Exit(code)
	}
	runtime.UnlockOSThread()
	dir, err := os.MkdirTemp("", "hwprof-test")
	if err != nil {
		panic(err)
	}
	hwprofBin = filepath.Join(dir, "hwprof")
	// the build-id cache every recording fills is the tests' own, not
	// the user's (hwprof run by the tests inherits it)
	os.Setenv("HWPROF_BUILDID_DIR", filepath.Join(dir, "buildid"))
	workloadData = filepath.Join(dir, "workload.data")
	// The pretended machine of TestGoldenOnAnotherKernel runs only
	// TestGolden, whose commands all run in this process: no binary.
	if os.Getenv(pretendKernelEnv) == "" {
		build := exec.Command("go", "build", "-o", hwprofBin, ".")
		build.Stderr = os.Stderr
		if err := build.Run(); err != nil {
			panic("build hwprof: " + err.Error())
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// workloadData is the recording of the built-in workload that the tests
// which only read one share (workloadRecording), made once per test
// process.
var (
	workloadData    string
	workloadOnce    sync.Once
	workloadResult  result
	workloadSamples int
)

// workloadRecording returns the shared recording of the built-in
// workload (record -g, 500 ms of its CPU time) and the samples hwprof
// said it wrote. Tests only read it.
func workloadRecording(t *testing.T) (string, int) {
	t.Helper()
	needPerfEvents(t)
	workloadOnce.Do(func() {
		workloadResult = hwprofExec(t, "record", "-g", "-o", workloadData, "--", hwprofBin, workloadArg, "500ms")
		if workloadResult.code == 0 {
			if m := recordedRE.FindStringSubmatch(workloadResult.stderr); m != nil {
				workloadSamples, _ = strconv.Atoi(m[1])
			}
		}
	})
	if workloadResult.code != 0 || workloadSamples == 0 {
		t.Fatalf("record the shared workload: exit %d, %d samples\n%s", workloadResult.code, workloadSamples, workloadResult.stderr)
	}
	return workloadData, workloadSamples
}

type result struct {
	code           int
	stdout, stderr string
}

// hwprof runs hwprof with args as a user does. The commands that only
// read recordings (report, script, dump, diff, merge, flamegraph) run in
// this process, through run, unless they read standard input; the others
// (record, demo, compare, check: they start programs, take signals and
// exit with their status) run the binary hwprofBin.
func hwprof(t *testing.T, args ...string) result {
	t.Helper()
	if inProcess(args) {
		var out, errb bytes.Buffer
		code := run(args, &out, &errb)
		return result{code: code, stdout: out.String(), stderr: errb.String()}
	}
	return hwprofExec(t, args...)
}

// inProcess reports whether hwprof args can run in the test's process.
func inProcess(args []string) bool {
	if len(args) == 0 || slices.Contains(args, "-") {
		return false
	}
	switch args[0] {
	case "report", "script", "dump", "diff", "merge", "flamegraph":
		return true
	}
	return false
}

// hwprofExec runs the hwprof binary with args.
func hwprofExec(t *testing.T, args ...string) result {
	t.Helper()
	return runCmd(t, exec.Command(hwprofBin, args...))
}

// runCmd runs cmd (its standard output and error collected; set its
// Dir, Env, Stdin or credentials before) and returns its exit status
// (128+N when signal N killed it) and output. A command that cannot be
// started fails the test.
func runCmd(t *testing.T, cmd *exec.Cmd) result {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
		if ws := ee.Sys().(syscall.WaitStatus); ws.Signaled() {
			r.code = 128 + int(ws.Signal())
		}
	} else if err != nil {
		t.Fatalf("run %q: %v", cmd.Args, err)
	}
	return r
}

// TestHelperProcesses runs the binary as the processes hwprof starts of
// itself, which main dispatches before anything else: a releaser with no
// events exits 0, a trampoline without a program 2, both silently.
func TestHelperProcesses(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{release.Arg, "0"}, 0},
		{[]string{launch.Arg}, 2},
	} {
		if r := hwprofExec(t, tc.args...); r.code != tc.want || r.stdout != "" || r.stderr != "" {
			t.Errorf("hwprof %q: exit %d, stdout %q, stderr %q; want exit %d and no output", tc.args, r.code, r.stdout, r.stderr, tc.want)
		}
	}
}

// needPerfEvents skips the test when this machine cannot open a
// cpu-clock event (checked with a raw perf_event_open, not with hwprof:
// a failure of hwprof record fails the test).
func needPerfEvents(t *testing.T) {
	t.Helper()
	testenv.PerfEvents(t)
}

// roundsRE reads the "rounds N" line a test program prints.
var roundsRE = regexp.MustCompile(`(?m)^rounds (\d+)$`)

// roundsRun is the number of rounds a test program says it ran.
func roundsRun(t *testing.T, stdout string) uint64 {
	t.Helper()
	m := roundsRE.FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("the program printed no rounds line:\n%s", stdout)
	}
	n, _ := strconv.ParseUint(m[1], 10, 64)
	return n
}

var recordedRE = regexp.MustCompile(`recorded (\d+) samples`)

// samplesWritten reads the sample count hwprof reports.
func samplesWritten(t *testing.T, stderr string) int {
	t.Helper()
	m := recordedRE.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no sample count in:\n%s", stderr)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// perfSamples counts the samples perf script reads from file and fails
// on anything perf prints on stderr.
func perfSamples(t *testing.T, file string) (int, bool) {
	t.Helper()
	if _, err := exec.LookPath("perf"); err != nil {
		return 0, false
	}
	cmd := exec.Command("perf", "script", "-F", "pid", "-i", file)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("perf script -i %s: %v\n%s", file, err, errb.String())
	}
	if s := strings.TrimSpace(errb.String()); s != "" {
		t.Errorf("perf script complained:\n%s", s)
	}
	return strings.Count(string(out), "\n"), true
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "usage"},
		{[]string{"frobnicate"}, "unknown command"},
		{[]string{"record"}, "nothing to record"},
		{[]string{"record", "-p", "abc"}, "bad pid"},
		{[]string{"record", "-p", "1", "-a"}, "not both"},
		{[]string{"record", "-m", "3", "--", "true"}, "power of two"},
		{[]string{"record", "--no-such-flag"}, "not defined"},
		{[]string{"record", "-e", "no-such-event", "--", "true"}, "no-such-event"},
		{[]string{"record", "--adaptive", "-c", "1000", "--", "true"}, "leave out -c and -F"},
		{[]string{"record", "--adaptive", "--no-adaptive", "--", "true"}, "contradict"},
		{[]string{"record", "--adaptive=20%,10%", "--", "true"}, "adaptive"},
	} {
		r := hwprof(t, tc.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("hwprof %q: exit %d, stderr %q; want exit 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}

func TestDemo(t *testing.T) {
	t.Parallel()
	needPerfEvents(t)
	out := filepath.Join(t.TempDir(), "demo.data")
	r := hwprof(t, "demo", "-o", out)
	if r.code != 0 {
		t.Fatalf("demo: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	n := samplesWritten(t, r.stderr)
	if n < 500 {
		t.Errorf("demo recorded only %d samples", n)
	}
	if got, ok := perfSamples(t, out); ok && got != n {
		t.Errorf("perf script counts %d samples, hwprof says %d", got, n)
	}
	// The flame graph of the recording, next to it and named.
	page := strings.TrimSuffix(out, ".data") + ".html"
	if !strings.Contains(r.stdout, "its flame graph is "+page) {
		t.Errorf("demo does not say where its flame graph is:\n%s", r.stdout)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	p, err := engine.Load(out, engine.LoadOptions{})
	if p == nil {
		t.Fatal(err)
	}
	if got, want := pageTime(t, string(b)), float64(p.Map.Totals().Samples); got != want || want == 0 {
		t.Errorf("the demo's flame graph weighs %v, its recording %v", got, want)
	}
}

func TestRecordExitStatus(t *testing.T) {
	needPerfEvents(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		argv []string
		code int
		msg  string
	}{
		{[]string{"sh", "-c", "exit 3"}, 3, ""},
		{[]string{"sh", "-c", "kill -KILL $$"}, 128 + 9, ""},
		{[]string{"./no-such-program"}, 127, "cannot execute ./no-such-program"},
		{[]string{dir}, 126, "cannot execute"},
	} {
		args := append([]string{"record", "-q", "-o", filepath.Join(dir, "x.data"), "--"}, tc.argv...)
		r := hwprof(t, args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.msg) {
			t.Errorf("record %q: exit %d, stderr %q; want %d and %q", tc.argv, r.code, r.stderr, tc.code, tc.msg)
		}
	}
}

// startHwprof starts `hwprof record` on the built-in workload, to run for
// d of CPU time (the tests end it earlier).
func startHwprof(t *testing.T, out string, d time.Duration) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(hwprofBin, "record", "-g", "-o", out, "--", hwprofBin, workloadArg, d.String())
	var errb bytes.Buffer
	cmd.Stderr = &errb
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &errb
}

// waitForFile waits until hwprof has created its output file: the events
// are open and the program is about to run.
func waitForFile(t *testing.T, path string) {
	t.Helper()
	for range 300 {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("hwprof did not create %s within 6s", path)
}

// SIGTERM to hwprof ends the program cleanly (SIGTERM); hwprof says so and
// exits 0, a recording stopped as asked, and the file is complete.
func TestSIGTERM(t *testing.T) {
	t.Parallel() // its own programs and files
	needPerfEvents(t)
	out := filepath.Join(t.TempDir(), "term.data")
	cmd, errb := startHwprof(t, out, time.Minute)
	waitForFile(t, out) // the events are open
	time.Sleep(300 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil || !strings.Contains(errb.String(), "terminated (SIGTERM): recording stopped") {
		t.Fatalf("hwprof: %v, want exit 0 and a word of the SIGTERM\n%s", err, errb)
	}
	n := samplesWritten(t, errb.String())
	if got, ok := perfSamples(t, out); ok && got != n {
		t.Errorf("perf script counts %d samples, hwprof says %d", got, n)
	}
}

// A recording whose hwprof was killed with SIGKILL is still readable,
// with at most the last second lost.
func TestSIGKILLKeepsRecording(t *testing.T) {
	t.Parallel()
	needPerfEvents(t)
	out := filepath.Join(t.TempDir(), "kill.data")
	cmd, _ := startHwprof(t, out, time.Minute)
	waitForFile(t, out)
	time.Sleep(2500 * time.Millisecond)
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // hwprof and the program
	cmd.Wait()
	if _, ok := perfSamples(t, out); !ok {
		t.Skip("perf not installed: cannot check the killed recording")
	}
	// The samples perf reads span the recording up to the last checkpoint:
	// 2.5 s, less the program's start-up (up to ~0.6 s on a loaded
	// machine) and at most the checkpoint interval plus one poll (1.1 s).
	// (Their number depends on how much CPU the program got.)
	span := perfTimeSpan(t, out)
	if span < 0.7 {
		t.Errorf("the samples perf reads from a recording killed after 2.5s span only %.2fs", span)
	}
}

// perfTimeSpan is the time between the first and the last sample perf
// script reads, in seconds.
func perfTimeSpan(t *testing.T, file string) float64 {
	t.Helper()
	out, err := exec.Command("perf", "script", "-F", "time", "-i", file).Output()
	if err != nil {
		t.Fatalf("perf script -F time: %v", err)
	}
	var first, last float64
	for line := range strings.Lines(string(out)) {
		v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(line), ":"), 64)
		if err != nil {
			continue
		}
		if first == 0 {
			first = v
		}
		last = v
	}
	return last - first
}

func TestCheck(t *testing.T) {
	r := hwprof(t, "check")
	if r.code != 0 {
		t.Fatalf("check: exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"perf_event_paranoid", "timer", "lbr", "calls", "exact", "default source"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("check output lacks %q:\n%s", want, r.stdout)
		}
	}
	if _, err := os.Stat("/sys/bus/event_source/devices/cpu"); os.IsNotExist(err) {
		if !regexp.MustCompile(`lbr +not here +no hardware PMU`).MatchString(r.stdout) {
			t.Errorf("no cpu PMU here, but check does not say so for lbr:\n%s", r.stdout)
		}
		if !regexp.MustCompile(`use --source timer`).MatchString(r.stdout) {
			t.Errorf("check does not point to the timer source:\n%s", r.stdout)
		}
	}
}

// `hwprof record --print-attr --leaf-copy 0` prints the attr `perf record
// -vv` prints for the same options (the perf package's test covers many
// more rows; this one goes through the command line). Without --leaf-copy
// 0 a frame-pointer call graph also copies the stack (TestLeafCopyFlag).
func TestPrintAttrMatchesPerf(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("perf"); err != nil {
		t.Skip("perf not installed")
	}
	argss := [][]string{
		{"-e", "cycles:u", "-j", "any_call,u", "-c", "100003"},
		{"-e", "cpu-clock", "-g"},
		{"-e", "task-clock", "--call-graph", "dwarf,4096", "-c", "10007"},
		{"-e", "r20c4:u", "--call-graph", "lbr"},
	}
	// perf's commands all at once: each waits about a second before it
	// exits (perfAttrs)
	outs := make([][]byte, len(argss))
	var wg sync.WaitGroup
	for i, args := range argss {
		cmd := exec.Command("perf", append(append([]string{"record", "-vv"}, args...), "-o", filepath.Join(t.TempDir(), "p.data"), "--", "true")...)
		wg.Go(func() { outs[i], _ = cmd.CombinedOutput() }) // fails without a PMU after printing
	}
	wg.Wait()
	for i, args := range argss {
		// --no-adaptive: perf's default frequency, as perf record has it.
		r := hwprof(t, append(append([]string{"record", "--print-attr", "--no-adaptive", "--leaf-copy", "0"}, args...), "--", "true")...)
		if r.code != 0 {
			t.Fatalf("print-attr %q: %s", args, r.stderr)
		}
		out := outs[i]
		var block []string
		in := false
		for line := range strings.Lines(string(out)) {
			line = strings.TrimRight(line, "\n")
			if line == "perf_event_attr:" {
				in = true
			} else if in && strings.HasPrefix(line, "-----") {
				break
			}
			if in {
				block = append(block, line)
			}
		}
		want := strings.Join(block, "\n") + "\n"
		if r.stdout != want {
			t.Errorf("print-attr %q:\nhwprof:\n%sperf:\n%s", args, r.stdout, want)
		}
	}
}
