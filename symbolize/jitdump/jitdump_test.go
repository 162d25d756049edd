package jitdump

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/addrspace"
)

// sample is a file with every record type: hot loaded at 0x1000 at
// time 100, cold at 0x2000 at 200, hot moved to 0x3000 at 300, and
// warm loaded at 0x1000 (hot's old place) at 400.
func sample() []byte {
	return newDump(42, 50).
		debug(99, 0x1000, DebugEntry{Addr: 0x1000, Line: 3, File: "a.js"}, DebugEntry{Addr: 0x1010, Line: 4, File: "\xff"}).
		load(100, 0x1000, 0x40, 1, "JS:*hot a.js:3").
		unwinding(150, []byte{1, 2, 3, 4, 5, 6, 7, 8}).
		load(200, 0x2000, 0x20, 2, "JS:~cold a.js:9").
		move(300, 0x1000, 0x3000, 0x40, 1).
		load(400, 0x1000, 0x30, 3, "JS:*warm a.js:20").
		close(500).
		bytes()
}

func TestReaderRecords(t *testing.T) {
	r, err := NewReader(bytes.NewReader(sample()))
	if err != nil {
		t.Fatal(err)
	}
	if h := r.Header(); h.PID != 42 || h.Timestamp != 50 || h.Version != 1 || h.ElfMach != 62 {
		t.Fatalf("header %+v", h)
	}
	var kinds []string
	for r.Next() {
		rec := r.Record()
		kinds = append(kinds, rec.Kind.String())
		switch rec.Kind {
		case KindCodeLoad:
			if rec.Load.Name == "" || rec.Load.CodeSize == 0 {
				t.Errorf("load %+v", rec.Load)
			}
		case KindDebugInfo:
			if e := rec.Debug.Entries; len(e) != 2 || e[1].File != "a.js" || e[1].Line != 4 {
				t.Errorf("debug entries %+v: the second names the first's file (\\xff)", e)
			}
		case KindUnwindingInfo:
			if rec.Unwind.UnwindingSize != 8 {
				t.Errorf("unwinding %+v", rec.Unwind)
			}
		case KindCodeMove:
			if rec.Move.NewCodeAddr != 0x3000 || rec.Move.CodeIndex != 1 {
				t.Errorf("move %+v", rec.Move)
			}
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	want := "JIT_CODE_DEBUG_INFO JIT_CODE_LOAD JIT_CODE_UNWINDING_INFO JIT_CODE_LOAD JIT_CODE_MOVE JIT_CODE_LOAD JIT_CODE_CLOSE"
	if got := strings.Join(kinds, " "); got != want {
		t.Fatalf("records\n got %s\nwant %s", got, want)
	}
}

// TestTimelineAddressReused: an address held by one function, then (the
// function moved away) by another, names each at its own time; the moved
// function is named at its new place after the move.
func TestTimelineAddressReused(t *testing.T) {
	r, err := NewReader(bytes.NewReader(sample()))
	if err != nil {
		t.Fatal(err)
	}
	tl, err := NewTimeline(r, 0)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		addr, time uint64
		want       string // "" when nothing held it
		line       int
	}{
		{"before any load", 0x1010, 50, "", 0},
		{"hot, just loaded", 0x1010, 100, "JS:*hot a.js:3", 4},
		{"hot's first line", 0x1000, 250, "JS:*hot a.js:3", 3},
		{"cold", 0x2004, 250, "JS:~cold a.js:9", 0},
		{"hot's old place after its move, before warm", 0x1010, 350, "", 0},
		{"hot at its new place", 0x3010, 350, "JS:*hot a.js:3", 4},
		{"hot's new place before the move", 0x3010, 250, "", 0},
		{"warm at hot's old place", 0x1010, 450, "JS:*warm a.js:20", 0},
		{"past warm's end, where hot was", 0x1038, 450, "", 0},
		{"past cold's end", 0x2020, 450, "", 0},
	}
	for _, tt := range tests {
		start, _, base, ok := tl.Find(tt.addr, tt.time)
		if !ok {
			if tt.want != "" {
				t.Errorf("%s: Find(%#x, %d): nothing, want %s", tt.name, tt.addr, tt.time, tt.want)
			}
			continue
		}
		if tt.want == "" {
			t.Errorf("%s: Find(%#x, %d) found code at %#x, want nothing", tt.name, tt.addr, tt.time, start)
			continue
		}
		loc := tl.Symbolize([]addrspace.ObjAddr{addrspace.ObjAddr(base + tt.addr - start)})[0]
		if loc.Symbol == nil || loc.Symbol.Name.Raw != tt.want || len(loc.Frames) != 1 || loc.Frames[0].Line != tt.line {
			t.Errorf("%s: %+v, want %s line %d", tt.name, loc, tt.want, tt.line)
		}
	}
	if tl.Loads != 3 || tl.Moves != 1 || tl.Functions() != 3 {
		t.Errorf("loads %d moves %d functions %d, want 3 1 3", tl.Loads, tl.Moves, tl.Functions())
	}
}

// TestDamaged: a file cut anywhere, or with a record's size made wrong,
// gives an error with an offset (or, cut at a record boundary, the
// records before), never a panic; the timeline keeps what came before.
func TestDamaged(t *testing.T) {
	data := sample()
	for n := range len(data) {
		r, err := NewReader(bytes.NewReader(data[:n]))
		if err != nil {
			if n >= headerSize {
				t.Fatalf("cut at %d: header refused: %v", n, err)
			}
			continue
		}
		tl, err := NewTimeline(r, 0)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("cut at %d: %v, want an unexpected EOF", n, err)
		}
		if err != nil && !strings.Contains(err.Error(), "offset ") {
			t.Fatalf("cut at %d: %v names no offset", n, err)
		}
		if tl.Loads > 3 {
			t.Fatalf("cut at %d: %d loads", n, tl.Loads)
		}
	}
	bad := bytes.Clone(data)
	bad[headerSize+4] = 3 // the first record's size: shorter than its prefix
	r, err := NewReader(bytes.NewReader(bad))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewTimeline(r, 0); err == nil || !strings.Contains(err.Error(), "offset 40") {
		t.Fatalf("size 3: %v, want an error at offset 40", err)
	}
	if _, err := NewReader(strings.NewReader("ELF\x7f and more bytes than a header has, forty of them")); !errors.Is(err, ErrNotJitdump) {
		t.Fatalf("not a jitdump: %v", err)
	}
}

func FuzzReader(f *testing.F) {
	f.Add(sample())
	f.Add(newDump(1, 0).load(1, 0x10, 0, 1, "").close(2).bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			return
		}
		tl, _ := NewTimeline(r, 0)
		for _, a := range []uint64{0, 0x1000, 0x1010, 0x3010, ^uint64(0)} {
			for _, at := range []uint64{0, 100, 350, ^uint64(0)} {
				start, end, base, ok := tl.Find(a, at)
				if !ok {
					continue
				}
				if a < start || a >= end {
					t.Fatalf("Find(%#x) gave [%#x, %#x)", a, start, end)
				}
				loc := tl.Symbolize([]addrspace.ObjAddr{addrspace.ObjAddr(base + a - start)})[0]
				if loc.Symbol == nil {
					t.Fatalf("Find(%#x, %d) gave base %#x, which names nothing", a, at, base)
				}
			}
		}
	})
}

func TestShift(t *testing.T) {
	tests := []struct {
		name        string
		made, first uint64
		want        int64
	}{
		{"time of the file unknown", 0, 5e9, 0},
		{"one clock: first record just after the file was made", 467_543_881_000, 467_555_697_721, 0},
		{"first record before the file was made: another clock", 10e9, 3e9, 7e9},
		{"first record hours later: another clock", 10e9, 10e9 + 3600e9, -3600e9},
	}
	for _, tt := range tests {
		if got := Shift(tt.made, tt.first); got != tt.want {
			t.Errorf("%s: Shift(%d, %d) = %d, want %d", tt.name, tt.made, tt.first, got, tt.want)
		}
	}
}
