package perfdata

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hwprof/hwprof/perf"
)

// TestGrowing reads a file as its writer writes it: each Next loop
// delivers the records the header covers, the round in progress held
// back, every record once and in order; a file whose writer dies is read
// to its end with last, the partial record at its end reported; a
// finished file gets its feature sections.
func TestGrowing(t *testing.T) {
	for _, finish := range []bool{true, false} {
		path := filepath.Join(t.TempDir(), "perf.data")
		attrs := testAttrs()
		w, err := Create(path, attrs)
		must(t, err)
		must(t, w.Checkpoint())
		r, err := OpenGrowing(path)
		must(t, err)
		defer r.Close()
		st := attrs[0].Attr.SampleType
		var times []uint64 // the samples' times as delivered
		read := func() int {
			n := 0
			for r.Next() {
				if rec := r.Record(); rec.Type() == perf.RecordSample {
					times = append(times, rec.Time)
					n++
				}
			}
			must(t, r.Err())
			return n
		}
		if n := read(); n != 0 || !r.Paused() {
			t.Fatalf("a file with no records: %d samples, paused %v", n, r.Paused())
		}
		tm := uint64(100)
		write := func(n int, round bool) {
			for range n {
				tm++
				must(t, w.WriteRecord(sampleRecord(st, sampleID{pid: 1, tid: 2, time: tm}, 0x1000, 1)))
			}
			if round {
				must(t, w.WriteFinishedRound())
			}
		}
		write(5, true)
		write(3, false) // a round in progress
		must(t, w.Checkpoint())
		if fin, err := r.Grow(false); err != nil || fin {
			t.Fatalf("Grow: %v, %v", fin, err)
		}
		if n := read(); n != 5 || !r.Paused() {
			t.Errorf("first part: %d samples, paused %v; want the first round's 5", n, r.Paused())
		}
		write(2, true)
		if n := read(); n != 0 { // not yet in the header
			t.Errorf("before a checkpoint: %d samples", n)
		}
		must(t, w.Checkpoint())
		must(t, appendBytes(path, sampleRecord(st, sampleID{pid: 1, tid: 2, time: tm + 1}, 0x1000, 1)[:20])) // half written
		if _, err := r.Grow(false); err != nil {
			t.Fatal(err)
		}
		if n := read(); n != 5 {
			t.Errorf("second part: %d samples, want the 3 held and 2", n)
		}
		want := 10
		if finish {
			write(4, true)
			must(t, w.Close(Features{Hostname: "h"}))
			if fin, err := r.Grow(false); err != nil || !fin {
				t.Fatalf("Grow of the finished file: %v, %v", fin, err)
			}
			want += 4
			if r.Features().Hostname != "h" || r.Incomplete() {
				t.Errorf("finished file: host %q, incomplete %v %q", r.Features().Hostname, r.Incomplete(), r.Warnings())
			}
		} else {
			// The writer died after writing 2 more records and half of
			// one, past the header's data size.
			for i := range 2 {
				must(t, appendBytesAt(path, sampleRecord(st, sampleID{pid: 1, tid: 2, time: tm + 1 + uint64(i)}, 0x1000, 1), i))
			}
			tm += 2
			if fin, err := r.Grow(true); err != nil || !fin {
				t.Fatalf("Grow(last): %v, %v", fin, err)
			}
			want += 2
		}
		if n := read(); n != want-10 || r.Paused() {
			t.Errorf("last part: %d samples, paused %v; want %d, the end", n, r.Paused(), want-10)
		}
		if !finish && !r.Incomplete() {
			t.Errorf("a file cut short is not said incomplete: %q", r.Warnings())
		}
		if len(times) != want {
			t.Fatalf("%d samples in all, wrote %d", len(times), want)
		}
		for i, x := range times {
			if x != uint64(101+i) {
				t.Fatalf("sample %d has time %d: want every sample once, in order (%v)", i, x, times)
			}
		}
		if !finish {
			w.Close(Features{})
		}
	}
}

// appendBytes appends b to the file at path.
func appendBytes(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// appendBytesAt writes b as the i-th record past the header's data
// section: over the partial record appendBytes left there for i = 0.
func appendBytesAt(path string, b []byte, i int) error {
	r, err := Open(path)
	if err != nil {
		return err
	}
	end := int64(r.Header().Data.End())
	r.Close()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteAt(b, end+int64(i*len(b)))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
