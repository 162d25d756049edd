package symbolize

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/hwprof/hwprof/addrspace"
)

// PerfMapPath returns the perf map file a JIT writes for process pid:
// /tmp/perf-PID.map.
func PerfMapPath(pid int) string { return fmt.Sprintf("/tmp/perf-%d.map", pid) }

// KeptJITDumpPath returns where record keeps the jitdump file of process
// pid (the recording's pid) when the process's root is not the host's (a
// container): /tmp/jit-PID.dump, read when the recorded path is not
// there, as a perf map is, once the process and its files are gone.
func KeptJITDumpPath(pid int) string { return fmt.Sprintf("/tmp/jit-%d.dump", pid) }

// PerfMap resolves JIT runtime addresses with a perf map file (written by
// node --perf-basic-prof, python -X perf, Java perf map agents). For
// entries at one start the last line wins. It is safe for concurrent use.
type PerfMap struct {
	table textTable
}

// PerfMap reads the perf map a recording names (PerfMapPath of a process),
// in SymFS: anyone may write in /tmp, so it is read only when it is a
// regular file of its own, not a symbolic link, that belongs to root or to
// the effective user, as perf requires (safefile.Root.OpenOwned). A map
// refused is told to o.Refused too.
func (o Options) PerfMap(path string) (*PerfMap, error) {
	f, err := o.root().OpenOwned(path)
	if err != nil {
		if o.Refused != nil && errors.Is(err, ErrRefused) {
			o.Refused(err)
		}
		return nil, fmt.Errorf("read perf map: %w", err)
	}
	defer f.Close()
	return ParsePerfMap(f)
}

// ParsePerfMap parses "START SIZE NAME" lines, START and SIZE in hex
// (with or without 0x), NAME the rest of the line.
func ParsePerfMap(r io.Reader) (*PerfMap, error) {
	m := &PerfMap{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for lineNo := 1; sc.Scan(); lineNo++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		start, rest, ok1 := strings.Cut(line, " ")
		size, name, ok2 := strings.Cut(strings.TrimLeft(rest, " "), " ")
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("read perf map: line %d: want START SIZE NAME, have %q", lineNo, line)
		}
		s, err1 := parseHex(start)
		n, err2 := parseHex(size)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("read perf map: line %d: bad hex number in %q", lineNo, line)
		}
		m.table.syms = append(m.table.syms, textSym{start: s, size: n, name: strings.TrimSpace(name)})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read perf map: %w", err)
	}
	m.table.sort()
	return m, nil
}

func parseHex(s string) (uint64, error) {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	return strconv.ParseUint(s, 16, 64)
}

// Len returns the number of entries.
func (m *PerfMap) Len() int { return len(m.table.syms) }

// Symbolize resolves JIT runtime addresses.
func (m *PerfMap) Symbolize(addrs []addrspace.ObjAddr) []Location { return m.table.symbolize(addrs) }
