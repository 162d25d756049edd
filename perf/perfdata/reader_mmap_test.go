package perfdata

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
				if raw, stable := r.Raw(); stable != rec.Stable || !slicesEqual(raw, rec.Raw) || &raw[0] != &rec.Raw[0] {
					t.Fatalf("record at %#x: Raw gives other bytes or Stable (%v) than Record", rec.Offset, stable)
				}
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

// A mapped file with a record that cannot be framed (size below the
// header's, or past the data section's end, in the middle of the data)
// gives the same records, error and warnings as the same bytes read
// through NewReader (not mapped, read in chunks), in both orders.
func TestMappedBadRecord(t *testing.T) {
	c := makeRounds(40, 300, 9)
	_, data := writeRounds(t, c)
	h := Header{}
	h.Data.Offset, h.Data.Size = le.Uint64(data[40:]), le.Uint64(data[48:])
	// Offsets of records about halfway through the data.
	var offs []int
	for off := int(h.Data.Offset); off < int(h.Data.End()); off += int(le.Uint16(data[off+6:])) {
		offs = append(offs, off)
	}
	at := offs[len(offs)/2]
	for _, bad := range []struct {
		name string
		size uint16
	}{{"size 0", 0}, {"size 4", 4}, {"past the end", 0xfff8}} {
		corrupt := slices.Clone(data)
		le.PutUint16(corrupt[at+6:], bad.size)
		if bad.size == 0xfff8 {
			// The data section ends 256 bytes after the record starts.
			le.PutUint64(corrupt[48:], uint64(at+0x100)-h.Data.Offset)
		}
		path := filepath.Join(t.TempDir(), "bad.data")
		must(t, os.WriteFile(path, corrupt, 0o644))
		for _, fileOrder := range []bool{false, true} {
			read := func(r *Reader) (got []delivery, err string, warnings []string, mapped bool) {
				defer r.Close()
				r.SetFileOrder(fileOrder)
				for r.Next() {
					rec := r.Record()
					mapped = mapped || r.src.mp.mem != nil
					got = append(got, delivery{rec.Offset, rec.Time, rec.HasTime, rec.Compressed, rec.Type(), slices.Clone(rec.Raw)})
				}
				return got, fmt.Sprint(r.Err()), r.Warnings(), mapped
			}
			mr, err := Open(path)
			must(t, err)
			mgot, merr, mwarn, mapped := read(mr)
			rr, err := NewReader(bytes.NewReader(corrupt), int64(len(corrupt)))
			must(t, err)
			rgot, rerr, rwarn, _ := read(rr)
			if !mapped {
				t.Fatalf("%s: the file was not mapped", bad.name)
			}
			if merr == "<nil>" || merr != rerr || !slices.Equal(mwarn, rwarn) {
				t.Fatalf("%s (file order %v): mapped: err %s, warnings %q; read: err %s, warnings %q", bad.name, fileOrder, merr, mwarn, rerr, rwarn)
			}
			t.Logf("%s: %d records, then %s", bad.name, len(mgot), merr)
			sameDeliveries(t, mgot, rgot)
		}
	}
}
