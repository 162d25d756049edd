package perfdata

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/perf"
)

// killedFile returns a recording whose writer died after writing n
// samples in rounds, before any checkpoint: the header's data section
// holds the EVENT_UPDATE record only, the samples follow it.
func killedFile(t *testing.T, n int) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "killed.data")
	w, err := Create(path, []EventAttr{{Attr: orderAttr(), IDs: []uint64{7}, Name: "cpu-clock"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := w.WriteRecord(timedSample(uint64(i+1), 0)); err != nil {
			t.Fatal(err)
		}
		if i%10 == 9 {
			if err := w.WriteFinishedRound(); err != nil {
				t.Fatal(err)
			}
		}
	}
	// No Close: the writer is killed. What it wrote is in the file.
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func readSamples(t *testing.T, b []byte) (int64, []string, error) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for r.Next() {
	}
	return r.Count(perf.RecordSample), r.Warnings(), r.Err()
}

// TestReadsKilledRecording: the records a killed writer left past the
// header's data size are read up to the end of the file, with a warning
// that the recording was cut short; a record cut in the middle ends them
// with a second warning, not an error.
func TestReadsKilledRecording(t *testing.T) {
	b := killedFile(t, 95) // 90 in finished rounds
	h := le.Uint64(b[48:])
	if end := le.Uint64(b[40:]) + h; end >= uint64(len(b)) {
		t.Fatalf("the killed file's data section ends at %#x, the file at %#x: want records past it", end, len(b))
	}
	n, w, err := readSamples(t, b)
	if err != nil || n != 90 || len(w) != 1 || !strings.Contains(w[0], "cut short") {
		t.Errorf("killed file: %d samples, warnings %q, error %v; want 90 samples and one warning", n, w, err)
	}
	cut := b[:len(b)-13] // the FINISHED_ROUND and 5 bytes of the last sample
	n, w, err = readSamples(t, cut)
	if err != nil || n != 89 || len(w) != 2 || !strings.Contains(w[1], "the last 51 bytes") {
		t.Errorf("killed file with its last record cut: %d samples, warnings %q, error %v; want 89 samples and two warnings", n, w, err)
	}
}

// TestReadsKilledPerfRecording: perf record writes its header with the
// feature bits first and the data size 0 until the end; killed, its
// records follow the header and are read.
func TestReadsKilledPerfRecording(t *testing.T) {
	b := killedFile(t, 40)
	le.PutUint64(b[48:], 0)                // data size
	le.PutUint64(b[72:], 1<<FeatEventDesc) // feature bits, no sections
	n, w, err := readSamples(t, b)
	if err != nil || n != 40 || len(w) != 1 || !strings.Contains(w[0], "cut short") {
		t.Errorf("killed perf file: %d samples, warnings %q, error %v; want 40 samples and one warning", n, w, err)
	}
}

// TestFinishedRecordingNotCutShort: a closed recording gives no warning,
// and bytes after its feature sections are not read as records.
func TestFinishedRecordingNotCutShort(t *testing.T) {
	b := smallFile(t)
	n, w, err := readSamples(t, b)
	if err != nil || n != 3 || len(w) != 0 {
		t.Errorf("closed file: %d samples, warnings %q, error %v; want 3 samples, no warning", n, w, err)
	}
}
