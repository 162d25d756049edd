package lbr

import (
	"debug/elf"
	"fmt"
	"io"
	"slices"

	"github.com/hwprof/hwprof/internal/safefile"
)

// Mapping is an executable mapping of a process, as an MMAP or MMAP2 record
// states it: runtime [Start, End) maps the object Path from file offset
// PgOff. Path is the local file to read (the caller resolves recorded
// names).
type Mapping struct {
	Start, End Addr
	PgOff      uint64
	Path       string
}

// FileCode is a CodeReader over ELF files: a runtime address maps to a file
// offset through its process's mapping (addr - Start + PgOff) and the bytes
// come from the executable PT_LOAD segment holding that offset. Each object
// is opened and its executable segments read once, whatever the number of
// processes mapping it. Not safe for concurrent use.
type FileCode struct {
	maps    map[uint32][]Mapping
	objects map[string]*codeObject
}

type codeSegment struct {
	off   uint64 // file offset
	vaddr uint64 // link-time address
	data  []byte
}

type codeObject struct {
	segs []codeSegment
	err  error
}

// NewFileCode returns a FileCode with no mappings.
func NewFileCode() *FileCode {
	return &FileCode{maps: make(map[uint32][]Mapping), objects: make(map[string]*codeObject)}
}

// Map adds an executable mapping of process pid; mappings it overlaps are
// removed, as mmap replaces them.
func (f *FileCode) Map(pid uint32, m Mapping) {
	ms := slices.DeleteFunc(f.maps[pid], func(o Mapping) bool {
		return o.Start < m.End && m.Start < o.End
	})
	i, _ := slices.BinarySearchFunc(ms, m.Start, func(o Mapping, a Addr) int {
		switch {
		case o.Start < a:
			return -1
		case o.Start > a:
			return 1
		}
		return 0
	})
	f.maps[pid] = slices.Insert(ms, i, m)
}

// MapLoaded maps every executable PT_LOAD segment of the ELF file path
// into process pid at its link-time address plus bias (the load bias: 0
// for a non-PIE executable, the base address for a PIE or shared library).
func (f *FileCode) MapLoaded(pid uint32, path string, bias Addr) error {
	obj := f.object(path)
	if obj.err != nil {
		return obj.err
	}
	for _, s := range obj.segs {
		start := Addr(s.vaddr) + bias
		f.Map(pid, Mapping{Start: start, End: start + Addr(len(s.data)), PgOff: s.off, Path: path})
	}
	return nil
}

// Forget drops the mappings of process pid (at exec or exit).
func (f *FileCode) Forget(pid uint32) { delete(f.maps, pid) }

// Code implements CodeReader.
func (f *FileCode) Code(pid uint32, addr Addr) ([]byte, bool) {
	ms := f.maps[pid]
	i, found := slices.BinarySearchFunc(ms, addr, func(o Mapping, a Addr) int {
		switch {
		case o.End <= a:
			return -1
		case o.Start > a:
			return 1
		}
		return 0
	})
	if !found {
		return nil, false
	}
	m := ms[i]
	obj := f.object(m.Path)
	if obj.err != nil {
		return nil, false
	}
	return obj.code(uint64(addr-m.Start) + m.PgOff)
}

// Err returns the error opening path, if it was opened and failed.
func (f *FileCode) Err(path string) error {
	if o, ok := f.objects[path]; ok {
		return o.err
	}
	return nil
}

func (f *FileCode) object(path string) *codeObject {
	if o, ok := f.objects[path]; ok {
		return o
	}
	o := &codeObject{}
	o.segs, o.err = readCodeSegments(path)
	f.objects[path] = o
	return o
}

func (o *codeObject) code(off uint64) ([]byte, bool) {
	for _, s := range o.segs {
		if off >= s.off && off-s.off < uint64(len(s.data)) {
			b := s.data[off-s.off:]
			return b[:min(len(b), MaxInstLen)], true
		}
	}
	return nil, false
}

// readCodeSegments reads the file bytes of the executable PT_LOAD segments
// of a regular ELF file (a segment must be within the file: its size is
// not taken on trust).
func readCodeSegments(path string) ([]codeSegment, error) {
	file, err := safefile.OpenLocal(path)
	if err != nil {
		return nil, fmt.Errorf("lbr: read code: %w", err)
	}
	fi, err := file.Stat()
	if err != nil {
		file.Close()
		return nil, fmt.Errorf("lbr: read code: %w", err)
	}
	ef, err := safefile.NewELF(file)
	if err != nil {
		return nil, fmt.Errorf("lbr: read code: %w", err)
	}
	defer ef.Close()
	size := uint64(fi.Size())
	var segs []codeSegment
	for _, p := range ef.Progs {
		if p.Type != elf.PT_LOAD || p.Flags&elf.PF_X == 0 || p.Filesz == 0 {
			continue
		}
		if p.Off > size || p.Filesz > size-p.Off {
			return nil, fmt.Errorf("lbr: read code: %s: segment at offset %#x, %d bytes, is past the end of the file (%d bytes)", path, p.Off, p.Filesz, size)
		}
		data := make([]byte, p.Filesz)
		if _, err := io.ReadFull(p.Open(), data); err != nil {
			return nil, fmt.Errorf("lbr: read code: %s segment at offset %#x: %w", path, p.Off, err)
		}
		segs = append(segs, codeSegment{off: p.Off, vaddr: p.Vaddr, data: data})
	}
	if len(segs) == 0 {
		return nil, fmt.Errorf("lbr: read code: %s: no executable PT_LOAD segment", path)
	}
	return segs, nil
}
