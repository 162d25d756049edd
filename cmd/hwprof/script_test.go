package main

import (
	"bufio"
	"compress/gzip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/buildid"
	"github.com/hwprof/hwprof/internal/fixtures"
)

// hwprof script on hwprof's own recording of its built-in workload: every
// sample printed, frames symbolized from the Go binary, source lines with
// --srcline.
func TestScriptOwnRecording(t *testing.T) {
	t.Parallel()
	needPerfEvents(t)
	out := filepath.Join(t.TempDir(), "s.data")
	r := hwprof(t, "record", "-g", "-c", "1000000", "-o", out, "--", hwprofBin, workloadArg, "500ms")
	if r.code != 0 {
		t.Fatalf("record: %s", r.stderr)
	}
	n := samplesWritten(t, r.stderr)
	r = hwprof(t, "script", "-i", out, "--srcline")
	if r.code != 0 {
		t.Fatalf("script: exit %d: %s", r.code, r.stderr)
	}
	headers := 0
	for line := range strings.Lines(r.stdout) {
		if strings.Contains(line, " cpu-clock:") {
			headers++
			if !strings.Contains(line, "1000000 cpu-clock:") {
				t.Errorf("sample without its period: %q", line)
			}
		}
	}
	if headers != n {
		t.Errorf("script printed %d samples, the recording has %d", headers, n)
	}
	for _, want := range []string{"main.hotLoop+0x", "main.runWorkload+0x", "main.main+0x", "workload.go:", "(" + hwprofBin + ")"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("script output lacks %q", want)
		}
	}
	if got, ok := perfSamples(t, out); ok && got != n {
		t.Errorf("perf script reads %d samples, hwprof script %d", got, headers)
	}
}

func TestScriptErrors(t *testing.T) {
	r := hwprof(t, "script", "-i", filepath.Join(t.TempDir(), "missing.data"))
	if r.code != 1 || !strings.Contains(r.stderr, "missing.data") {
		t.Errorf("missing file: exit %d, %q", r.code, r.stderr)
	}
	r = hwprof(t, "script", "-F", "nonsense")
	if r.code != 2 || !strings.Contains(r.stderr, "unknown field") {
		t.Errorf("bad -F: exit %d, %q", r.code, r.stderr)
	}
}

// perfBrstackFields is the field set of the shared fixtures' expected
// perf script output for branch-stack recordings (perf 6.1): the lines
// hold the tid, time, event, IP, symbol, object, and every branch-stack
// entry as from(object)/to(object)/flags.
const perfBrstackFields = "tid,time,event,ip,sym,dso,brstack"

// TestScriptFixturesMatchPerf prints the two real LBR recordings whose
// programs are in the shared fixtures with perf's field set and compares
// every sample line with perf 6.1's perf script output: tid, time, event,
// IP, symbol, object and all 16 or 32 branch-stack entries (addresses,
// objects, flags, cycles). The recorded paths do not exist here: the
// non-PIE test.binary (no build-id) is found through --symfs, the PIE
// propeller binary (an 8-byte xxHash build-id, which the recording pads
// with zeros to 20 bytes) through --debug-dir by its build-id; for both the
// process model must take the PT_LOAD segments of the file found, or the
// symbols of the PIE's code would be wrong. The kernel samples of test.lbr
// come from another kernel and print as [unknown], as in perf.
func TestScriptFixturesMatchPerf(t *testing.T) {
	t.Parallel()
	fx := fixtures.Dir(t)
	auto := filepath.Join(fx, "autofdo")

	symfs := t.TempDir()
	fixtures.Place(t, filepath.Join(auto, "test.binary"), filepath.Join(symfs, "export/hda3/tmp/test.binary"))

	propeller := filepath.Join(auto, "propeller_sample_1.bin")
	bid, err := buildid.Read(propeller)
	id := bid.String()
	if err != nil || id == "" {
		t.Fatalf("build-id of %s: %q, %v", propeller, id, err)
	}
	debugDir := t.TempDir()
	fixtures.Place(t, propeller, filepath.Join(debugDir, id))

	tests := []struct {
		file   string
		args   []string
		object string // the profiled program's recorded path
	}{
		{"test.lbr", []string{"--symfs", symfs}, "/export/hda3/tmp/test.binary"},
		{"propeller_sample_1.perfdata1", []string{"--debug-dir", debugDir},
			"/build/work/11ef31a2a8be9640fa8d4c917e76f0db3923/google3/blaze-out/k8-opt/genfiles/devtools/crosstool/autofdo/testdata/propeller_sample_1.bin.gen"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			args := append([]string{"script", "-i", filepath.Join(auto, tt.file), "-F", perfBrstackFields}, tt.args...)
			r := hwprof(t, args...)
			if r.code != 0 {
				t.Fatalf("hwprof script: exit %d: %s", r.code, r.stderr)
			}
			want := expectedSampleLines(t, filepath.Join(fx, "expected", "autofdo", tt.file+".script.txt.gz"))
			got := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
			if len(got) != len(want) {
				t.Errorf("%d sample lines, perf script %d", len(got), len(want))
			}
			named := func(line string) bool {
				return strings.Contains(line, " ("+tt.object+") ") && !strings.Contains(line, " [unknown] ("+tt.object+")")
			}
			bad, gotNamed, wantNamed := 0, 0, 0
			for i := range min(len(got), len(want)) {
				if named(got[i]) {
					gotNamed++
				}
				if named(want[i]) {
					wantNamed++
				}
				if got[i] == want[i] {
					continue
				}
				if bad++; bad <= 5 {
					t.Errorf("sample %d differs from perf script:\n%s", i, fieldDiff(got[i], want[i]))
				}
			}
			if bad > 0 {
				t.Errorf("%d of %d sample lines differ from perf script", bad, len(want))
			}
			// Most samples are in the program, and perf names them.
			if wantNamed < len(want)*9/10 || gotNamed != wantNamed {
				t.Errorf("samples in %s named by a symbol: hwprof %d, perf %d of %d", tt.object, gotNamed, wantNamed, len(want))
			}
			t.Logf("%d of %d sample lines equal perf script's; %d samples named in the program", len(want)-bad, len(want), gotNamed)
		})
	}

	// Without the --debug-dir the propeller binary is not found, and
	// hwprof says so instead of guessing.
	r := hwprof(t, "script", "-i", filepath.Join(auto, "propeller_sample_1.perfdata1"), "-F", perfBrstackFields)
	if r.code != 0 || !strings.Contains(r.stderr, "cannot symbolize /build/work/") || strings.Contains(r.stdout, " compute_flag ") {
		t.Errorf("without --debug-dir: exit %d, stderr %q, symbols printed: %v", r.code, r.stderr, strings.Contains(r.stdout, " compute_flag "))
	}
}

// expectedSampleLines reads perf script's output and keeps the sample
// lines (the PERF_RECORD_* lines of --show-task-events and
// --show-mmap-events are not printed by hwprof script).
func expectedSampleLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<24)
	for sc.Scan() {
		if !strings.Contains(sc.Text(), "PERF_RECORD_") {
			lines = append(lines, sc.Text())
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(lines) == 0 {
		t.Fatalf("no sample lines in %s", path)
	}
	return lines
}

// fieldDiff names the first differing whitespace-separated fields of two
// sample lines (branch-stack entries are fields too).
func fieldDiff(got, want string) string {
	g, w := strings.Fields(got), strings.Fields(want)
	var b strings.Builder
	for i := range max(len(g), len(w)) {
		var gi, wi string
		if i < len(g) {
			gi = g[i]
		}
		if i < len(w) {
			wi = w[i]
		}
		if gi != wi {
			b.WriteString("  field " + strconv.Itoa(i) + ": hwprof " + strconv.Quote(gi) + ", perf " + strconv.Quote(wi) + "\n")
			if b.Len() > 600 {
				break
			}
		}
	}
	if b.Len() == 0 {
		return "  (spacing differs)\n  hwprof " + strconv.Quote(got) + "\n  perf   " + strconv.Quote(want)
	}
	return b.String()
}
