package synth

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// Mapping is one line of /proc/PID/maps, in the fields of a
// PERF_RECORD_MMAP2:
//
//	00400000-0040c000 r-xp 00001000 fd:01 41038    /usr/bin/cat
//	start    end      prot  pgoff   maj:min ino     path
type Mapping struct {
	Start, End    uint64 // [Start, End) in the process's address space
	Pgoff         uint64 // offset in the file of Start
	Maj, Min      uint32 // device of the file (0:0 for anonymous and pseudo mappings)
	Ino           uint64 // inode of the file (0 for anonymous and pseudo mappings)
	InoGeneration uint64 // always 0: maps does not show it, perf writes 0
	Prot          uint32 // PROT_READ|PROT_WRITE|PROT_EXEC from "rwx"
	Flags         uint32 // MAP_SHARED ('s') or MAP_PRIVATE ('p')
	// Path is the rest of the line as the kernel printed it: a file path
	// (with " (deleted)" appended if the file was removed, and spaces and
	// other characters as they are, a newline escaped as "\012"), a
	// pseudo-path such as "[vdso]", "[vsyscall]", "[heap]", "[stack]",
	// or "" for an anonymous mapping.
	Path string
}

// Exec reports whether the mapping is executable.
func (m Mapping) Exec() bool { return m.Prot&unix.PROT_EXEC != 0 }

// ErrMapsSyntax is wrapped by the errors of lines that are not maps lines.
var ErrMapsSyntax = errors.New("malformed maps line")

// parseMapsFields fills every field of m but Path and returns the path's
// bytes, a subslice of line.
func parseMapsFields(line []byte, m *Mapping) ([]byte, error) {
	p := mapsParser{s: line}
	m.Start = p.hex('-')
	m.End = p.hex(' ')
	m.Prot, m.Flags = p.perms()
	m.Pgoff = p.hex(' ')
	maj, min := p.hex(':'), p.hex(' ')
	m.Ino = p.dec()
	if p.err != "" {
		return nil, fmt.Errorf("%w: %s at column %d", ErrMapsSyntax, p.err, p.i+1)
	}
	if m.End < m.Start {
		return nil, fmt.Errorf("%w: end %#x before start %#x", ErrMapsSyntax, m.End, m.Start)
	}
	if maj > 0xffffffff || min > 0xffffffff {
		return nil, fmt.Errorf("%w: device %x:%x wider than 32 bits", ErrMapsSyntax, maj, min)
	}
	m.Maj, m.Min = uint32(maj), uint32(min)
	return bytes.TrimLeft(p.s[p.i:], " "), nil
}

// mapsParser walks a maps line; the first problem sticks in err.
type mapsParser struct {
	s   []byte
	i   int
	err string
}

// hex reads 1 to 16 hex digits followed by sep.
func (p *mapsParser) hex(sep byte) uint64 {
	if p.err != "" {
		return 0
	}
	var v uint64
	n := 0
	for ; p.i < len(p.s); p.i++ {
		c := p.s[p.i]
		var d byte
		switch {
		case '0' <= c && c <= '9':
			d = c - '0'
		case 'a' <= c && c <= 'f':
			d = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			d = c - 'A' + 10
		default:
			return p.sep(v, n, sep)
		}
		v = v<<4 | uint64(d)
		n++
	}
	return p.sep(v, n, sep)
}

// sep checks a number of n digits was read and consumes sep.
func (p *mapsParser) sep(v uint64, n int, sep byte) uint64 {
	switch {
	case n == 0:
		p.err = "want a hex number"
	case n > 16:
		p.err = "hex number longer than 64 bits"
	case p.i >= len(p.s) || p.s[p.i] != sep:
		p.err = "want " + strconv.QuoteRune(rune(sep))
	default:
		p.i++
	}
	return v
}

// perms reads "rwxp" and the space after it.
func (p *mapsParser) perms() (prot, flags uint32) {
	if p.err != "" {
		return 0, 0
	}
	if len(p.s)-p.i < 5 {
		p.err = "short permissions"
		return 0, 0
	}
	f := p.s[p.i : p.i+5]
	bits := [3]struct {
		c    byte
		prot uint32
	}{{'r', unix.PROT_READ}, {'w', unix.PROT_WRITE}, {'x', unix.PROT_EXEC}}
	for k, b := range bits {
		switch f[k] {
		case b.c:
			prot |= b.prot
		case '-':
		default:
			p.err = "bad permission " + strconv.QuoteRune(rune(f[k]))
			return 0, 0
		}
	}
	switch f[3] {
	case 's':
		flags = unix.MAP_SHARED
	case 'p':
		flags = unix.MAP_PRIVATE
	default:
		p.err = "bad sharing " + strconv.QuoteRune(rune(f[3]))
		return 0, 0
	}
	if f[4] != ' ' {
		p.err = "want ' ' after permissions"
		return 0, 0
	}
	p.i += 5
	return prot, flags
}

// dec reads the decimal inode, followed by a space or the end of line.
func (p *mapsParser) dec() uint64 {
	if p.err != "" {
		return 0
	}
	var v uint64
	n := 0
	for ; p.i < len(p.s) && '0' <= p.s[p.i] && p.s[p.i] <= '9'; p.i++ {
		d := uint64(p.s[p.i] - '0')
		if v > (^uint64(0)-d)/10 {
			p.err = "inode overflows 64 bits"
			return 0
		}
		v = v*10 + d
		n++
	}
	switch {
	case n == 0:
		p.err = "want a decimal inode"
	case p.i < len(p.s) && p.s[p.i] != ' ':
		p.err = "want ' ' after inode"
	}
	return v
}

// ParseMaps parses the whole text of a maps file. Consecutive lines of the
// same file share one Path string, so the only allocations are the slice
// and one string per distinct run of paths.
func ParseMaps(text []byte) ([]Mapping, error) {
	ms := make([]Mapping, 0, bytes.Count(text, []byte{'\n'})+1)
	prev := ""
	for n := 1; len(text) > 0; n++ {
		line := text
		if i := bytes.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = nil
		}
		if len(line) == 0 {
			continue
		}
		var m Mapping
		path, err := parseMapsFields(line, &m)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if string(path) != prev {
			prev = string(path)
		}
		m.Path = prev
		ms = append(ms, m)
	}
	return ms, nil
}

// Mappings reads and parses procRoot/PID/maps, every line of it (perf
// synthesizes only the executable ones, or the readable ones with data
// mappings on; see Options.Synthesize). If the process is gone the error
// wraps os.ErrNotExist. An exited but not yet reaped process has no
// mappings and no error.
func Mappings(procRoot string, pid int) ([]Mapping, error) {
	name := filepath.Join(procRoot, strconv.Itoa(pid), "maps")
	text, err := os.ReadFile(name)
	if err != nil {
		return nil, procErr("read maps", pid, err)
	}
	ms, err := ParseMaps(text)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", name, err)
	}
	return ms, nil
}

// procErr wraps an error reading /proc for pid; a process that is gone
// (ENOENT, or ESRCH from a task that exited while being read) wraps
// os.ErrNotExist.
func procErr(op string, pid int, err error) error {
	if errors.Is(err, unix.ESRCH) {
		return fmt.Errorf("%s of pid %d: %w: %w", op, pid, os.ErrNotExist, err)
	}
	return fmt.Errorf("%s of pid %d: %w", op, pid, err)
}

// gone reports whether err says a process or thread no longer exists.
func gone(err error) bool {
	return errors.Is(err, os.ErrNotExist) || errors.Is(err, unix.ESRCH)
}
