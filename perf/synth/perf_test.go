package synth

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hwprof/hwprof/perf"
	"golang.org/x/sys/unix"
)

// This file checks the records against the ones perf itself synthesizes:
// it attaches `perf record` to a running process, dumps the recording with
// `perf report -D`, and compares perf's COMM, MMAP2, FORK and kernel MMAP
// records with ours byte for byte.

const helperEnv = "HWPROF_SYNTH_HELPER"

func TestMain(m *testing.M) {
	if dir := os.Getenv(helperEnv); dir != "" {
		if err := runHelper(dir); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(1)
		}
		return
	}
	os.Exit(m.Run())
}

// runHelper is the target process of the cross-check: beside the Go
// runtime's threads it has two named threads (one name with a backslash),
// an executable shared mapping of a file whose name has a space, an
// executable mapping at a non-zero offset of a deleted file, and an
// anonymous rwx mapping. It prints "ready" and sleeps.
func runHelper(dir string) error {
	spaced := filepath.Join(dir, "my lib.bin")
	deleted := filepath.Join(dir, "gone.bin")
	for _, name := range []string{spaced, deleted} {
		if err := os.WriteFile(name, make([]byte, 8192), 0o644); err != nil {
			return err
		}
	}
	if err := mapFile(spaced, 0, unix.MAP_SHARED); err != nil {
		return err
	}
	if err := mapFile(deleted, 4096, unix.MAP_PRIVATE); err != nil {
		return err
	}
	if err := os.Remove(deleted); err != nil {
		return err
	}
	if _, err := unix.Mmap(-1, 0, 8192, unix.PROT_READ|unix.PROT_WRITE|unix.PROT_EXEC, unix.MAP_PRIVATE|unix.MAP_ANON); err != nil {
		return err
	}
	named := make(chan error)
	for _, comm := range []string{`worker\one`, "second"} {
		go func() {
			runtime.LockOSThread() // never unlocked: the thread keeps its name
			named <- os.WriteFile("/proc/thread-self/comm", []byte(comm), 0)
			time.Sleep(time.Hour)
		}()
	}
	for range 2 {
		if err := <-named; err != nil {
			return err
		}
	}
	fmt.Println("ready")
	time.Sleep(time.Hour)
	return nil
}

// mapFile maps one page of name at off, readable and executable.
func mapFile(name string, off int64, flags int) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = unix.Mmap(int(f.Fd()), off, 4096, unix.PROT_READ|unix.PROT_EXEC, flags)
	return err
}

// startTarget starts a process for perf to attach to and returns its pid.
func startTarget(t *testing.T, kind string) int {
	t.Helper()
	var cmd *exec.Cmd
	switch kind {
	case "sleep":
		cmd = exec.Command("sleep", "30")
	case "helper":
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		cmd = exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), helperEnv+"="+t.TempDir())
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot start %s: %v", kind, err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	if kind == "helper" {
		line, err := bufio.NewReader(out).ReadString('\n')
		if line != "ready\n" {
			t.Fatalf("helper said %q, %v", line, err)
		}
	} else {
		time.Sleep(100 * time.Millisecond) // let sleep's loader finish mapping
	}
	return cmd.Process.Pid
}

// perfRecord runs perf record with args for a moment and returns the
// sample_type of its first event (0 without sample_id_all) and the raw
// records of `perf report -D`, in file order.
func perfRecord(t *testing.T, args ...string) (perf.SampleType, [][]byte) {
	t.Helper()
	data := filepath.Join(t.TempDir(), "perf.data")
	args = append([]string{"record", "-B", "-o", data}, args...)
	args = append(args, "--", "sleep", "0.2")
	if out, err := exec.Command("perf", args...).CombinedOutput(); err != nil {
		if bytes.Contains(out, []byte("perf_event_paranoid")) || bytes.Contains(out, []byte("ermission")) {
			t.Skipf("perf record may not attach here: %s", out)
		}
		t.Fatalf("perf %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	evlist, err := exec.Command("perf", "evlist", "-v", "-i", data).Output()
	if err != nil {
		t.Fatalf("perf evlist: %v", err)
	}
	st := parseEvlistSampleType(t, string(evlist))
	cmd := exec.Command("perf", "report", "-D", "-i", data)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	recs := parseReportDump(t, stdout)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("perf report -D: %v", err)
	}
	return st, recs
}

// parseEvlistSampleType reads "sample_type: IP|TID|TIME|PERIOD" from the
// first event of `perf evlist -v`; without "sample_id_all: 1" records
// carry no sample_id and it returns 0.
func parseEvlistSampleType(t *testing.T, evlist string) perf.SampleType {
	t.Helper()
	first, _, _ := strings.Cut(evlist, "\n")
	if !strings.Contains(first, "sample_id_all: 1") {
		return 0
	}
	_, rest, ok := strings.Cut(first, "sample_type: ")
	if !ok {
		t.Fatalf("no sample_type in %q", first)
	}
	names, _, _ := strings.Cut(rest, ",")
	var st perf.SampleType
	for _, name := range strings.Split(names, "|") {
		found := false
		for i := range 64 {
			if bit := perf.SampleType(1) << i; bit.String() == name {
				st |= bit
				found = true
			}
		}
		if !found {
			t.Fatalf("unknown sample_type bit %q in %q", name, first)
		}
	}
	return st
}

// parseReportDump collects the raw bytes `perf report -D` prints for each
// record:
//
//	. ... raw event: size 40 bytes
//	.  0000:  03 00 00 00 00 00 28 00 35 11 00 00 35 11 00 00  ......(.5...5...
func parseReportDump(t *testing.T, r io.Reader) [][]byte {
	t.Helper()
	var recs [][]byte
	var cur []byte
	want := 0
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if s, ok := strings.CutPrefix(line, ". ... raw event: size "); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(s, " bytes"))
			if err != nil {
				t.Fatalf("bad dump line %q", line)
			}
			cur, want = make([]byte, 0, n), n
			continue
		}
		if cur == nil || !strings.HasPrefix(line, ".  ") || len(line) < 10 || line[7] != ':' {
			continue
		}
		need := min(16, want-len(cur))
		fields := strings.Fields(line[8:])
		if len(fields) < need {
			t.Fatalf("short dump line %q", line)
		}
		for _, f := range fields[:need] {
			b, err := hex.DecodeString(f)
			if err != nil || len(b) != 1 {
				t.Fatalf("bad byte %q in %q", f, line)
			}
			cur = append(cur, b[0])
		}
		if len(cur) == want {
			recs = append(recs, cur)
			cur = nil
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return recs
}

// recordsOf keeps the COMM, MMAP2 and FORK records of process pid.
func recordsOf(recs [][]byte, pid int) [][]byte {
	var out [][]byte
	for _, r := range recs {
		switch perf.RecordType(binary.LittleEndian.Uint32(r)) {
		case perf.RecordComm, perf.RecordMmap2, perf.RecordFork:
			if len(r) >= 12 && int(recPID(r)) == pid {
				out = append(out, r)
			}
		}
	}
	return out
}

// kernelMmap is perf's MMAP record of the kernel text, or nil.
func kernelMmap(recs [][]byte) []byte {
	for _, r := range recs {
		if perf.RecordType(binary.LittleEndian.Uint32(r)) == perf.RecordMmap && len(r) > mmapFixed &&
			recPID(r) == KernelMmapPID && bytes.HasPrefix(r[mmapFixed:], []byte(KernelMmapPrefix)) {
			return r
		}
	}
	return nil
}

func TestCrossCheckPerf(t *testing.T) {
	if _, err := exec.LookPath("perf"); err != nil {
		t.Skip("perf is not installed")
	}
	if testing.Short() {
		t.Skip("runs perf record several times; skipped in -short")
	}
	tests := []struct {
		name   string
		target string
		args   []string // perf record options before -p
		opt    Options
		see    []string // in the decoded records, to be sure the case is there
	}{
		{"perf record -p sleep", "sleep", nil, Options{}, []string{"COMM: sleep:", "[vdso]", "[vsyscall]"}},
		{"perf record -d -p sleep", "sleep", []string{"-d"}, Options{Data: true}, []string{"misc 0x2002", "[stack]", "[heap]"}},
		{"perf record -p Go process with named threads, deleted and shared exec mappings", "helper", nil, Options{},
			[]string{`COMM: worker\\one:`, "COMM: second:", "r-xs flags 0x1 ", "/my lib.bin", "@ 0x1000 ", "/gone.bin (deleted)", "rwxp flags 0x2 //anon"}},
		{"perf record -a, FORKs of sleep", "sleep", []string{"-a"}, Options{Fork: true}, []string{"PERF_RECORD_FORK"}},
		{"perf record -a, FORKs of Go process", "helper", []string{"-a"}, Options{Fork: true}, []string{"PERF_RECORD_FORK", `COMM: worker\\one:`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // its own target and files; perf waits about a second before it exits
			pid := startTarget(t, tt.target)
			args := tt.args
			if len(args) == 0 || args[0] != "-a" {
				args = append(args, "-p", strconv.Itoa(pid))
			}
			st, recs := perfRecord(t, args...)
			want := recordsOf(recs, pid)
			b, err := tt.opt.Synthesize(nil, "/proc", pid, st)
			if err != nil {
				t.Fatal(err)
			}
			got := splitRecords(t, b)
			compareRecords(t, got, want, st)
			text := strings.Join(describeAll(t, b, st), "\n")
			for _, s := range tt.see {
				if !strings.Contains(text, s) {
					t.Errorf("no %q in the records:\n%s", s, text)
				}
			}

			k, ok, err := ReadKernelText("/proc")
			if err != nil {
				t.Fatal(err)
			}
			perfK := kernelMmap(recs)
			switch {
			case ok && perfK != nil:
				if mine := AppendKernelMmap(nil, k, st, SampleID{}); !bytes.Equal(mine, perfK) {
					t.Errorf("kernel MMAP differs:\n got % x\nwant % x", mine, perfK)
				}
			case ok != (perfK != nil):
				t.Errorf("kernel text found: ours %v, perf's %v", ok, perfK != nil)
			}
		})
	}
}

// compareRecords reports the records that differ, decoded.
func compareRecords(t *testing.T, got, want [][]byte, st perf.SampleType) {
	t.Helper()
	if len(want) == 0 {
		t.Fatal("perf synthesized no record for the target")
	}
	show := func(r []byte) string {
		s, err := describe(r, st)
		if err != nil {
			return fmt.Sprintf("% x (%v)", r, err)
		}
		return s
	}
	for i := range max(len(got), len(want)) {
		switch {
		case i >= len(got):
			t.Errorf("record %d missing: perf has %s", i, show(want[i]))
		case i >= len(want):
			t.Errorf("record %d extra: %s", i, show(got[i]))
		case !bytes.Equal(got[i], want[i]):
			t.Errorf("record %d:\n got %s\n     % x\nwant %s\n     % x", i, show(got[i]), got[i], show(want[i]), want[i])
		}
	}
	t.Logf("%d records equal to perf's", min(len(got), len(want)))
}
