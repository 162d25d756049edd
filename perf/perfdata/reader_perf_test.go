package perfdata

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/hwprof/hwprof/perf"
)

// These tests record with Linux perf on this machine (software events
// work without a PMU) and hold the Reader against perf report --stats on
// the same files: file mode, zstd-compressed records (perf record -z) and
// pipe mode (perf record -o -).

var statsLineRE = regexp.MustCompile(`(?m)^\s*([A-Z_0-9]+) events:\s+(\d+)`)

// perfStats parses perf report --stats: records per type name, and the
// total under "TOTAL".
func perfStats(t *testing.T, path string) map[string]int64 {
	t.Helper()
	out, _ := runPerf(t, "report", "--stats", "-i", path)
	m := map[string]int64{}
	for _, sm := range statsLineRE.FindAllStringSubmatch(out, -1) {
		if _, seen := m[sm[1]]; seen {
			continue // the per-event sections repeat SAMPLE
		}
		n, _ := strconv.ParseInt(sm[2], 10, 64)
		m[sm[1]] = n
	}
	return m
}

// perfRecordFile returns the recording perf record made of a short
// CPU-bound command with extra options; it skips when perf cannot record
// here. One recording is made per set of options and test process (in
// perfRecordings.dir, which TestMain removes): the tests only read it.
func perfRecordFile(t *testing.T, extra ...string) string {
	t.Helper()
	perfPath := perfTool(t)
	key := strings.Join(extra, " ")
	perfRecordings.mu.Lock()
	rec := perfRecordings.byOptions[key]
	if rec == nil {
		rec = &perfRecording{}
		perfRecordings.byOptions[key] = rec
	}
	perfRecordings.mu.Unlock()
	rec.once.Do(func() { rec.path, rec.skip, rec.err = recordPerf(perfPath, extra) })
	if rec.err != nil {
		t.Fatal(rec.err)
	}
	if rec.skip != "" {
		t.Skip(rec.skip)
	}
	return rec.path
}

// perfRecordings are perfRecordFile's recordings, by options.
var perfRecordings = struct {
	mu        sync.Mutex
	dir       string
	byOptions map[string]*perfRecording
}{byOptions: map[string]*perfRecording{}}

type perfRecording struct {
	once sync.Once
	path string
	skip string // why perf could not record here
	err  error
}

// recordPerf makes a recording of perfRecordFile.
func recordPerf(perfPath string, extra []string) (path, skip string, err error) {
	perfRecordings.mu.Lock()
	if perfRecordings.dir == "" {
		perfRecordings.dir, err = os.MkdirTemp("", "perfdata-test")
	}
	dir := perfRecordings.dir
	perfRecordings.mu.Unlock()
	if err != nil {
		return "", "", err
	}
	f, err := os.CreateTemp(dir, "*.data")
	if err != nil {
		return "", "", err
	}
	f.Close()
	path = f.Name()
	args := append([]string{"record", "-q", "-e", "cpu-clock", "-c", "50000", "-g", "-o", path}, extra...)
	args = append(args, "--", "dd", "if=/dev/zero", "of=/dev/null", "bs=4k", "count=100000")
	cmd := exec.Command(perfPath, args...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Sprintf("perf record cannot record here: %v: %s", err, errb.String()), nil
	}
	return path, "", nil
}

// removePerfRecordings removes perfRecordFile's recordings (TestMain).
func removePerfRecordings() {
	if perfRecordings.dir != "" {
		os.RemoveAll(perfRecordings.dir)
	}
}

func checkAgainstPerf(t *testing.T, path string) *Reader {
	t.Helper()
	want := perfStats(t, path)
	r, n, err, errs := readAll(t, path)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range errs {
		t.Error(e)
	}
	if n == 0 || n != want["SAMPLE"] {
		t.Errorf("samples %d, perf report --stats %d", n, want["SAMPLE"])
	}
	if r.Total() != want["TOTAL"] {
		t.Errorf("records %d, perf %d; ours %v, perf's %v", r.Total(), want["TOTAL"], r.Counts(), want)
	}
	for name, c := range want {
		for typ, ours := range r.Counts() {
			if typ.String() == name && ours != c {
				t.Errorf("%s: %d, perf %d", name, ours, c)
			}
		}
	}
	if len(r.Warnings()) > 0 {
		t.Errorf("warnings: %q", r.Warnings())
	}
	return r
}

func TestReadsPerfRecord(t *testing.T) {
	t.Parallel() // perf record waits about a second before it exits; nothing shared but the recordings read
	r := checkAgainstPerf(t, perfRecordFile(t))
	if r.Features().Version == "" || len(r.Features().Cmdline) == 0 || len(r.Features().EventDesc) != len(r.Attrs()) {
		t.Errorf("features %+v", r.Features())
	}
}

func TestReadsPerfRecordCompressed(t *testing.T) {
	t.Parallel() // perf record waits about a second before it exits; nothing shared but the recordings read
	path := perfRecordFile(t, "-z")
	r := checkAgainstPerf(t, path)
	if r.Count(perf.RecordCompressed)+r.Count(perf.RecordCompressed2) == 0 {
		t.Skipf("perf record -z wrote no compressed records here (counts %v)", r.Counts())
	}
	if r.Features().Compression == nil || r.Features().Compression.Type != 1 {
		t.Errorf("HEADER_COMPRESSED: %+v", r.Features().Compression)
	}
}

func TestReadsPerfRecordPipe(t *testing.T) {
	t.Parallel() // perf record waits about a second before it exits; nothing shared but the recordings read
	perfPath := perfTool(t)
	path := filepath.Join(t.TempDir(), "pipe.data")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(perfPath, "record", "-q", "-e", "cpu-clock", "-c", "50000", "-g", "-o", "-",
		"--", "dd", "if=/dev/zero", "of=/dev/null", "bs=4k", "count=100000")
	cmd.Stdout = f
	if err := cmd.Run(); err != nil {
		t.Skipf("perf record -o - cannot record here: %v", err)
	}
	f.Close()
	r := checkAgainstPerf(t, path)
	if !r.Header().Pipe || r.Count(perf.RecordHeaderAttr) == 0 || len(r.Attrs()) == 0 || r.Attrs()[0].Name != "cpu-clock" {
		t.Errorf("pipe %v, attrs %+v, counts %v", r.Header().Pipe, r.Attrs(), r.Counts())
	}
	// The same stream through NewPipeReader.
	in, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	pr, err := NewPipeReader(in)
	if err != nil {
		t.Fatal(err)
	}
	n := int64(0)
	for pr.Next() {
		n++
	}
	if pr.Err() != nil || n != r.Total() {
		t.Errorf("NewPipeReader: %d records, err %v; Open: %d", n, pr.Err(), r.Total())
	}
}
