package procmap

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/internal/safefile"
)

// Segments caches the PT_LOAD segments of objects by path: each file is
// opened once, whatever the number of mappings and lookups. Set injects the
// segments of an object that is not on this machine (or of a test). It is
// safe for concurrent use.
type Segments struct {
	root safefile.Root
	mu   sync.Mutex
	m    map[string]segEntry
	// gen counts the Set calls: an Object's copy of its segments
	// (Map.objSegments) is good while it has not changed
	gen atomic.Uint64
}

type segEntry struct {
	segs []addrspace.Segment
	err  error
}

// NewSegments returns an empty cache. The paths are looked up in root
// (safefile.Root: like perf's --symfs, "" for /, which neither .. nor a
// symbolic link leaves), and only regular files are read.
func NewSegments(root string) *Segments {
	return &Segments{root: safefile.NewRoot(root), m: make(map[string]segEntry)}
}

// Set records the segments of path, replacing what was read or set before.
func (s *Segments) Set(path string, segs []addrspace.Segment) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[path] = segEntry{segs: segs}
	s.gen.Add(1)
}

// Get returns the segments of path, reading them the first time. An error is
// remembered too: a missing file is not opened again.
func (s *Segments) Get(path string) ([]addrspace.Segment, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.m[path]; ok {
		return e.segs, e.err
	}
	if strings.HasPrefix(path, "[") {
		err := fmt.Errorf("procmap: read segments: %s is not a file", path)
		s.m[path] = segEntry{err: err}
		return nil, err
	}
	var segs []addrspace.Segment
	f, err := s.root.Open(path)
	if err == nil {
		segs, err = readSegments(f)
	} else {
		err = fmt.Errorf("procmap: read segments: %w", err)
	}
	s.m[path] = segEntry{segs: segs, err: err}
	return segs, err
}

// ReadSegments reads the PT_LOAD program headers of the regular ELF file
// at path (a file on this machine: safefile.OpenLocal).
func ReadSegments(path string) ([]addrspace.Segment, error) {
	f, err := safefile.OpenLocal(path)
	if err != nil {
		return nil, fmt.Errorf("procmap: read segments: %w", err)
	}
	return readSegments(f)
}

// readSegments reads the PT_LOAD program headers of the ELF file f and
// closes it.
func readSegments(file *os.File) ([]addrspace.Segment, error) {
	path := file.Name()
	f, err := safefile.NewELF(file)
	if err != nil {
		return nil, fmt.Errorf("procmap: read segments: %w", err)
	}
	defer f.Close()
	segs := addrspace.Segments(f.Progs)
	if len(segs) == 0 {
		return nil, fmt.Errorf("procmap: read segments: %s: no PT_LOAD segment", path)
	}
	return segs, nil
}
