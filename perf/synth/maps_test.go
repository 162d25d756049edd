package synth

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

const (
	protRX = unix.PROT_READ | unix.PROT_EXEC
	protR  = unix.PROT_READ
	protRW = unix.PROT_READ | unix.PROT_WRITE
)

// TestMappingsFixture parses testdata/proc/4242/maps, lines written the way
// Linux 6.x prints them (a bash, its libc, a deleted plugin, ...).
func TestMappingsFixture(t *testing.T) {
	ms, err := Mappings("testdata/proc", 4242)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 19 {
		t.Fatalf("got %d mappings, want 19", len(ms))
	}
	tests := []struct {
		name string
		line int // 1-based line of the fixture
		want Mapping
	}{
		{"PIE executable, first page", 1, Mapping{Start: 0x55d4c3a00000, End: 0x55d4c3a2f000, Maj: 0xfe, Ino: 246999,
			Prot: protR, Flags: unix.MAP_PRIVATE, Path: "/usr/bin/bash"}},
		{"PIE executable text", 2, Mapping{Start: 0x55d4c3a2f000, End: 0x55d4c3af0000, Pgoff: 0x2f000, Maj: 0xfe, Ino: 246999,
			Prot: protRX, Flags: unix.MAP_PRIVATE, Path: "/usr/bin/bash"}},
		{"anonymous bss, trailing space", 5, Mapping{Start: 0x55d4c3b35000, End: 0x55d4c3b40000,
			Prot: protRW, Flags: unix.MAP_PRIVATE}},
		{"[heap]", 6, Mapping{Start: 0x55d4c4c10000, End: 0x55d4c4c51000, Prot: protRW, Flags: unix.MAP_PRIVATE, Path: "[heap]"}},
		{"shared library text, non-zero pgoff", 8, Mapping{Start: 0x7f11b31cb000, End: 0x7f11b3321000, Pgoff: 0x26000,
			Maj: 0xfe, Ino: 326269, Prot: protRX, Flags: unix.MAP_PRIVATE, Path: "/usr/lib/x86_64-linux-gnu/libc.so.6"}},
		{"deleted file keeps (deleted)", 10, Mapping{Start: 0x7f11b3390000, End: 0x7f11b3391000, Pgoff: 0x1000,
			Maj: 0xfe, Ino: 9978793, Prot: protRX, Flags: unix.MAP_PRIVATE, Path: "/tmp/plugin.so (deleted)"}},
		{"path with a space, shared", 11, Mapping{Start: 0x7f11b3392000, End: 0x7f11b3393000,
			Maj: 0xfe, Ino: 9978799, Prot: protRX, Flags: unix.MAP_SHARED, Path: "/tmp/my lib.so"}},
		{"anonymous rwx (JIT)", 12, Mapping{Start: 0x7f11b3394000, End: 0x7f11b3396000,
			Prot: protRW | unix.PROT_EXEC, Flags: unix.MAP_PRIVATE}},
		{"guard page ---p", 13, Mapping{Start: 0x7f11b3397000, End: 0x7f11b3398000, Flags: unix.MAP_PRIVATE}},
		{"hugetlbfs file", 14, Mapping{Start: 0x7f11b3399000, End: 0x7f11b339b000, Maj: 0, Min: 0x10, Ino: 1234,
			Prot: protRX, Flags: unix.MAP_SHARED, Path: "/dev/hugepages/jit-1"}},
		{"[vdso]", 16, Mapping{Start: 0x7f11b33cb000, End: 0x7f11b33cd000, Prot: protRX, Flags: unix.MAP_PRIVATE, Path: "[vdso]"}},
		{"[stack]", 18, Mapping{Start: 0x7ffc0511e000, End: 0x7ffc0513f000, Prot: protRW, Flags: unix.MAP_PRIVATE, Path: "[stack]"}},
		{"[vsyscall] execute-only", 19, Mapping{Start: 0xffffffffff600000, End: 0xffffffffff601000,
			Prot: unix.PROT_EXEC, Flags: unix.MAP_PRIVATE, Path: "[vsyscall]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ms[tt.line-1]; got != tt.want {
				t.Errorf("line %d:\n got %+v\nwant %+v", tt.line, got, tt.want)
			}
		})
	}
}

func TestParseMapsLineErrors(t *testing.T) {
	tests := []struct {
		name string
		line string
	}{
		{"empty", ""},
		{"no dash", "00400000 0040c000 r-xp 00000000 fd:01 41038 /bin/cat"},
		{"no end", "00400000-"},
		{"bad hex", "0040000g-0040c000 r-xp 00000000 fd:01 41038 /bin/cat"},
		{"hex wider than 64 bits", "100000000000000000-0040c000 r-xp 00000000 fd:01 41038 /bin/cat"},
		{"end before start", "0040c000-00400000 r-xp 00000000 fd:01 41038 /bin/cat"},
		{"short perms", "00400000-0040c000 r-x"},
		{"bad perm", "00400000-0040c000 rzxp 00000000 fd:01 41038 /bin/cat"},
		{"bad sharing", "00400000-0040c000 r-xq 00000000 fd:01 41038 /bin/cat"},
		{"no space after perms", "00400000-0040c000 r-xp00000000 fd:01 41038 /bin/cat"},
		{"no device colon", "00400000-0040c000 r-xp 00000000 fd01 41038 /bin/cat"},
		{"device wider than 32 bits", "00400000-0040c000 r-xp 00000000 100000000:01 41038 /bin/cat"},
		{"no inode", "00400000-0040c000 r-xp 00000000 fd:01  /bin/cat"},
		{"inode not decimal", "00400000-0040c000 r-xp 00000000 fd:01 4a038 /bin/cat"},
		{"inode overflows", "00400000-0040c000 r-xp 00000000 fd:01 99999999999999999999 /bin/cat"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := parseMapsLine([]byte(tt.line))
			if !errors.Is(err, ErrMapsSyntax) {
				t.Errorf("parseMapsLine(%q) = %+v, %v; want an ErrMapsSyntax", tt.line, m, err)
			}
		})
	}
	if _, err := ParseMaps([]byte("00400000-0040c000 r-xp 00000000 fd:01 41038 /bin/cat\nbad\n")); err == nil ||
		!strings.Contains(err.Error(), "line 2") {
		t.Errorf("ParseMaps with a bad second line: %v, want an error naming line 2", err)
	}
}

// formatMapsLine prints m the way the kernel's show_map_vma does.
func formatMapsLine(m Mapping) string {
	s := fmt.Sprintf("%08x-%08x %s %08x %02x:%02x %d ", m.Start, m.End, perms(m), m.Pgoff, m.Maj, m.Min, m.Ino)
	if m.Path != "" {
		s += strings.Repeat(" ", max(0, 73-len(s))) + m.Path
	}
	return s
}

// TestMappingsSelf reads this process's own maps and prints each line back
// the way the kernel did.
func TestMappingsSelf(t *testing.T) {
	text, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Skipf("no /proc/self/maps: %v", err)
	}
	ms, err := ParseMaps(text)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(text), "\n"), "\n")
	if len(ms) != len(lines) {
		t.Fatalf("%d mappings for %d lines", len(ms), len(lines))
	}
	for i, m := range ms {
		if got := formatMapsLine(m); strings.TrimRight(got, " ") != strings.TrimRight(lines[i], " ") {
			t.Errorf("line %d:\n got %q\nwant %q", i+1, got, lines[i])
		}
	}
}

func TestMappingsGone(t *testing.T) {
	_, err := Mappings("testdata/proc", 999999)
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "999999") {
		t.Errorf("Mappings of a missing pid: %v, want os.ErrNotExist naming the pid", err)
	}
}

// TestParseMapsAllocs: one slice, and one string per run of lines of the
// same file.
func TestParseMapsAllocs(t *testing.T) {
	text, err := os.ReadFile("testdata/proc/4242/maps")
	if err != nil {
		t.Fatal(err)
	}
	// Runs of equal paths in the fixture: bash, "", [heap], libc, plugin,
	// my lib, "" (x2), hugepages, [vvar], [vdso], ld.so, [stack], [vsyscall].
	const runs = 13
	allocs := testing.AllocsPerRun(20, func() {
		if _, err := ParseMaps(text); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 1+runs {
		t.Errorf("ParseMaps: %v allocations, want at most %d", allocs, 1+runs)
	}
}

func FuzzParseMapsLine(f *testing.F) {
	text, err := os.ReadFile("testdata/proc/4242/maps")
	if err != nil {
		f.Fatal(err)
	}
	for _, l := range strings.Split(string(text), "\n") {
		f.Add(l)
	}
	f.Add("0-0 ---s 0 0:0 0")
	f.Add("ffffffffffffffff-ffffffffffffffff rwxs ffffffffffffffff ffffffff:ffffffff 18446744073709551615 x")
	f.Fuzz(func(t *testing.T, line string) {
		m, err := parseMapsLine([]byte(line))
		if err != nil {
			return
		}
		if m.End < m.Start {
			t.Fatalf("%q: end before start: %+v", line, m)
		}
		b := AppendMmap2(nil, 1, 1, m, stPerfA, SampleID{})
		if size := int(binary.LittleEndian.Uint16(b[6:])); len(b) != size || size%8 != 0 {
			t.Fatalf("%q: wrote %d bytes, header size %d", line, len(b), size)
		}
		if strings.ContainsAny(m.Path, "\n\x00") {
			return // a maps file never has these; the round trip cannot hold
		}
		again, err := parseMapsLine([]byte(formatMapsLine(m)))
		if err != nil || again != m {
			t.Fatalf("%q: round trip gave %+v, %v; want %+v", line, again, err, m)
		}
	})
}

func BenchmarkParseMaps(b *testing.B) {
	text, err := os.ReadFile("testdata/proc/4242/maps")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := ParseMaps(text); err != nil {
			b.Fatal(err)
		}
	}
}
