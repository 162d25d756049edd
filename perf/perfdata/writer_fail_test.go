package perfdata

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/hwprof/hwprof/perf"
	"golang.org/x/sys/unix"
)

// This file tests what a Writer does when its output fails midway: a
// full disk (ENOSPC) in file mode, a reader that left (EPIPE) in pipe
// mode.

// shortWriter accepts limit bytes, then fails: the write that crosses the
// limit puts its first bytes in and returns err, as write(2) does on a
// disk that fills.
type shortWriter struct {
	bytes.Buffer
	limit int
	err   error
}

func (w *shortWriter) Write(p []byte) (int, error) {
	room := w.limit - w.Len()
	if room >= len(p) {
		return w.Buffer.Write(p)
	}
	w.Buffer.Write(p[:max(room, 0)])
	return max(room, 0), w.err
}

// writtenLog collects what NotifyWritten reports.
type writtenLog struct {
	bytes   []byte
	samples int
}

func (l *writtenLog) note(b []byte) {
	l.bytes = append(l.bytes, b...)
	for len(b) >= eventHeaderSize {
		size := int(le.Uint16(b[6:]))
		if perf.RecordType(le.Uint32(b)) == perf.RecordSample {
			l.samples++
		}
		b = b[size:]
	}
}

// writeUntilFailure writes samples (a FINISHED_ROUND after every 100)
// until the Writer fails, at most max samples; it returns the error and
// the number of WriteRecord calls that succeeded.
func writeUntilFailure(t *testing.T, w *Writer, max int) (error, int) {
	t.Helper()
	st := testAttrs()[0].Attr.SampleType
	for i := range max {
		rec := sampleRecord(st, sampleID{pid: 1, tid: 2, time: uint64(1000 + i)}, 0x1000+uint64(i), 1)
		if err := w.WriteRecord(rec); err != nil {
			return err, i
		}
		if i%100 == 99 {
			if err := w.WriteFinishedRound(); err != nil {
				return err, i + 1
			}
		}
	}
	return nil, max
}

// A stream that breaks in the middle of a record (EPIPE): the Writer
// reports exactly the whole records that went out, keeps returning the
// error, and Close writes nothing more.
func TestPipeWriterFailsMidRecord(t *testing.T) {
	out := &shortWriter{err: syscall.EPIPE}
	out.limit = 1 << 30
	w, err := NewPipeWriter(out, testAttrs(), Features{Hostname: "h"})
	must(t, err)
	preamble := out.Len()
	// Room for about 2.5 MB of records: more than two buffers, and a cut
	// 3 bytes into a record.
	out.limit = preamble + 2_500_000 + 3
	var log writtenLog
	w.NotifyWritten(log.note)
	werr, n := writeUntilFailure(t, w, 1_000_000)
	if !errors.Is(werr, syscall.EPIPE) {
		t.Fatalf("write error %v, want EPIPE", werr)
	}
	got := out.Bytes()[preamble:]
	if !bytes.HasPrefix(got, log.bytes) {
		t.Fatal("the records reported are not what the stream got")
	}
	if cut := len(got) - len(log.bytes); cut < 0 || cut >= 40 {
		t.Errorf("the stream got %d bytes past the records reported; want only the part of one record (< 40)", cut)
	}
	if log.samples == 0 || log.samples > n {
		t.Errorf("%d samples reported written of %d given", log.samples, n)
	}
	// DataSize: the records of the preamble (all but the 16-byte pipe
	// header) and those reported.
	if want := int64(preamble - 16 + len(log.bytes)); w.DataSize() != want {
		t.Errorf("DataSize %d after the failure, want the %d bytes of records the stream got", w.DataSize(), want)
	}
	size := out.Len()
	if err := w.WriteRecord(sampleRecord(testAttrs()[0].Attr.SampleType, sampleID{}, 1, 1)); err != werr {
		t.Errorf("WriteRecord after the failure: %v, want the same error", err)
	}
	if err := w.Checkpoint(); err != werr {
		t.Errorf("Checkpoint after the failure: %v, want the same error", err)
	}
	if err := w.Close(Features{BuildIDs: []BuildID{{PID: -1, ID: testID(bytes.Repeat([]byte{0xab}, 20)), Path: "/x"}}}); err != werr {
		t.Errorf("Close after the failure: %v, want the same error", err)
	}
	if out.Len() != size {
		t.Errorf("%d bytes written after the failure", out.Len()-size)
	}
}

// The whole records of a failed write are found at any cut.
func TestWholeRecords(t *testing.T) {
	recs := [][]byte{record(perf.RecordComm, 0, make([]byte, 16)), finishedRound[:], record(perf.RecordSample, 0, make([]byte, 32))}
	var buf []byte
	ends := []int{0}
	for _, r := range recs {
		buf = append(buf, r...)
		ends = append(ends, len(buf))
	}
	for _, start := range []int{0, 16} {
		b := append(make([]byte, start), buf...)
		for n := 0; n <= len(b); n++ {
			want := 0
			for _, e := range ends {
				if start+e <= n {
					want = start + e
				}
			}
			if n < start {
				want = 0
			}
			if got := wholeRecords(b, start, n); got != want {
				t.Errorf("start %d, %d bytes written: whole records end at %d, want %d", start, n, got, want)
			}
		}
	}
}

// smallTmpfs mounts a tmpfs of size bytes for the test, or skips when not
// root.
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

// A disk that fills while records are written (ENOSPC): the file ends at
// the last whole record, its header covers exactly the records written,
// and hwprof's reader and perf read them all without a complaint.
func TestWriterDiskFull(t *testing.T) {
	dir := smallTmpfs(t, "256k")
	path := filepath.Join(dir, "full.data")
	w, err := Create(path, testAttrs())
	must(t, err)
	var log writtenLog
	w.NotifyWritten(log.note)
	werr, n := writeUntilFailure(t, w, 1_000_000)
	if !errors.Is(werr, syscall.ENOSPC) {
		t.Fatalf("write error %v after %d samples, want ENOSPC", werr, n)
	}
	if err := w.Close(Features{Hostname: "h"}); err != werr {
		t.Errorf("Close after the failure: %v, want the same error", err)
	}
	p := parseFile(t, path)
	fi, err := os.Stat(path)
	must(t, err)
	end := p.hdr.Data.Offset + p.hdr.Data.Size
	if uint64(fi.Size()) != end {
		t.Errorf("file of %d bytes, header data ends at %d: want the file cut after the last whole record", fi.Size(), end)
	}
	if len(p.features) != 0 {
		t.Errorf("features %v after a failed write", p.features)
	}
	b, err := os.ReadFile(path)
	must(t, err)
	if !bytes.HasSuffix(b, log.bytes) {
		t.Error("the file does not end with the records reported written")
	}
	if log.samples < 1000 {
		t.Fatalf("only %d samples written into 256 KB", log.samples)
	}
	if got := countFileSamples(t, path); got != log.samples {
		t.Errorf("the reader reads %d samples, %d were reported written", got, log.samples)
	}
	if _, err := exec.LookPath("perf"); err == nil {
		if got := countSamples(t, path); got != log.samples {
			t.Errorf("perf report --stats: %d samples, want %d", got, log.samples)
		}
	}
}

// Records that fit but feature sections that do not: the file keeps every
// record, ends with them (no partial section left past the data) and has
// no feature bits.
func TestWriterDiskFullAtFeatures(t *testing.T) {
	dir := smallTmpfs(t, "256k")
	path := filepath.Join(dir, "feat.data")
	w, err := Create(path, testAttrs())
	must(t, err)
	var log writtenLog
	w.NotifyWritten(log.note)
	if err, _ := writeUntilFailure(t, w, 2000); err != nil {
		t.Fatal(err)
	}
	must(t, w.Checkpoint())
	// Fill what is left of the disk.
	fill, err := os.Create(filepath.Join(dir, "fill"))
	must(t, err)
	_, ferr := io.Copy(fill, io.LimitReader(zeros{}, 1<<20))
	fill.Close()
	if !errors.Is(ferr, syscall.ENOSPC) {
		t.Fatalf("filling the disk: %v, want ENOSPC", ferr)
	}
	// Build-ids of more than a page: the features cannot fit in the rest
	// of the file's last page.
	f := Features{Hostname: "h"}
	for i := range 100 {
		f.BuildIDs = append(f.BuildIDs, BuildID{PID: int32(i), ID: testID(bytes.Repeat([]byte{0xab}, 20)), Path: "/lib/" + string(bytes.Repeat([]byte{'x'}, 200))})
	}
	if err := w.Close(f); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Close on a full disk: %v, want ENOSPC", err)
	}
	p := parseFile(t, path)
	fi, err := os.Stat(path)
	must(t, err)
	if end := p.hdr.Data.Offset + p.hdr.Data.Size; uint64(fi.Size()) != end || len(p.features) != 0 {
		t.Errorf("file of %d bytes, data ends at %d, features %v: want the file to end with its records, no features",
			fi.Size(), end, p.features)
	}
	if log.samples != 2000 {
		t.Errorf("%d samples reported written, want 2000", log.samples)
	}
	if got := countFileSamples(t, path); got != 2000 {
		t.Errorf("the reader reads %d samples, want 2000", got)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// countFileSamples reads path with the Reader and counts its samples, failing
// on a warning or an error.
func countFileSamples(t *testing.T, path string) int {
	t.Helper()
	r, err := Open(path)
	must(t, err)
	defer r.Close()
	n := 0
	for r.Next() {
		if r.Record().Type() == perf.RecordSample {
			n++
		}
	}
	must(t, r.Err())
	for _, w := range r.Warnings() {
		t.Errorf("reader warning: %s", w)
	}
	return n
}
