package perfdata

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/hwprof/hwprof/perf"
)

// writeRounds writes c as a file-mode recording and returns its path and
// bytes.
func writeRounds(t *testing.T, c roundsCase) (string, []byte) {
	t.Helper()
	st := perf.SampleIP | perf.SampleTID | perf.SampleTime | perf.SampleCPU | perf.SamplePeriod | perf.SampleCallchain
	path := filepath.Join(t.TempDir(), "rounds.data")
	w, err := Create(path, []EventAttr{{Attr: cpuClockAttr(st), Name: "cpu-clock"}})
	must(t, err)
	for _, rec := range c.recs {
		if le.Uint32(rec) == uint32(perf.RecordFinishedRound) {
			must(t, w.WriteFinishedRound())
		} else {
			must(t, w.WriteRecord(rec))
		}
	}
	must(t, w.Close(Features{}))
	data, err := os.ReadFile(path)
	must(t, err)
	return path, data
}

// A file-mode recording is read through a mapping: the records come out
// in the same order with the same bytes as when read, pages behind the
// held records are let go (never one a record delivered later is in),
// also when oversized rounds go out by halves.
func TestMappedRecords(t *testing.T) {
	c := makeRounds(40, 300, 7)
	path, data := writeRounds(t, c)
	if len(data) < minMap {
		t.Fatalf("file of %d bytes: want at least %d to be mapped", len(data), minMap)
	}
	for _, limit := range []int{0, 16 << 10} {
		t.Run(fmt.Sprintf("limit=%d", limit), func(t *testing.T) {
			r, err := Open(path)
			must(t, err)
			defer r.Close()
			r.queue.limit = limit
			r.src.mp.step = pageSize
			var got []delivery
			for r.Next() {
				if r.src.mp.mem == nil {
					t.Fatal("the data section was not mapped")
				}
				rec := r.Record()
				if rec.Stable != !rec.Compressed || rec.Kept {
					t.Fatalf("record at %#x of a mapped file: Stable %v, Kept %v", rec.Offset, rec.Stable, rec.Kept)
				}
				got = append(got, delivery{rec.Offset, rec.Time, rec.HasTime, rec.Compressed, rec.Type(), append([]byte(nil), rec.Raw...)})
				if start := int(rec.Offset - r.src.mp.off); start < r.src.mp.released {
					t.Fatalf("record at %#x delivered after the mapping before %#x was let go", rec.Offset, r.src.mp.off+int64(r.src.mp.released))
				}
				if !slicesEqual(rec.Raw, data[rec.Offset:rec.Offset+int64(len(rec.Raw))]) {
					t.Fatalf("record at %#x: other bytes than the file's", rec.Offset)
				}
			}
			if err := r.Err(); err != nil || len(r.Warnings()) > 0 {
				t.Fatalf("err %v, warnings %q", err, r.Warnings())
			}
			if limit == 0 {
				c.checkOrder(t, got)
			}
			if r.src.mp.released < len(data)/2 {
				t.Errorf("only %d bytes of %d let go", r.src.mp.released, len(data))
			}
			must(t, r.Close())
			if r.src.mp.mem != nil {
				t.Error("still mapped after Close")
			}
		})
	}
}

func slicesEqual(a, b []byte) bool { return string(a) == string(b) }

// A file cut shorter after it was opened is read, not mapped (a page past
// the end would fault): its records up to the cut, then ErrTruncated. With
// SetKeepRecords, which keeps records past Close, nothing is mapped either.
func TestMappedFallback(t *testing.T) {
	c := makeRounds(40, 300, 8)
	path, data := writeRounds(t, c)

	r, err := Open(path)
	must(t, err)
	defer r.Close()
	must(t, os.Truncate(path, int64(len(data)/2)))
	n := 0
	for r.Next() {
		if r.Record().Stable {
			t.Fatalf("record at %#x Stable, read without SetKeepRecords from a file not mapped", r.Record().Offset)
		}
		n++
	}
	if r.src.mp.mem != nil {
		t.Error("a file cut shorter than when opened was mapped")
	}
	if err := r.Err(); !errors.Is(err, ErrTruncated) || n == 0 {
		t.Errorf("%d records, err %v: want some records, then ErrTruncated", n, err)
	}

	path, data = writeRounds(t, c)
	r, err = Open(path)
	must(t, err)
	defer r.Close()
	got, err := readChecked(t, r, data, true, 0)
	if err != nil || r.src.mp.mem != nil {
		t.Fatalf("err %v, mapped %v", err, r.src.mp.mem != nil)
	}
	c.checkOrder(t, got)
}
