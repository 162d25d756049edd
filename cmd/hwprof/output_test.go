package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/perfdata"
	"golang.org/x/sys/unix"
)

// busyFor is a program that burns CPU until hwprof's --duration ends it
// (SIGTERM): a live workload bounded by time, not by an amount of work.
// It first prints a line on its standard output.
var busyFor = []string{"--duration", "1s", "--", "sh", "-c", "echo program-output; while :; do :; done"}

// busyExit is hwprof's exit status after --duration ends busyFor: 0, a
// recording stopped as asked (the program's status is 143, SIGTERM).
const busyExit = 0

// previous writes a stand-in for an earlier recording at path.
func previous(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, []byte("previous recording"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// kept fails the test unless path still holds what previous wrote and no
// .old was made.
func kept(t *testing.T, what, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || string(b) != "previous recording" {
		t.Errorf("%s: %s now holds %q... (%d bytes, %v), want the previous recording", what, path, b[:min(len(b), 24)], len(b), err)
	}
	if _, err := os.Lstat(path + ".old"); err == nil {
		t.Errorf("%s: %s.old was made", what, path)
	}
}

// A typo leaves the previous recording where it was: the output is opened
// (and an existing file rotated) only once the program, the pids and the
// events were checked and opened.
func TestRecordFailureKeepsPrevious(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "rec.data")
	notExec := filepath.Join(dir, "script.sh") // found and executable, but execve fails
	if err := os.WriteFile(notExec, []byte("#!/no/such/interpreter\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		live bool // the events are opened before the failure
	}{
		{"no such pid", []string{"-p", "999999"}, false},
		{"missing command", []string{"--", "./no-such-program"}, false},
		{"bad event", []string{"-e", "no-such-event", "--", "true"}, false},
		{"bad event modifier", []string{"-e", "cpu-clock:zz", "--", "true"}, false},
		{"execve fails after the opens", []string{"--", notExec}, true},
	} {
		if tc.live {
			needPerfEvents(t)
		}
		previous(t, out)
		r := hwprof(t, append([]string{"record", "-q", "-o", out}, tc.args...)...)
		if r.code == 0 {
			t.Errorf("%s: exit 0", tc.name)
		}
		kept(t, tc.name, out)
	}
}

func TestRecordRotatesRegularFile(t *testing.T) {
	needPerfEvents(t)
	out := filepath.Join(t.TempDir(), "rec.data")
	previous(t, out)
	if r := hwprof(t, "record", "-q", "-o", out, "--", "true"); r.code != 0 {
		t.Fatalf("record: exit %d\n%s", r.code, r.stderr)
	}
	if b, err := os.ReadFile(out + ".old"); err != nil || string(b) != "previous recording" {
		t.Errorf("%s.old holds %q (%v), want the previous recording", out, b, err)
	}
	if r, err := perfdata.Open(out); err != nil {
		t.Errorf("the new recording: %v", err)
	} else {
		r.Close()
	}
}

// A .old that cannot be replaced (a non-empty directory) makes the
// rotation fail: an error, before the program runs, and the old file
// stays.
func TestRecordRotationFailure(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "rec.data")
	previous(t, out)
	if err := os.MkdirAll(filepath.Join(out+".old", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(dir, "ran")
	r := hwprof(t, "record", "-q", "-o", out, "--", "touch", marker)
	if r.code == 0 || !strings.Contains(r.stderr, out+".old") {
		t.Errorf("exit %d, stderr %q; want an error naming %s.old", r.code, r.stderr, out)
	}
	if b, err := os.ReadFile(out); err != nil || string(b) != "previous recording" {
		t.Errorf("%s holds %q (%v), want the previous recording", out, b, err)
	}
	if _, err := os.Stat(filepath.Join(out+".old", "sub")); err != nil {
		t.Errorf("the .old directory changed: %v", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the program ran although the output was refused")
	}
}

func TestRecordToDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	if err := os.MkdirAll(filepath.Join(dir, "inside"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := hwprof(t, "record", "-q", "-o", dir, "--", "true")
	if r.code == 0 || !strings.Contains(r.stderr, dir) || !strings.Contains(r.stderr, "directory") {
		t.Errorf("record -o DIR: exit %d, stderr %q; want an error naming the directory", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "inside")); err != nil {
		t.Errorf("the directory changed: %v", err)
	}
	if _, err := os.Lstat(dir + ".old"); err == nil {
		t.Error("the directory was rotated")
	}
}

// -o /dev/null, and a link to it, write into the device: as root the
// device node was once replaced by a regular file.
func TestRecordDevNull(t *testing.T) {
	needPerfEvents(t)
	var before unix.Stat_t
	if err := unix.Stat(os.DevNull, &before); err != nil || before.Mode&unix.S_IFMT != unix.S_IFCHR {
		t.Skipf("%s is not a character device here", os.DevNull)
	}
	link := filepath.Join(t.TempDir(), "null.data")
	if err := os.Symlink(os.DevNull, link); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{os.DevNull, link} {
		if r := hwprof(t, "record", "-q", "-o", out, "--", "true"); r.code != 0 {
			t.Errorf("record -o %s: exit %d\n%s", out, r.code, r.stderr)
		}
		var after unix.Stat_t
		if err := unix.Stat(os.DevNull, &after); err != nil || after.Mode != before.Mode || after.Rdev != before.Rdev || after.Ino != before.Ino {
			t.Fatalf("after -o %s, %s is mode %o rdev %#x ino %d; was %o %#x %d", out, os.DevNull,
				after.Mode, after.Rdev, after.Ino, before.Mode, before.Rdev, before.Ino)
		}
		if _, err := os.Lstat(os.DevNull + ".old"); err == nil {
			t.Errorf("-o %s made %s.old", out, os.DevNull)
		}
	}
	if dest, err := os.Readlink(link); err != nil || dest != os.DevNull {
		t.Errorf("the link now names %q (%v)", dest, err)
	}
}

// A FIFO receives a pipe-mode recording that reads back whole.
func TestRecordToFIFO(t *testing.T) {
	t.Parallel()
	needPerfEvents(t)
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	type read struct {
		samples int
		pipe    bool
		err     error
	}
	got := make(chan read, 1)
	go func() {
		r, err := perfdata.Open(fifo) // blocks until hwprof opens it
		if err != nil {
			got <- read{err: err}
			return
		}
		defer r.Close()
		n := 0
		for r.Next() {
			if r.Record().Type() == perf.RecordSample {
				n++
			}
		}
		got <- read{n, r.Header().Pipe, r.Err()}
	}()
	r := hwprof(t, append([]string{"record", "-o", fifo}, busyFor...)...)
	if r.code != busyExit {
		t.Fatalf("record -o FIFO: exit %d\n%s", r.code, r.stderr)
	}
	res := <-got
	if res.err != nil || !res.pipe {
		t.Fatalf("reading the FIFO: %v (pipe mode %v)", res.err, res.pipe)
	}
	if n := samplesWritten(t, r.stderr); n == 0 || res.samples != n {
		t.Errorf("read %d samples from the FIFO, hwprof says it wrote %d", res.samples, n)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v %v", fi.Mode(), err)
	}
}

// stdoutRun is the one run of `hwprof record -o - busyFor` of the test
// process, which the tests that read the stream (recordStdout) share.
var (
	stdoutOnce sync.Once
	stdoutRun  result
)

// recordStdout returns the stream `hwprof record -o - busyFor` wrote (run
// once per test process; tests only read it) and the number of samples
// hwprof says it wrote. The program's own output goes to hwprof's
// stderr, not into the data.
func recordStdout(t *testing.T) ([]byte, int) {
	t.Helper()
	stdoutOnce.Do(func() { stdoutRun = hwprof(t, append([]string{"record", "-o", "-"}, busyFor...)...) })
	r := stdoutRun
	if r.code != busyExit {
		t.Fatalf("record -o -: exit %d\n%s", r.code, r.stderr)
	}
	// (The data holds the command line, "echo program-output; ...", but
	// not the line the program printed.)
	if !strings.Contains(r.stderr, "program-output\n") || strings.Contains(r.stdout, "program-output\n") {
		t.Errorf("the program's output went to stdout with the data, or nowhere; stderr:\n%s", r.stderr)
	}
	if !strings.HasPrefix(r.stdout, "PERFILE2\x10\x00\x00\x00\x00\x00\x00\x00") {
		t.Fatalf("stdout does not start with a pipe-mode header: %q", r.stdout[:min(16, len(r.stdout))])
	}
	n := samplesWritten(t, r.stderr)
	if n == 0 {
		t.Fatalf("no samples in 1s of a busy program:\n%s", r.stderr)
	}
	return []byte(r.stdout), n
}

// runStdin runs name with in on its standard input (through a pipe, as a shell
// pipeline gives it).
func runStdin(t *testing.T, in []byte, name string, args ...string) result {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(cmd.Environ(), "PAGER=cat", "PERF_PAGER=cat")
	cmd.Stdin = bytes.NewReader(in)
	return runCmd(t, cmd)
}

// pipeline runs `hwprof record -o - busyFor | name args...` through an
// OS pipe and returns both results.
func pipeline(t *testing.T, name string, args ...string) (rec, read result) {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	c1 := exec.Command(hwprofBin, append([]string{"record", "-o", "-"}, busyFor...)...)
	c2 := exec.Command(name, args...)
	c2.Env = append(c2.Environ(), "PAGER=cat", "PERF_PAGER=cat")
	var e1, o2, e2 bytes.Buffer
	c1.Stdout, c1.Stderr = pw, &e1
	c2.Stdin, c2.Stdout, c2.Stderr = pr, &o2, &e2
	if err := c1.Start(); err != nil {
		t.Fatal(err)
	}
	if err := c2.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	pr.Close()
	code := func(err error) int {
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	}
	rec = result{code: code(c1.Wait()), stderr: e1.String()}
	read = result{code: code(c2.Wait()), stdout: o2.String(), stderr: e2.String()}
	if rec.code != busyExit {
		t.Fatalf("hwprof record -o - | %s: record exit %d\n%s", name, rec.code, rec.stderr)
	}
	return rec, read
}

// perfReportSamples sums the Samples column of perf report -F sample.
func perfReportSamples(t *testing.T, out string) int {
	t.Helper()
	n := 0
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		if len(f) == 2 && f[1] != "Command" && !strings.HasPrefix(f[0], "#") {
			v, err := strconv.Atoi(f[0])
			if err == nil {
				n += v
			}
		}
	}
	return n
}

// `hwprof record -o - | perf report -i -` and perf script -i - read the
// stream without a complaint and see the samples hwprof wrote, the same
// ones hwprof's own script prints.
func TestRecordStdoutPerfReads(t *testing.T) {
	t.Parallel()
	needPerfEvents(t)
	if _, err := exec.LookPath("perf"); err != nil {
		t.Skip("perf not installed")
	}
	rec, rep := pipeline(t, "perf", "report", "--stdio", "-g", "none", "-F", "sample,comm", "-i", "-")
	if rep.code != 0 || strings.TrimSpace(rep.stderr) != "" {
		t.Fatalf("perf report -i -: exit %d, stderr:\n%s", rep.code, rep.stderr)
	}
	if got, want := perfReportSamples(t, rep.stdout), samplesWritten(t, rec.stderr); got != want || want == 0 {
		t.Errorf("perf report -i - sums %d samples, hwprof wrote %d:\n%s", got, want, rep.stdout)
	}

	data, n := recordStdout(t)
	ps := runStdin(t, data, "perf", "script", "-F", "tid,time,ip", "-i", "-")
	if ps.code != 0 || strings.TrimSpace(ps.stderr) != "" {
		t.Fatalf("perf script -i -: exit %d, stderr:\n%s", ps.code, ps.stderr)
	}
	hs := runStdin(t, data, hwprofBin, "script", "-F", "tid,time,ip", "-i", "-")
	if hs.code != 0 {
		t.Fatalf("hwprof script -i -: exit %d\n%s", hs.code, hs.stderr)
	}
	perfLines, ownLines := sampleHeads(ps.stdout), sampleHeads(hs.stdout)
	if len(perfLines) != n || strings.Join(perfLines, "\n") != strings.Join(ownLines, "\n") {
		t.Errorf("perf script sees %d samples, hwprof script %d, hwprof wrote %d; first lines %q vs %q",
			len(perfLines), len(ownLines), n, perfLines[:min(3, len(perfLines))], ownLines[:min(3, len(ownLines))])
	}
}

// sampleHeads returns the first line of each sample of script output (the
// callchain lines under it start with a tab).
func sampleHeads(out string) []string {
	var heads []string
	for line := range strings.Lines(out) {
		if line = strings.TrimRight(line, "\n"); strings.TrimSpace(line) != "" && !strings.HasPrefix(line, "\t") {
			heads = append(heads, line)
		}
	}
	return heads
}

// Every reading subcommand reads standard input with -i -, from a
// pipeline and from a file redirected in.
func TestReadStdin(t *testing.T) {
	t.Parallel()
	needPerfEvents(t)
	rec, rep := pipeline(t, hwprofBin, "report", "--format", "json", "-i", "-")
	var j reportJSON
	if rep.code != 0 || json.Unmarshal([]byte(rep.stdout), &j) != nil {
		t.Fatalf("hwprof record -o - | hwprof report -i -: exit %d\n%s", rep.code, rep.stderr)
	}
	if n := samplesWritten(t, rec.stderr); int(j.Recording.Samples) != n {
		t.Errorf("report -i - counts %d samples, record wrote %d", j.Recording.Samples, n)
	}

	data, n := recordStdout(t)
	d := runStdin(t, data, hwprofBin, "dump", "--stats", "-i", "-")
	if d.code != 0 || statsSamples(t, d.stdout) != n {
		t.Errorf("dump --stats -i -: exit %d, want %d samples:\n%s%s", d.code, n, d.stdout, d.stderr)
	}
	s := runStdin(t, data, hwprofBin, "script", "-F", "tid,ip", "-i", "-")
	if got := len(sampleHeads(s.stdout)); s.code != 0 || got != n {
		t.Errorf("script -i -: exit %d, %d samples, want %d\n%s", s.code, got, n, s.stderr)
	}

	// A file on standard input (hwprof report -i - < rec.data), file mode.
	dir := t.TempDir()
	file := filepath.Join(dir, "hwprof.data")
	if r := hwprof(t, "record", "-q", "-o", file, "--", "true"); r.code != 0 {
		t.Fatalf("record: %s", r.stderr)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, sub := range []string{"report", "script", "dump"} {
		f.Seek(0, io.SeekStart)
		cmd := exec.Command(hwprofBin, sub, "-i", "-")
		cmd.Stdin = f
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s -i - < FILE: %v\n%s", sub, err, out)
		}
	}
}

// Every reading subcommand reads hwprof.data when -i is not given, the
// file hwprof record writes when -o is not given.
func TestDefaultInput(t *testing.T) {
	needPerfEvents(t)
	dir := t.TempDir()
	rec := exec.Command(hwprofBin, "record", "-q", "--", "true")
	rec.Dir = dir
	if out, err := rec.CombinedOutput(); err != nil {
		t.Fatalf("record: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "hwprof.data")); err != nil {
		t.Fatalf("record without -o: %v", err)
	}
	for _, sub := range []string{"report", "script", "dump"} {
		cmd := exec.Command(hwprofBin, sub)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s without -i: %v\n%s", sub, err, out)
		}
	}
}

// openPTY returns the two ends of a new pseudo-terminal, or skips.
func openPTY(t *testing.T) (master, tty *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skipf("pty number: %v", err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open pty: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}

// Binary data is not written to a terminal, nor read from one.
func TestTerminalRefused(t *testing.T) {
	_, tty := openPTY(t)
	marker := filepath.Join(t.TempDir(), "ran")
	var errb bytes.Buffer
	cmd := exec.Command(hwprofBin, "record", "-o", "-", "--", "touch", marker)
	cmd.Stdout, cmd.Stderr = tty, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitUsage || !strings.Contains(errb.String(), "terminal") {
		t.Errorf("record -o - to a terminal: %v, stderr %q; want exit %d naming the terminal", err, errb.String(), exitUsage)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the program ran")
	}
	for _, sub := range []string{"report", "script", "dump"} {
		errb.Reset()
		cmd := exec.Command(hwprofBin, sub, "-i", "-")
		cmd.Stdin, cmd.Stderr = tty, &errb
		if err := cmd.Run(); err == nil || !strings.Contains(errb.String(), "terminal") {
			t.Errorf("%s -i - from a terminal: %v, stderr %q; want an error naming the terminal", sub, err, errb.String())
		}
	}
}

// spinner starts a process that spins until the test ends, for -p.
func spinner(t *testing.T) int {
	t.Helper()
	spin := exec.Command("sh", "-c", "while :; do :; done")
	if err := spin.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		spin.Process.Kill()
		spin.Wait()
	})
	return spin.Process.Pid
}

// A -p recording that fails once the events are open leaves the previous
// recording where it was, as one that fails before does: when the
// process's /proc/PID/maps cannot be read (as root, where the kernel or a
// sandbox denies it: here a write-only sysctl file mounted over it in a
// mount namespace of hwprof's own), and when the command that times the
// recording cannot be executed.
func TestRecordAttachFailureKeepsPrevious(t *testing.T) {
	needPerfEvents(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "prev.data")
	pid := spinner(t)
	notExec := filepath.Join(dir, "timer.sh") // found and executable, but execve fails
	if err := os.WriteFile(notExec, []byte("#!/no/such/interpreter\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	record := []string{"record", "-q", "-o", out, "--duration", "1s", "-p", strconv.Itoa(pid)}

	t.Run("timer command fails", func(t *testing.T) {
		previous(t, out)
		r := hwprof(t, append(record, "--", notExec)...)
		if r.code == 0 {
			t.Errorf("exit 0\n%s", r.stderr)
		}
		kept(t, "timer command fails", out)
	})

	// The new file has no name until the recording runs: an earlier
	// .old is not replaced for a moment and lost.
	t.Run("timer command fails, with an earlier .old", func(t *testing.T) {
		previous(t, out)
		if err := os.WriteFile(out+".old", []byte("earlier recording"), 0o644); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(out + ".old")
		if r := hwprof(t, append(record, "--", notExec)...); r.code == 0 {
			t.Errorf("exit 0\n%s", r.stderr)
		}
		b, err := os.ReadFile(out)
		old, oldErr := os.ReadFile(out + ".old")
		if err != nil || string(b) != "previous recording" || oldErr != nil || string(old) != "earlier recording" {
			t.Errorf("%s holds %.24q (%v), its .old %.24q (%v); want both as they were", out, b, err, old, oldErr)
		}
	})

	t.Run("maps unreadable", func(t *testing.T) {
		const writeOnly = "/proc/sys/vm/drop_caches" // mode 0200: even root cannot read it
		mount, err := exec.LookPath("mount")
		if err != nil || os.Geteuid() != 0 {
			t.Skipf("needs root and mount(8) to hide /proc/%d/maps (euid %d, %v)", pid, os.Geteuid(), err)
		}
		if _, err := os.ReadFile(writeOnly); !errors.Is(err, fs.ErrPermission) {
			t.Skipf("%s is readable here (%v)", writeOnly, err)
		}
		previous(t, out)
		maps := fmt.Sprintf("/proc/%d/maps", pid)
		script := fmt.Sprintf("%s --bind %s %s && exec \"$@\"", mount, writeOnly, maps)
		cmd := exec.Command("sh", append([]string{"-c", script, "sh", hwprofBin}, record...)...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS} // the mount is hwprof's alone
		var errb bytes.Buffer
		cmd.Stderr = &errb
		err = cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || !strings.Contains(errb.String(), maps) {
			t.Errorf("record: %v; want a failure naming %s:\n%s", err, maps, errb.String())
		}
		kept(t, "maps unreadable", out)
		if _, err := os.ReadFile(maps); err != nil {
			t.Errorf("the test's own view of %s: %v (the mount leaked)", maps, err)
		}
	})
}

// Three recordings started at once to one -o: the file is locked while
// it is written, so one records and the others fail at once, saying
// which hwprof writes it; no recording is unlinked while it is written
// (each used to exit 0 and say it recorded N samples in a file another
// had rotated away), and the previous recording is kept as .old.
func TestRecordConcurrentOutput(t *testing.T) {
	t.Parallel() // its own programs and files
	needPerfEvents(t)
	out := filepath.Join(t.TempDir(), "same.data")
	previous(t, out)
	const duration = 2 * time.Second // long enough for all three to overlap
	type run struct {
		cmd  *exec.Cmd
		errb bytes.Buffer
		code int
		took time.Duration
	}
	runs := make([]*run, 3)
	var wg sync.WaitGroup
	for i := range runs {
		r := &run{}
		runs[i] = r
		r.cmd = exec.Command(hwprofBin, "record", "-o", out, "--duration", duration.String(), "--", "sh", "-c", "while :; do :; done")
		r.cmd.Stderr = &r.errb
		if err := r.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		wg.Go(func() {
			err := r.cmd.Wait()
			r.took = time.Since(start)
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				r.code = ee.ExitCode()
			} else if err != nil {
				r.code = -1
			}
		})
	}
	wg.Wait()
	var winner *run
	for _, r := range runs {
		t.Logf("pid %d: exit %d after %.2fs: %s", r.cmd.Process.Pid, r.code, r.took.Seconds(), strings.TrimSpace(r.errb.String()))
		if r.code == 0 {
			if winner != nil {
				t.Errorf("pids %d and %d both recorded into %s", winner.cmd.Process.Pid, r.cmd.Process.Pid, out)
			}
			winner = r
		}
	}
	if winner == nil {
		t.Fatalf("none of the three recorded")
	}
	for _, r := range runs {
		if r == winner {
			continue
		}
		msg := r.errb.String()
		if r.code != exitError || !strings.Contains(msg, out+" is being written by") ||
			!strings.Contains(msg, fmt.Sprintf("pid %d", winner.cmd.Process.Pid)) {
			t.Errorf("pid %d: exit %d, stderr %q; want %d and a message naming %s and pid %d", r.cmd.Process.Pid, r.code, msg, exitError, out, winner.cmd.Process.Pid)
		}
		if r.took > duration/2 {
			t.Errorf("pid %d failed after %.2fs: want at once, not after recording", r.cmd.Process.Pid, r.took.Seconds())
		}
	}
	n := samplesWritten(t, winner.errb.String())
	rep := hwprof(t, "report", "-i", out)
	if m := regexp.MustCompile(`samples:\s+(\d+)`).FindStringSubmatch(rep.stdout); rep.code != 0 || m == nil || m[1] != strconv.Itoa(n) {
		t.Errorf("report -i %s: exit %d, %v samples; the recording that succeeded says %d\n%s", out, rep.code, m, n, rep.stderr)
	}
	if b, err := os.ReadFile(out + ".old"); err != nil || string(b) != "previous recording" {
		t.Errorf("%s.old holds %q... (%v), want the previous recording", out, b[:min(len(b), 24)], err)
	}
}
