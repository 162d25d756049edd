package procmap

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// ProcMapsEntry is one line of /proc/PID/maps (proc(5)): a live mapping of
// a running process, as the kernel prints it now. Recordings use MMAP2
// records instead; this is for looking at a process before recording it.
type ProcMapsEntry struct {
	Start, End Addr
	Perms      string // "r-xp": read, write, exec, private (p) or shared (s)
	Offset     uint64 // file offset of Start
	Maj, Min   uint32 // device of the file
	Inode      uint64 // 0 for anonymous memory
	// Path is the file's absolute path, a pseudo-path ("[heap]",
	// "[stack]", "[vdso]", "[anon:NAME]") or "" for anonymous memory.
	// The kernel's " (deleted)" suffix is removed and Deleted set.
	Path    string
	Deleted bool
}

// IsFile reports whether the entry maps a file by its path.
func (e *ProcMapsEntry) IsFile() bool { return strings.HasPrefix(e.Path, "/") }

// Exec reports whether the mapping is executable.
func (e *ProcMapsEntry) Exec() bool { return len(e.Perms) > 2 && e.Perms[2] == 'x' }

// ReadProcMaps reads /proc/PID/maps of a running process.
func ReadProcMaps(pid int) ([]ProcMapsEntry, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/maps")
	if err != nil {
		return nil, fmt.Errorf("procmap: read maps of pid %d: %w", pid, err)
	}
	defer f.Close()
	return ParseProcMaps(f)
}

// ParseProcMaps parses the text of a /proc/PID/maps file. A path may hold
// spaces (everything after the inode and its padding is the path); a line
// that does not parse is an error naming its number.
func ParseProcMaps(r io.Reader) ([]ProcMapsEntry, error) {
	var out []ProcMapsEntry
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		e, err := parseProcMapsLine(line)
		if err != nil {
			return nil, fmt.Errorf("procmap: maps line %d: %w", n, err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("procmap: read maps: %w", err)
	}
	return out, nil
}

// parseProcMapsLine parses "start-end perms offset maj:min inode   path".
func parseProcMapsLine(line string) (ProcMapsEntry, error) {
	var e ProcMapsEntry
	rest := line
	next := func() string {
		rest = strings.TrimLeft(rest, " \t")
		i := strings.IndexAny(rest, " \t")
		if i < 0 {
			i = len(rest)
		}
		f := rest[:i]
		rest = rest[i:]
		return f
	}
	rng, perms, off, dev, ino := next(), next(), next(), next(), next()
	lo, hi, ok := strings.Cut(rng, "-")
	start, err1 := strconv.ParseUint(lo, 16, 64)
	end, err2 := strconv.ParseUint(hi, 16, 64)
	if !ok || err1 != nil || err2 != nil || end < start {
		return e, fmt.Errorf("bad address range %q", rng)
	}
	if len(perms) != 4 {
		return e, fmt.Errorf("bad permissions %q", perms)
	}
	offset, err := strconv.ParseUint(off, 16, 64)
	if err != nil {
		return e, fmt.Errorf("bad offset %q", off)
	}
	ma, mi, ok := strings.Cut(dev, ":")
	maj, err1 := strconv.ParseUint(ma, 16, 32)
	min, err2 := strconv.ParseUint(mi, 16, 32)
	if !ok || err1 != nil || err2 != nil {
		return e, fmt.Errorf("bad device %q", dev)
	}
	inode, err := strconv.ParseUint(ino, 10, 64)
	if err != nil {
		return e, fmt.Errorf("bad inode %q", ino)
	}
	e = ProcMapsEntry{Start: Addr(start), End: Addr(end), Perms: perms, Offset: offset,
		Maj: uint32(maj), Min: uint32(min), Inode: inode}
	e.Path = strings.TrimLeft(rest, " \t")
	if p, ok := strings.CutSuffix(e.Path, " (deleted)"); ok {
		e.Path, e.Deleted = p, true
	}
	return e, nil
}
