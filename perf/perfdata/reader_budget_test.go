package perfdata

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/internal/zbomb"
)

// TestSpansClaim: sections that overlap one claimed before, or one
// another, are refused, the first (lowest offset, then first named)
// kept; touching sections and empty ones are not overlaps.
func TestSpansClaim(t *testing.T) {
	var p spans
	p.claim([]span{{Section{0, 104}, "header"}, {Section{1000, 100}, "data"}})
	cands := []span{
		{Section{104, 10}, "a"},   // touches the header
		{Section{120, 30}, "b"},   // taken
		{Section{120, 30}, "c"},   // b's bytes again
		{Section{114, 8}, "d"},    // before b, touching a: taken, so b goes
		{Section{990, 11}, "e"},   // into the data
		{Section{1100, 0}, "f"},   // empty
		{Section{50, 0}, "g"},     // empty, inside the header
		{Section{1100, 5}, "h"},   // touches the data
		{Section{1104, 1}, "i"},   // inside h
		{Section{100, 4}, "j"},    // in the header
		{Section{2000, 1e9}, "k"}, // taken
	}
	want := []string{"", "d", "d", "", "data", "", "", "", "h", "header", ""}
	clash := p.claim(cands)
	for i, c := range clash {
		if c.what != want[i] {
			t.Errorf("%s %+v: refused for %q, want %q", cands[i].what, cands[i].Section, c.what, want[i])
		}
	}
	for i := 1; i < len(p); i++ {
		if p[i-1].End() > p[i].Offset {
			t.Errorf("spans %+v and %+v overlap", p[i-1], p[i])
		}
	}
	if len(p) != 6 {
		t.Errorf("%d spans after the claim, want 6: %+v", len(p), p)
	}
}

// TestHeaderBudget reads zbomb's hostile files: each is read with the
// warning it calls for, allocating a few times its size, and the
// header sections read total at most the file's size. Before the budget
// six string features on one string of 32 MiB allocated 12 times that,
// and 2000 events on one ids section 2000 times it.
func TestHeaderBudget(t *testing.T) {
	shapes := append(zbomb.FileShapes(), zbomb.SixStrings(32<<20))
	for _, sh := range shapes {
		t.Run(sh.Name, func(t *testing.T) {
			var warnings []string
			var hdr int64
			var events int
			alloc := allocated(func() {
				r, err := NewReader(bytes.NewReader(sh.File), int64(len(sh.File)))
				if err != nil {
					t.Fatal(err)
				}
				drain(t, r)
				warnings, hdr, events = r.Warnings(), r.hdrBytes, len(r.Attrs())
			})
			t.Logf("%d bytes, allocated %d KiB, header bytes read %d; warnings %.300q", len(sh.File), alloc>>10, hdr, warnings)
			// Three times the file, and an event's structures.
			if bound := uint64(3*len(sh.File) + 32<<20 + events<<10); alloc > bound {
				t.Errorf("allocated %d MiB reading a file of %d MiB, want at most %d MiB", alloc>>20, len(sh.File)>>20, bound>>20)
			}
			if hdr > int64(len(sh.File)) {
				t.Errorf("read %d header bytes from a file of %d", hdr, len(sh.File))
			}
			if sh.Warning != "" && !strings.Contains(strings.Join(warnings, "\n"), sh.Warning) {
				t.Errorf("warnings %q: want one with %q", warnings, sh.Warning)
			}
		})
	}
}

// TestHeaderRecordsFromCompressed: header records that come out of
// COMPRESSED records (8 MiB of BUILD_ID and ATTR records from each of 20
// records of about 900 bytes) are kept only up to the bytes read: the
// rest are ignored, counted in one warning, and the recording is
// incomplete.
func TestHeaderRecordsFromCompressed(t *testing.T) {
	stream := zbomb.CompressedHeaderRecords(20)
	var r *Reader
	alloc := allocated(func() {
		var err error
		if r, err = NewPipeReader(bytes.NewReader(stream)); err != nil {
			t.Fatal(err)
		}
		drain(t, r)
	})
	w := r.Warnings()
	t.Logf("%d bytes, allocated %d MiB, %d events, %d build-ids; warnings %q", len(stream), alloc>>20, len(r.Attrs()), len(r.Features().BuildIDs), w)
	if r.hdrBytes > int64(len(stream)) {
		t.Errorf("kept %d bytes of header records from a stream of %d", r.hdrBytes, len(stream))
	}
	if len(w) != 2 || !strings.Contains(w[0], "from the COMPRESSED record at offset 0x10") || !strings.Contains(w[1], "header records from COMPRESSED records were ignored") || !r.Incomplete() {
		t.Errorf("warnings %q (incomplete %v): want the first record ignored and the count, incomplete", w, r.Incomplete())
	}
	if bound := uint64(3*defaultDecompressed + 32<<20); alloc > bound {
		t.Errorf("allocated %d MiB, want at most %d MiB", alloc>>20, bound>>20)
	}
}
