package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// These tests fill the output while recording: a small tmpfs that runs
// out of space (ENOSPC), and a pipe whose reader leaves (EPIPE). The
// program recorded spins for 10 s (--duration); hwprof must stop at the
// first failed write, well before.

// spinFor10s runs a shell loop that writes its pid to pidFile, recorded
// for at most 10 s, sampled often (-c 100000: every 0.1 ms of CPU) so
// that the output fills within the first second or two even on a loaded
// machine.
func spinFor10s(pidFile string) []string {
	return []string{"-c", "100000", "-g", "--duration", "10s", "--", "sh", "-c", "echo $$ >" + pidFile + "; while :; do :; done"}
}

// stoppedRE is the message of a recording stopped by a failed write.
var stoppedRE = regexp.MustCompile(`hwprof: writing (.+): ([a-z ]+): recording stopped at ([\d.]+) s; the (?:file holds|stream got) the (\d+) samples written before`)

// checkStopped checks the one message of a recording stopped by a failed
// write of output with cause, its exit status, and that the program was
// ended; it returns the samples the message says were written.
func checkStopped(t *testing.T, code int, stderr, output, cause, pidFile string) int {
	t.Helper()
	if code != exitError {
		t.Errorf("exit status %d, want %d", code, exitError)
	}
	if n := strings.Count(stderr, cause); n != 1 {
		t.Errorf("%q said %d times, want once:\n%s", cause, n, stderr)
	}
	if strings.Contains(stderr, "corrupted ring") {
		t.Errorf("a write error reported as a ring error:\n%s", stderr)
	}
	m := stoppedRE.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no message of the stop in:\n%s", stderr)
	}
	if m[1] != output || m[2] != cause {
		t.Errorf("message names %q and %q, want %q and %q", m[1], m[2], output, cause)
	}
	n, _ := strconv.Atoi(m[4])
	if got := samplesWritten(t, stderr); got != n {
		t.Errorf("the stats say %d samples were recorded, the message %d", got, n)
	}
	// The program was ended (SIGTERM, as perf record does) and waited for.
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the program did not write its pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("pid file %q: %v", b, err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("the program (pid %d) still runs after hwprof returned (kill 0: %v)", pid, err)
	}
	return n
}

// runGuarded runs cmd in a process group of its own and kills the group
// if it has not ended after 30 s (an hwprof that does not stop waits for
// a program that spins forever); it returns the exit status.
func runGuarded(t *testing.T, cmd *exec.Cmd, started func()) int {
	t.Helper()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	guard := time.AfterFunc(30*time.Second, func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	defer guard.Stop()
	if started != nil {
		started()
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	if ee == nil {
		return 0
	}
	if ws := ee.Sys().(syscall.WaitStatus); ws.Signaled() {
		t.Fatalf("hwprof killed by %v after %.1fs (the test kills it after 30 s)", ws.Signal(), time.Since(start).Seconds())
	}
	return ee.ExitCode()
}

// smallTmpfs mounts a tmpfs of size bytes for the test.
func smallTmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("not root: a full disk is made by mounting a small tmpfs")
	}
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// A disk that fills while recording: hwprof says so once, at once, ends
// the program, exits non-zero, and the file holds exactly the samples it
// says, readable by hwprof and perf.
func TestRecordFullDisk(t *testing.T) {
	dir := smallTmpfs(t, "256k")
	needPerfEvents(t)
	out := filepath.Join(dir, "full.data")
	pidFile := filepath.Join(t.TempDir(), "pid")
	cmd := exec.Command(hwprofBin, append([]string{"record", "-o", out}, spinFor10s(pidFile)...)...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	start := time.Now()
	code := runGuarded(t, cmd, nil)
	took := time.Since(start)
	if took > 6*time.Second {
		t.Errorf("hwprof returned after %.1fs: the program runs 10 s, the disk is full within about one", took.Seconds())
	}
	n := checkStopped(t, code, errb.String(), out, "no space left on device", pidFile)
	if n == 0 {
		t.Fatalf("no samples written before the disk filled:\n%s", errb.String())
	}

	// The header covers the file up to its end: the last whole record.
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 104 {
		t.Fatalf("file of %d bytes", len(b))
	}
	off, size := binary.LittleEndian.Uint64(b[40:]), binary.LittleEndian.Uint64(b[48:])
	if off+size != uint64(len(b)) {
		t.Errorf("header: data at %d, %d bytes; the file has %d bytes: want the header to cover every record kept", off, size, len(b))
	}

	rep := hwprof(t, "report", "-i", out)
	if rep.code != 0 {
		t.Errorf("hwprof report: exit %d\n%s", rep.code, rep.stderr)
	}
	if m := regexp.MustCompile(`samples:\s+(\d+)`).FindStringSubmatch(rep.stdout); m == nil || m[1] != strconv.Itoa(n) {
		t.Errorf("hwprof report: %v samples, want %d:\n%s", m, n, rep.stdout)
	}
	dump := hwprof(t, "dump", "--stats", "-i", out)
	if dump.code != 0 {
		t.Errorf("hwprof dump: exit %d\n%s", dump.code, dump.stderr)
	}
	if m := regexp.MustCompile(`(?m)^samples (\d+)$`).FindStringSubmatch(dump.stdout); m == nil || m[1] != strconv.Itoa(n) {
		t.Errorf("hwprof dump --stats: %v samples, want %d:\n%s", m, n, dump.stdout)
	}
	if got, ok := perfSamples(t, out); ok && got != n {
		t.Errorf("perf script reads %d samples, hwprof says %d", got, n)
	}
	if _, err := exec.LookPath("perf"); err == nil {
		rep, err := exec.Command("perf", "report", "--stats", "-i", out).CombinedOutput()
		if err != nil || !regexp.MustCompile(`SAMPLE events:\s+`+strconv.Itoa(n)+`\b`).Match(rep) {
			t.Errorf("perf report --stats (%v): want %d samples:\n%s", err, n, rep)
		}
	}
}

// -o - into a pipe whose reader closes early: the same clean stop, with
// EPIPE, and not a death by SIGPIPE.
func TestRecordBrokenPipe(t *testing.T) {
	needPerfEvents(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	cmd := exec.Command(hwprofBin, append([]string{"record", "-o", "-"}, spinFor10s(pidFile)...)...)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = pw, &errb
	start := time.Now()
	code := runGuarded(t, cmd, func() {
		pw.Close()
		head := make([]byte, 32<<10)
		_, rerr := io.ReadFull(pr, head)
		pr.Close()
		if rerr != nil {
			t.Errorf("reading the first %d bytes of the stream: %v", len(head), rerr)
		}
		if !bytes.HasPrefix(head, []byte("PERFILE2")) {
			t.Errorf("the stream starts with %q, want the pipe header", head[:8])
		}
	})
	took := time.Since(start)
	if took > 6*time.Second {
		t.Errorf("hwprof returned after %.1fs: the program runs 10 s, the reader left within about one", took.Seconds())
	}
	checkStopped(t, code, errb.String(), "standard output", "broken pipe", pidFile)
}

// Attached to a running process (-p), a full disk stops the recording at
// once and leaves the process running, as perf record does.
func TestRecordFullDiskAttached(t *testing.T) {
	dir := smallTmpfs(t, "256k")
	needPerfEvents(t)
	spin := exec.Command("sh", "-c", "while :; do :; done")
	if err := spin.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		spin.Process.Kill()
		spin.Wait()
	}()
	out := filepath.Join(dir, "attached.data")
	cmd := exec.Command(hwprofBin, "record", "-o", out, "-c", "100000", "-g", "--duration", "10s",
		"-p", strconv.Itoa(spin.Process.Pid))
	var errb bytes.Buffer
	cmd.Stderr = &errb
	start := time.Now()
	code := runGuarded(t, cmd, nil)
	if took := time.Since(start); took > 6*time.Second {
		t.Errorf("hwprof returned after %.1fs: --duration is 10 s, the disk is full within about one", took.Seconds())
	}
	if code != exitError || strings.Count(errb.String(), "no space left on device") != 1 || !stoppedRE.MatchString(errb.String()) {
		t.Errorf("exit %d, want %d and one message of the stop:\n%s", code, exitError, errb.String())
	}
	if err := spin.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the process attached to is gone: %v", err)
	}
}
