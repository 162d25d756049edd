package perfdata

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hwprof/hwprof/internal/fixtures"
	"github.com/hwprof/hwprof/perf"
)

// These tests check that records stay in the chunks the source read them
// into: with SetKeepRecords every Kept record still holds its bytes after
// the whole input is read, and without it (buffers reused) every record
// holds its bytes when it is delivered, in the same order as with fresh
// buffers. Small chunks make records straddle chunks and rounds span many.

// delivery is what a Reader delivered for one record.
type delivery struct {
	off        int64
	time       uint64
	hasTime    bool
	compressed bool
	typ        perf.RecordType
	raw        []byte // a copy
}

// readChecked reads r to the end. Every record read from the stream must
// equal data at its offset when it is delivered, and every Kept one again
// at the end; Kept must be set exactly for those (with keep). It returns
// the deliveries and the reader's error.
func readChecked(t *testing.T, r *Reader, data []byte, keep bool, chunk int) ([]delivery, error) {
	t.Helper()
	r.SetKeepRecords(keep)
	r.src.chunkSize = chunk
	type kept struct {
		off int64
		raw []byte
	}
	var all []delivery
	var held []kept
	bad := 0
	for r.Next() {
		rec := r.Record()
		all = append(all, delivery{rec.Offset, rec.Time, rec.HasTime, rec.Compressed, rec.Type(), bytes.Clone(rec.Raw)})
		if rec.Kept != (keep && !rec.Compressed) {
			t.Fatalf("record at %#x (compressed %v, keep %v): Kept %v", rec.Offset, rec.Compressed, keep, rec.Kept)
		}
		if keep && rec.Stable != !rec.Compressed {
			t.Fatalf("record at %#x (compressed %v) with SetKeepRecords: Stable %v", rec.Offset, rec.Compressed, rec.Stable)
		}
		if rec.Compressed {
			continue
		}
		if end := rec.Offset + int64(len(rec.Raw)); end > int64(len(data)) || !bytes.Equal(rec.Raw, data[rec.Offset:end]) {
			if bad++; bad < 5 {
				t.Errorf("record at %#x (%d bytes) delivered with other bytes than the input's", rec.Offset, len(rec.Raw))
			}
		}
		if rec.Kept {
			held = append(held, kept{rec.Offset, rec.Raw})
		}
	}
	for _, k := range held {
		if !bytes.Equal(k.raw, data[k.off:k.off+int64(len(k.raw))]) {
			if bad++; bad < 10 {
				t.Errorf("Kept record at %#x was overwritten after it was delivered", k.off)
			}
		}
	}
	if keep && len(held) == 0 && len(all) > 0 {
		t.Errorf("%d records, none Kept", len(all))
	}
	return all, r.Err()
}

// roundsCase is a synthesized recording: rounds of callchain samples of
// varied sizes with times shuffled within each round, some without a time
// (delivered when read), and the order a Reader must deliver them in.
type roundsCase struct {
	recs [][]byte // in file order
	want []int    // indices into recs, in delivery order
}

func makeRounds(rounds, perRound int, seed uint64) roundsCase {
	rng := rand.New(rand.NewPCG(seed, 1))
	var c roundsCase
	for k := range rounds {
		var untimed, timed []int
		times := map[int]uint64{}
		for range perRound {
			tm := uint64(k+1)*1_000_000 + rng.Uint64N(100_000)
			if rng.IntN(17) == 0 {
				tm = 0
			}
			i := len(c.recs)
			c.recs = append(c.recs, callchainSample(tm, 1+rng.IntN(60)))
			if tm == 0 {
				untimed = append(untimed, i)
			} else {
				timed = append(timed, i)
				times[i] = tm
			}
		}
		slices.SortStableFunc(timed, func(a, b int) int { return int(times[a]) - int(times[b]) })
		c.want = append(c.want, untimed...)
		c.want = append(c.want, timed...)
		c.want = append(c.want, len(c.recs))
		c.recs = append(c.recs, finishedRound[:])
	}
	return c
}

// checkOrder compares the delivered records (perf's own records before
// the data, such as HEADER_ATTR in a stream, left out) with the expected
// order.
func (c roundsCase) checkOrder(t *testing.T, got []delivery) {
	t.Helper()
	var bodies [][]byte
	for _, d := range got {
		if d.typ < perf.RecordHeaderAttr || d.typ == perf.RecordFinishedRound {
			bodies = append(bodies, d.raw)
		}
	}
	if len(bodies) != len(c.want) {
		t.Fatalf("%d records delivered, want %d", len(bodies), len(c.want))
	}
	for i, j := range c.want {
		if !bytes.Equal(bodies[i], c.recs[j]) {
			t.Fatalf("delivery %d is not record %d of the file", i, j)
		}
	}
}

// chunkSizes are the chunk sizes the tests read with: tiny (a new chunk
// for almost every record), small, and the default.
var chunkSizes = []int{512, 20 << 10, 0}

func TestKeptRecordsSynthesizedFile(t *testing.T) {
	c := makeRounds(40, 300, 1)
	path, data := writeRounds(t, c)
	if len(data) < 2<<20 {
		t.Fatalf("file of %d bytes: want more than two default chunks", len(data))
	}
	for _, keep := range []bool{true, false} {
		for _, chunk := range chunkSizes {
			t.Run(fmt.Sprintf("keep=%v,chunk=%d", keep, chunk), func(t *testing.T) {
				r, err := Open(path)
				must(t, err)
				defer r.Close()
				got, err := readChecked(t, r, data, keep, chunk)
				if err != nil || len(r.Warnings()) > 0 {
					t.Fatalf("err %v, warnings %q", err, r.Warnings())
				}
				c.checkOrder(t, got)
				if !keep && chunk == chunkSizes[0] {
					// Reused: the chunks in use are those of about two rounds.
					if n := len(r.src.retired); n > 2*len(data)/40/chunk+8 {
						t.Errorf("%d chunks retired and not reused", n)
					}
				}
			})
		}
	}
}

// smallReads returns at most n bytes per Read, as a pipe may.
type smallReads struct {
	r io.Reader
	n int
}

func (s *smallReads) Read(p []byte) (int, error) { return s.r.Read(p[:min(len(p), s.n)]) }

func TestKeptRecordsSynthesizedStream(t *testing.T) {
	c := makeRounds(30, 200, 2)
	st := perf.SampleIP | perf.SampleTID | perf.SampleTime | perf.SampleCPU | perf.SamplePeriod | perf.SampleCallchain
	s := newStream().add(attrRecord(cpuClockAttr(st)))
	s.add(c.recs...)
	readers := map[string]func() (*Reader, error){
		"pipe": func() (*Reader, error) { return NewPipeReader(bytes.NewReader(s.b)) },
		"pipe-small-reads": func() (*Reader, error) {
			return NewPipeReader(&smallReads{bytes.NewReader(s.b), 1000})
		},
		"pipe-mode-file": func() (*Reader, error) { return NewReader(bytes.NewReader(s.b), int64(len(s.b))) },
	}
	for name, open := range readers {
		for _, keep := range []bool{true, false} {
			for _, chunk := range chunkSizes {
				t.Run(fmt.Sprintf("%s,keep=%v,chunk=%d", name, keep, chunk), func(t *testing.T) {
					r, err := open()
					must(t, err)
					defer r.Close()
					got, err := readChecked(t, r, s.b, keep, chunk)
					if err != nil || len(r.Warnings()) > 0 {
						t.Fatalf("err %v, warnings %q", err, r.Warnings())
					}
					c.checkOrder(t, got)
				})
			}
		}
	}
}

// Records from COMPRESSED records are never Kept: their buffer is reused.
// Those held for a round are copies that stay right while held, next to
// records read from the stream, which are held in place.
func TestKeptRecordsCompressed(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 1))
	want := map[uint64][]byte{} // sample by time
	s := newStream().add(attrRecord(orderAttr(), 7))
	const rounds = 20
	for k := range rounds {
		var inner []byte
		for range 150 {
			tm := uint64(k+1)*1_000_000 + rng.Uint64N(100_000)
			if want[tm] != nil {
				continue
			}
			rec := timedSample(tm, uint32(rng.IntN(4)))
			want[tm] = rec
			if rng.IntN(3) == 0 {
				s.add(rec) // between the compressed records
			} else {
				inner = append(inner, rec...)
			}
		}
		cut := len(inner) / 3 // a record split across two COMPRESSED records
		s.add(compressedRecord(zstdFrame(t, inner[:cut])), compressed2Record(zstdFrame(t, inner[cut:])))
		s.add(finishedRound[:])
	}
	for _, keep := range []bool{true, false} {
		for _, chunk := range chunkSizes {
			t.Run(fmt.Sprintf("keep=%v,chunk=%d", keep, chunk), func(t *testing.T) {
				r, err := NewPipeReader(bytes.NewReader(s.b))
				must(t, err)
				defer r.Close()
				got, err := readChecked(t, r, s.b, keep, chunk)
				if err != nil || len(r.Warnings()) > 0 {
					t.Fatalf("err %v, warnings %q", err, r.Warnings())
				}
				samples, compressed := checkSamples(t, got, want, true)
				if samples != len(want) || compressed == 0 || compressed == samples {
					t.Errorf("%d samples of %d, %d compressed", samples, len(want), compressed)
				}
			})
		}
	}
}

// sameDeliveries compares two reads of one input.
func sameDeliveries(t *testing.T, got, want []delivery) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.off != w.off || g.time != w.time || g.hasTime != w.hasTime || g.compressed != w.compressed || !bytes.Equal(g.raw, w.raw) {
			t.Fatalf("record %d: at %#x (time %d, compressed %v), want at %#x (time %d, compressed %v)",
				i, g.off, g.time, g.compressed, w.off, w.time, w.compressed)
		}
	}
}

// checkRealFile reads a recording with fresh and with reused chunks of
// each size, and with the default settings: the same records come out,
// Kept ones intact at the end. It returns the deliveries.
func checkRealFile(t *testing.T, path string) []delivery {
	t.Helper()
	data, err := os.ReadFile(path)
	must(t, err)
	read := func(keep bool, chunk int) ([]delivery, error, []string) {
		r, err := Open(path)
		if err != nil {
			t.Fatalf("open %s: %v", path, err)
		}
		defer r.Close()
		got, err := readChecked(t, r, data, keep, chunk)
		return got, err, r.Warnings()
	}
	want, wantErr, wantWarn := read(false, 0)
	for _, keep := range []bool{true, false} {
		for _, chunk := range chunkSizes {
			got, err, warn := read(keep, chunk)
			if fmt.Sprint(err) != fmt.Sprint(wantErr) || !slices.Equal(warn, wantWarn) {
				t.Errorf("keep %v, chunk %d: err %v, warnings %q; by default: %v, %q", keep, chunk, err, warn, wantErr, wantWarn)
			}
			sameDeliveries(t, got, want)
		}
	}
	return want
}

func TestKeptRecordsPerfRecord(t *testing.T) {
	t.Parallel() // perf record waits about a second before it exits; nothing shared but the recordings read
	got := checkRealFile(t, perfRecordFile(t))
	if len(got) < 100 {
		t.Errorf("%d records", len(got))
	}
}

func TestKeptRecordsPerfRecordCompressed(t *testing.T) {
	t.Parallel() // perf record waits about a second before it exits; nothing shared but the recordings read
	got := checkRealFile(t, perfRecordFile(t, "-z"))
	n := 0
	for _, d := range got {
		if d.compressed {
			n++
		}
	}
	if n == 0 {
		t.Skipf("perf record -z wrote no compressed records here")
	}
}

// The real recordings of ../shared/fixtures, perf 3.x to today, file and
// pipe mode, some damaged.
func TestKeptRecordsFixtures(t *testing.T) {
	dir := fixtures.Dir(t)
	for _, row := range readExpected(t, dir) {
		t.Run(row.file, func(t *testing.T) { checkRealFile(t, filepath.Join(dir, row.file)) })
	}
}

// Without rounds, an oversized queue delivers its older half early and
// keeps the rest across the arena's compaction: decompressed records held
// that long (copies) and records held in place both come out intact.
func TestKeptRecordsHalfFlush(t *testing.T) {
	const limit = 64 << 10
	rng := rand.New(rand.NewPCG(4, 1))
	want := map[uint64][]byte{}
	s := newStream().add(attrRecord(orderAttr(), 7))
	n := 0
	for i := range 60 {
		var inner []byte
		for j := range 100 {
			tm := uint64(1_000_000 - 100*i - j) // descending: every half flush keeps a half
			rec := timedSample(tm, 0)
			want[tm] = rec
			n++
			if rng.IntN(2) == 0 {
				s.add(rec)
			} else {
				inner = append(inner, rec...)
			}
		}
		s.add(compressedRecord(zstdFrame(t, inner)))
	}
	for _, keep := range []bool{true, false} {
		for _, chunk := range chunkSizes {
			t.Run(fmt.Sprintf("keep=%v,chunk=%d", keep, chunk), func(t *testing.T) {
				r, err := NewPipeReader(bytes.NewReader(s.b))
				must(t, err)
				defer r.Close()
				r.queue.limit = limit
				got, err := readChecked(t, r, s.b, keep, chunk)
				if err != nil || len(r.Warnings()) > 0 {
					t.Fatalf("err %v, warnings %q", err, r.Warnings())
				}
				samples, compressed := checkSamples(t, got, want, false)
				if samples != n || compressed == 0 || r.OutOfOrder() == 0 {
					t.Errorf("%d samples of %d, %d compressed, %d out of order", samples, n, compressed, r.OutOfOrder())
				}
				if h := r.queue.held; h != 0 {
					t.Errorf("%d bytes still held at the end", h)
				}
			})
		}
	}
}

// checkSamples checks that every sample delivered has the bytes want
// gives for its time (in time order, if ordered) and counts the samples
// and those from COMPRESSED records.
func checkSamples(t *testing.T, got []delivery, want map[uint64][]byte, ordered bool) (samples, compressed int) {
	t.Helper()
	var last uint64
	for _, d := range got {
		if d.typ != perf.RecordSample {
			continue
		}
		samples++
		if d.compressed {
			compressed++
		}
		if !bytes.Equal(d.raw, want[d.time]) {
			t.Fatalf("sample at time %d (compressed %v) delivered with other bytes", d.time, d.compressed)
		}
		if ordered && d.time < last {
			t.Fatalf("sample at time %d after %d", d.time, last)
		}
		last = d.time
	}
	return samples, compressed
}
