package perfdata

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hwprof/hwprof/perf"
)

// The crash tests run this test binary as a child that records, and kill it
// with SIGKILL. The environment tells the child what to write.
const (
	crashEnvPath = "PERFDATA_CRASH_PATH"
	crashEnvCase = "PERFDATA_CRASH_CASE"
)

func TestMain(m *testing.M) {
	if path := os.Getenv(crashEnvPath); path != "" {
		crashChild(path, os.Getenv(crashEnvCase))
		return
	}
	code := m.Run()
	removePerfRecordings()
	os.Exit(code)
}

func crashAttrs() []EventAttr {
	st := perf.SampleIP | perf.SampleTID | perf.SampleTime | perf.SamplePeriod
	a := cpuClockAttr(st)
	a.Flags |= perf.FlagExcludeKernel | perf.FlagExcludeHV
	return []EventAttr{{Attr: a, IDs: []uint64{17}, Name: "cpu-clock:u"}}
}

// crashSample is the i-th sample of the child (40 bytes).
func crashSample(i int) []byte {
	st := crashAttrs()[0].Attr.SampleType
	s := sampleID{pid: testPID, tid: testPID, time: testT0 + 10 + uint64(i)}
	return sampleRecord(st, s, testBase+0x2010, 250000)
}

const crashSampleSize = 40

// Crash cases: what the child writes before it says "ready".
const (
	// 300 samples and a checkpoint, then bytes of further samples written
	// straight to the file, ending inside a record: a crash in the middle
	// of writing the buffer, before the header was updated.
	caseTornTail = "torn-tail"
	// 40000 samples and no checkpoint: the buffer filled and was written
	// out (with the header) several times; the rest is lost.
	caseSpillsOnly = "spills-only"
	// 10 samples, all still buffered: nothing reached the data section.
	caseNothingFlushed = "nothing-flushed"
)

// crashChild writes a recording as the case says, prints "ready N" where N
// is the number of samples perf should find, and waits to be killed.
func crashChild(path, c string) {
	fail := func(err error) {
		fmt.Println("error:", err)
		os.Exit(2)
	}
	w, err := Create(path, crashAttrs())
	if err != nil {
		fail(err)
	}
	st := crashAttrs()[0].Attr.SampleType
	if err := w.WriteRecord(commRecord(st, sampleID{pid: testPID, tid: testPID, time: testT0}, "true")); err != nil {
		fail(err)
	}
	commSize := w.DataSize()
	n := map[string]int{caseTornTail: 300, caseSpillsOnly: 40_000, caseNothingFlushed: 10}[c]
	for i := range n {
		if err := w.WriteRecord(crashSample(i)); err != nil {
			fail(err)
		}
	}
	switch c {
	case caseTornTail:
		if err := w.Checkpoint(); err != nil {
			fail(err)
		}
		var torn []byte
		for i := n; i < n+30; i++ {
			torn = append(torn, crashSample(i)...)
		}
		if _, err := w.f.Write(torn[:len(torn)-13]); err != nil {
			fail(err)
		}
	case caseSpillsOnly:
		if w.flushed == 0 || w.flushed == w.dataSize {
			fail(fmt.Errorf("spills-only: %d of %d bytes flushed", w.flushed, w.dataSize))
		}
		n = int(w.flushed-commSize) / crashSampleSize
	case caseNothingFlushed:
		n = 0
	}
	fmt.Println("ready", n)
	time.Sleep(time.Hour)
}

// killedRecording runs the child recorder for case c, kills it with
// SIGKILL once it is ready, and returns the file it left and the number of
// samples perf should find in it.
func killedRecording(t *testing.T, c string) (string, int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "killed.data")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashEnvPath+"="+path, crashEnvCase+"="+c)
	out, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	n, perr := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "ready ")))
	if err != nil || !strings.HasPrefix(line, "ready ") || perr != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child recorder said %q (%v)", line, err)
	}
	must(t, cmd.Process.Signal(syscall.SIGKILL))
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child recorder did not die of SIGKILL: %v", err)
	}
	return path, n
}

func TestPerfReadsKilledRecording(t *testing.T) {
	perfTool(t)
	for _, c := range []string{caseTornTail, caseSpillsOnly} {
		t.Run(c, func(t *testing.T) {
			path, want := killedRecording(t, c)
			p := parseFile(t, path)
			if len(p.features) != 0 {
				t.Errorf("features %v in a file that was never closed", p.features)
			}
			st, err := os.Stat(path)
			must(t, err)
			end := p.hdr.Data.Offset + p.hdr.Data.Size
			if c == caseTornTail && uint64(st.Size()) <= end {
				t.Fatalf("file of %d bytes ends at the checkpointed data (%d): the test needs bytes past it", st.Size(), end)
			}
			if got := countSamples(t, path); got != want {
				t.Errorf("perf report --stats: %d samples, want %d", got, want)
			}
			if lines := scriptLines(t, path); len(lines) != want {
				t.Errorf("perf script: %d lines, want %d", len(lines), want)
			}
			out, stderr := runPerf(t, "report", "--stdio", "-i", path)
			checkQuiet(t, "perf report --stdio", stderr)
			// No EVENT_DESC, but the EVENT_UPDATE Create wrote names the event.
			if w := "of event 'cpu-clock:u'"; !strings.Contains(out, w) {
				t.Errorf("perf report lacks %q:\n%s", w, out)
			}
		})
	}
}

// A recording killed before any sample reached the file is still valid:
// its data holds the EVENT_UPDATE records Create flushed, so the data size
// is not zero and perf reads it quietly, finding no samples.
func TestPerfReadsRecordingKilledBeforeFirstFlush(t *testing.T) {
	perfTool(t)
	path, _ := killedRecording(t, caseNothingFlushed)
	p := parseFile(t, path)
	if p.hdr.Data.Size == 0 {
		t.Errorf("data size 0: perf would warn and read to the end of the file")
	}
	out, stderr := runPerf(t, "report", "--stats", "-i", path)
	checkQuiet(t, "perf report --stats", stderr)
	if !strings.Contains(out, "EVENT_UPDATE events:          1") || strings.Contains(out, "SAMPLE") {
		t.Errorf("perf report --stats: want one EVENT_UPDATE and no samples:\n%s", out)
	}
	if lines := scriptLines(t, path); len(lines) != 0 {
		t.Errorf("perf script printed %q", lines)
	}
}
