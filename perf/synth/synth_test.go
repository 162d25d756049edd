package synth

import (
	"bytes"
	"cmp"
	"debug/elf"
	"encoding/binary"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/perf"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestSynthesizeFixture synthesizes the fixture process 4242 (testdata/
// proc: four live threads, one gone, a hugetlbfs mount) and compares the
// decoded records with golden files named after the options.
func TestSynthesizeFixture(t *testing.T) {
	tests := []struct {
		name string
		opt  Options
		st   perf.SampleType
	}{
		{"default", Options{}, stPerfP},
		{"data", Options{Data: true}, stPerfP},
		{"fork", Options{Fork: true}, stPerfA},
		{"data_fork_no_sample_id_all", Options{Data: true, Fork: true}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prefix := []byte("keep")
			b, err := tt.opt.Synthesize(prefix, "testdata/proc", 4242, tt.st)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(b, prefix) {
				t.Fatal("Synthesize did not append to b")
			}
			recs := splitRecords(t, b[len(prefix):])
			// The fixture lists tasks in its file system's order; /proc
			// would list them leader first. Order them by tid, stably.
			slices.SortStableFunc(recs, func(x, y []byte) int { return cmp.Compare(recTID(x), recTID(y)) })
			var lines []string
			for _, r := range recs {
				s, err := describe(r, tt.st)
				if err != nil {
					t.Fatal(err)
				}
				lines = append(lines, s)
			}
			got := strings.Join(lines, "\n") + "\n"
			golden := filepath.Join("testdata", "synth_"+tt.name+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("records differ from %s:\n got:\n%s\nwant:\n%s", golden, got, want)
			}
		})
	}
}

// TestSynthesizeSelf synthesizes this test process and finds the MMAP2 of
// the test binary's text: it must hold this function's code, and its start
// and pgoff must be those of the binary's executable PT_LOAD segment.
func TestSynthesizeSelf(t *testing.T) {
	pid := os.Getpid()
	b, err := Options{}.Synthesize(nil, "/proc", pid, stPerfP)
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		t.Fatal(err)
	}
	pc := uint64(reflect.ValueOf(TestSynthesizeSelf).Pointer())
	le := binary.LittleEndian
	var found []byte
	comms := 0
	for _, r := range splitRecords(t, b) {
		if _, err := describe(r, stPerfP); err != nil {
			t.Fatal(err)
		}
		switch perf.RecordType(le.Uint32(r)) {
		case perf.RecordComm:
			comms++
		case perf.RecordMmap2:
			if int(recPID(r)) != pid || int(recTID(r)) != pid {
				t.Errorf("MMAP2 for %d/%d, want %d/%d", recPID(r), recTID(r), pid, pid)
			}
			start, length := le.Uint64(r[16:]), le.Uint64(r[24:])
			if start <= pc && pc < start+length {
				found = r
			}
		}
	}
	if comms == 0 {
		t.Error("no COMM record")
	}
	if found == nil {
		t.Fatalf("no MMAP2 holds pc %#x of this test", pc)
	}
	name, _ := cstr(found[:len(found)-SampleIDSize(stPerfP)], mmap2Fixed)
	if name != exe {
		t.Errorf("MMAP2 holding pc %#x names %q, want %q", pc, name, exe)
	}
	if misc := le.Uint16(found[4:]); misc != perf.MiscUser {
		t.Errorf("misc %#x, want PERF_RECORD_MISC_USER", misc)
	}
	start, pgoff := le.Uint64(found[16:]), le.Uint64(found[32:])

	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var seg *elf.Prog
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 {
			seg = p
		}
	}
	if seg == nil {
		t.Fatal("no executable PT_LOAD in the test binary")
	}
	const page = 4096
	if want := seg.Off &^ (page - 1); pgoff != want {
		t.Errorf("pgoff %#x, want %#x (segment offset %#x)", pgoff, want, seg.Off)
	}
	bias := uint64(0) // ET_EXEC loads at its link address
	if f.Type == elf.ET_DYN {
		bias = start - seg.Vaddr&^(page-1)
	}
	if want := seg.Vaddr&^(page-1) + bias; start != want || bias%page != 0 {
		t.Errorf("start %#x, want %#x (vaddr %#x, bias %#x)", start, want, seg.Vaddr, bias)
	}
}

func TestSynthesizeGone(t *testing.T) {
	pid := exitedPID(t)
	in := []byte("previous records")
	b, err := Options{}.Synthesize(in, "/proc", pid, stPerfP)
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), itoa(pid)) {
		t.Errorf("Synthesize of exited pid %d: %v, want os.ErrNotExist naming it", pid, err)
	}
	if string(b) != "previous records" {
		t.Errorf("b changed on error: %q", b)
	}
	// The threads are there but the maps went (the process exited between).
	dir := t.TempDir()
	task := filepath.Join(dir, "55", "task", "55")
	if err := os.MkdirAll(task, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(task, "status"), []byte("Name:\tx\nTgid:\t55\nPPid:\t1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err = Options{}.Synthesize(in, dir, 55, stPerfP)
	if !errors.Is(err, os.ErrNotExist) || string(b) != "previous records" {
		t.Errorf("maps gone: %q, %v; want b unchanged and os.ErrNotExist", b, err)
	}
}
