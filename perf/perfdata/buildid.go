package perfdata

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// ErrNoBuildID is returned by ReadBuildID for an ELF file without a GNU
// build-id note.
var ErrNoBuildID = errors.New("no GNU build-id note")

// ntGNUBuildID is NT_GNU_BUILD_ID in <elf.h>.
const ntGNUBuildID = 3

// ReadBuildID returns the GNU build-id of the ELF file at path: the
// descriptor of its NT_GNU_BUILD_ID note, looked for in SHT_NOTE sections
// (".note.gnu.build-id" first) and, for files without section headers, in
// PT_NOTE segments. It returns an error wrapping ErrNoBuildID when there
// is none.
func ReadBuildID(path string) ([]byte, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read build-id: %w", err)
	}
	defer f.Close()
	id, err := ELFBuildID(f)
	if err != nil {
		return nil, fmt.Errorf("read build-id: %s: %w", path, err)
	}
	return id, nil
}

// ELFBuildID returns the GNU build-id of an open ELF file, as ReadBuildID
// does for a path (the file may be in memory: elf.NewFile of a
// bytes.Reader). It returns ErrNoBuildID when there is none.
func ELFBuildID(f *elf.File) ([]byte, error) {
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
	return nil, ErrNoBuildID
}

// findBuildIDNote walks ELF notes (Elf_Nhdr: namesz, descsz, type, then the
// name and the descriptor, each padded to 4 bytes) and returns the
// descriptor of the first "GNU" NT_GNU_BUILD_ID note, or nil.
func findBuildIDNote(data []byte, bo binary.ByteOrder) []byte {
	for len(data) >= 12 {
		namesz := uint64(bo.Uint32(data[0:]))
		descsz := uint64(bo.Uint32(data[4:]))
		typ := bo.Uint32(data[8:])
		data = data[12:]
		nameEnd := (namesz + 3) &^ 3
		descEnd := nameEnd + (descsz+3)&^3
		if descEnd > uint64(len(data)) || nameEnd+descsz > uint64(len(data)) {
			return nil
		}
		name := bytes.TrimRight(data[:namesz], "\x00")
		if typ == ntGNUBuildID && string(name) == "GNU" && descsz > 0 {
			return bytes.Clone(data[nameEnd : nameEnd+descsz])
		}
		data = data[descEnd:]
	}
	return nil
}
