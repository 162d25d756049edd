package buildid

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/hwprof/hwprof/internal/safefile"
)

// ErrNone is returned by Read for an ELF file without a GNU build-id
// note.
var ErrNone = errors.New("no GNU build-id note")

// ntGNUBuildID is NT_GNU_BUILD_ID in <elf.h>.
const ntGNUBuildID = 3

// Read returns the GNU build-id of the regular ELF file at path (a FIFO or
// a device is refused, not read): the descriptor
// of its NT_GNU_BUILD_ID note, looked for in SHT_NOTE sections
// (".note.gnu.build-id" first) and, for files without section headers, in
// PT_NOTE segments. It returns an error wrapping ErrNone when there is
// none, and an error for an id longer than MaxSize.
func Read(path string) (ID, error) {
	f, err := safefile.OpenELF(path)
	if err != nil {
		return ID{}, fmt.Errorf("read build-id: %w", err)
	}
	defer f.Close()
	b, err := fromELF(f.File)
	if err != nil {
		return ID{}, fmt.Errorf("read build-id: %s: %w", path, err)
	}
	id, err := New(b)
	if err != nil {
		return ID{}, fmt.Errorf("read build-id: %s: %w", path, err)
	}
	return id, nil
}

// KernelNotesPath is where the running kernel exposes its ELF notes.
const KernelNotesPath = "/sys/kernel/notes"

// Kernel returns the running kernel's build-id, read from the
// NT_GNU_BUILD_ID note of /sys/kernel/notes; the zero ID when it has none.
func Kernel() (ID, error) {
	data, err := os.ReadFile(KernelNotesPath)
	if err != nil {
		return ID{}, fmt.Errorf("kernel build-id: %w", err)
	}
	id, _ := FromNotes(data, binary.LittleEndian)
	return id, nil
}

// FromNotes returns the build-id of the first GNU NT_GNU_BUILD_ID note in
// a sequence of ELF notes (Elf64_Nhdr in <elf.h>: namesz, descsz, type,
// then name and descriptor each padded to 4 bytes) in byte order bo, and
// whether there is one (of at most MaxSize bytes).
func FromNotes(data []byte, bo binary.ByteOrder) (ID, bool) {
	b := findBuildIDNote(data, bo)
	if b == nil {
		return ID{}, false
	}
	id, err := New(b)
	return id, err == nil
}

// FromELF returns the GNU build-id of an open ELF file, as Read does for
// a path (the file may be in memory: elf.NewFile of a bytes.Reader).
func FromELF(f *elf.File) (ID, error) {
	b, err := fromELF(f)
	if err != nil {
		return ID{}, err
	}
	return New(b)
}

func fromELF(f *elf.File) ([]byte, error) {
	var notes []io.ReadSeeker
	if s := f.Section(".note.gnu.build-id"); s != nil && s.Type == elf.SHT_NOTE {
		notes = append(notes, s.Open())
	}
	for _, s := range f.Sections {
		if s.Type == elf.SHT_NOTE && s.Name != ".note.gnu.build-id" {
			notes = append(notes, s.Open())
		}
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_NOTE {
			notes = append(notes, p.Open())
		}
	}
	for _, r := range notes {
		data, err := io.ReadAll(io.LimitReader(r, 1<<20))
		if err != nil {
			continue // a note in a part of the file that is not there (debug files)
		}
		if id := findBuildIDNote(data, f.ByteOrder); id != nil {
			return id, nil
		}
	}
	return nil, ErrNone
}

// findBuildIDNote walks ELF notes (Elf_Nhdr: namesz, descsz, type, then the
// name and the descriptor, each padded to 4 bytes) and returns the
// descriptor of the first "GNU" NT_GNU_BUILD_ID note, or nil.
func findBuildIDNote(data []byte, bo binary.ByteOrder) []byte {
	return findNote(data, bo, "GNU", ntGNUBuildID)
}

// findNote returns a copy of the descriptor of the first note of name and
// type typ in a sequence of ELF notes in byte order bo; nil when there is
// none, or its descriptor is empty, or the notes are cut short.
func findNote(data []byte, bo binary.ByteOrder, name string, typ uint32) []byte {
	for len(data) >= 12 {
		namesz := uint64(bo.Uint32(data[0:]))
		descsz := uint64(bo.Uint32(data[4:]))
		t := bo.Uint32(data[8:])
		data = data[12:]
		nameEnd := (namesz + 3) &^ 3
		descEnd := nameEnd + (descsz+3)&^3
		if descEnd > uint64(len(data)) || nameEnd+descsz > uint64(len(data)) {
			return nil
		}
		n := bytes.TrimRight(data[:namesz], "\x00")
		if t == typ && string(n) == name && descsz > 0 {
			return bytes.Clone(data[nameEnd : nameEnd+descsz])
		}
		data = data[descEnd:]
	}
	return nil
}

// ntGoBuildID is the type of the Go toolchain's build-id note
// (cmd/internal/buildid), in section .note.go.buildid, of name "Go".
const ntGoBuildID = 4

// ReadGo returns the Go build-id of the ELF file at path, the text of its
// .note.go.buildid note as `go tool buildid` prints it; "" when it has
// none (a binary not built by the Go toolchain).
func ReadGo(path string) (string, error) {
	f, err := safefile.OpenELF(path)
	if err != nil {
		return "", fmt.Errorf("read Go build-id: %w", err)
	}
	defer f.Close()
	s := f.Section(".note.go.buildid")
	if s == nil {
		return "", nil
	}
	b, err := s.Data()
	if err != nil {
		return "", fmt.Errorf("read Go build-id: %s: %w", path, err)
	}
	return string(bytes.TrimRight(findNote(b, f.ByteOrder, "Go", ntGoBuildID), "\x00")), nil
}
