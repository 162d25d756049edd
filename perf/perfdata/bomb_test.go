package perfdata

import (
	"bytes"
	"runtime"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/internal/zbomb"
	"github.com/hwprof/hwprof/perf"
)

// allocated returns the bytes f allocated on the heap (all goroutines).
func allocated(f func()) uint64 {
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	f()
	runtime.ReadMemStats(&m1)
	return m1.TotalAlloc - m0.TotalAlloc
}

// TestDecompressionBombs reads COMPRESSED records that expand to
// gigabytes (zbomb's shapes): a record past its limit stops with a
// warning naming it and its offset, having allocated little more than
// the limit; an endless stream of records each within the limit is read
// whole in bounded memory.
func TestDecompressionBombs(t *testing.T) {
	const records = 40 // endless: 40 records of 8 MiB
	for _, sh := range zbomb.Shapes(records) {
		t.Run(sh.Name, func(t *testing.T) {
			var warnings []string
			var n, unknown int64
			alloc := allocated(func() {
				r, err := NewPipeReader(bytes.NewReader(sh.Stream))
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				for r.Next() {
					n++
				}
				if err := r.Err(); err != nil {
					t.Fatal(err)
				}
				warnings = r.Warnings()
				unknown = r.Unknown()
			})
			t.Logf("%d bytes in, %d records, allocated %d MiB; warnings %q", len(sh.Stream), n, alloc>>20, warnings)
			// Two buffers of the limit, the decoder's window and blocks.
			if bound := uint64(3*defaultDecompressed + 16<<20); alloc > bound {
				t.Errorf("reading allocated %d MiB, want at most %d MiB", alloc>>20, bound>>20)
			}
			if !sh.Limited {
				want := int64(records) * 64 * zbomb.BlockSize / 0x0808
				if unknown != want || len(warnings) > 1 {
					t.Errorf("endless stream: %d records read, want %d; warnings %q", unknown, want, warnings)
				}
				return
			}
			if len(warnings) == 0 || !strings.Contains(warnings[0], "COMPRESSED record at offset 0x10") {
				t.Errorf("warnings %q: want one naming the COMPRESSED record at offset 0x10", warnings)
			}
			if sh.Name != "content-size-window" && !strings.Contains(warnings[0], "expands to more than 16777216 bytes") {
				t.Errorf("warning %q: want it to say the record expands past 16777216 bytes", warnings[0])
			}
		})
	}
}

// TestDecompressLimitFromFeature: the limit is HEADER_COMPRESSED's
// mmap_len (perf's), here 1 MiB: a stream of 8 MiB records is cut at the
// first, and the records after it are counted as not decompressed.
func TestDecompressLimitFromFeature(t *testing.T) {
	feat := le.AppendUint64(nil, uint64(FeatCompressed))
	for _, v := range []uint32{1, 1 /* zstd */, 1, 10, 1 << 20} { // version, type, level, ratio, mmap_len
		feat = le.AppendUint32(feat, v)
	}
	sh := zbomb.Shapes(3)[4] // endless
	s := newStream().add(record(perf.RecordHeaderFeature, 0, feat))
	s.b = append(s.b, sh.Stream[pipeHeaderSize:]...)
	r, err := NewPipeReader(bytes.NewReader(s.b))
	if err != nil {
		t.Fatal(err)
	}
	drain(t, r)
	w := r.Warnings()
	if len(w) != 2 || !strings.Contains(w[0], "expands to more than 1048576 bytes") || !strings.Contains(w[1], "2 more COMPRESSED records were not decompressed") {
		t.Errorf("warnings %q: want the first record past 1 MiB and 2 more skipped", w)
	}
}
