package buildid

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/internal/testprog"
)

// note encodes one ELF note (Elf_Nhdr, name, descriptor, 4-byte padding).
func note(name string, typ uint32, desc []byte) []byte {
	var b []byte
	nl := len(name)
	if name != "" {
		nl++
	}
	b = le.AppendUint32(b, uint32(nl))
	b = le.AppendUint32(b, uint32(len(desc)))
	b = le.AppendUint32(b, typ)
	if name != "" {
		b = append(b, name...)
		b = append(b, 0)
	}
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	b = append(b, desc...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

func TestFindBuildIDNote(t *testing.T) {
	sha1 := bytes.Repeat([]byte{0xc8}, 20)
	tests := []struct {
		name string
		in   []byte
		want []byte
	}{
		{"gnu build-id", note("GNU", ntGNUBuildID, sha1), sha1},
		{"after an ABI tag", append(note("GNU", 1, []byte{0, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0}), note("GNU", ntGNUBuildID, sha1)...), sha1},
		{"odd-sized id", note("GNU", ntGNUBuildID, []byte{1, 2, 3, 4, 5}), []byte{1, 2, 3, 4, 5}},
		{"other owner", note("Go", ntGNUBuildID, sha1), nil},
		{"other type", note("GNU", 4, sha1), nil},
		{"truncated descriptor", note("GNU", ntGNUBuildID, sha1)[:20], nil},
		{"huge sizes", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 3, 0, 0, 0}, nil},
		{"empty", nil, nil},
	}
	for _, tt := range tests {
		if got := findBuildIDNote(tt.in, binary.LittleEndian); !bytes.Equal(got, tt.want) {
			t.Errorf("%s: %x, want %x", tt.name, got, tt.want)
		}
	}
}

func FuzzFindBuildIDNote(f *testing.F) {
	f.Add(note("GNU", ntGNUBuildID, []byte{1, 2, 3, 4}))
	f.Add([]byte{4, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		if id := findBuildIDNote(b, binary.LittleEndian); id != nil && len(id) > len(b) {
			t.Errorf("id longer than the input")
		}
	})
}

func TestReadErrors(t *testing.T) {
	dir := t.TempDir()
	notELF := filepath.Join(dir, "not-elf")
	mustWrite(t, os.WriteFile(notELF, []byte("#!/bin/sh\n"), 0o644))
	if _, err := Read(notELF); err == nil {
		t.Error("Read accepted a shell script")
	}
	if _, err := Read(filepath.Join(dir, "missing")); err == nil {
		t.Error("Read accepted a missing file")
	}
	// An ELF object linked without a build-id.
	obj := testprog.BuildText(t, "x.c", "int main(void){return 0;}\n", "-Wl,--build-id=none")
	if _, err := Read(obj); !errors.Is(err, ErrNone) {
		t.Errorf("Read of an object without build-id: %v, want ErrNone", err)
	}
}

var le = binary.LittleEndian

func mustWrite(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// ReadGo reads a Go binary's build-id as `go tool buildid` prints it: the
// test binary is one.
func TestReadGo(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	id, err := ReadGo(exe)
	if err != nil || id == "" {
		t.Fatalf("ReadGo(%s) = %q, %v; want the test binary's Go build-id", exe, id, err)
	}
	if goCmd, err := exec.LookPath("go"); err == nil {
		out, err := exec.Command(goCmd, "tool", "buildid", exe).Output()
		if err != nil {
			t.Fatalf("go tool buildid: %v", err)
		}
		if want := strings.TrimSpace(string(out)); id != want {
			t.Errorf("ReadGo = %q, go tool buildid = %q", id, want)
		}
	} else {
		t.Logf("no go command: the id is not compared with go tool buildid")
	}
	if id, err := ReadGo("/proc/self/status"); err == nil || id != "" {
		t.Errorf("a file that is not ELF: %q, %v; want an error", id, err)
	}
}
