package symbolize

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// KernelPath is the object path perf gives kernel samples.
const KernelPath = "[kernel.kallsyms]"

// ErrKallsymsHidden is returned when every kallsyms address is zero
// (kernel.kptr_restrict, or a reader without CAP_SYSLOG).
var ErrKallsymsHidden = errors.New("kallsyms addresses are hidden (kernel.kptr_restrict)")

// Kallsyms resolves kernel runtime addresses with the text symbols (types
// t, T, w, W) of /proc/kallsyms. A symbol extends to the next one. It is
// safe for concurrent use.
type Kallsyms struct {
	table textTable
}

// LoadKallsyms reads a kallsyms file, usually /proc/kallsyms.
func LoadKallsyms(path string) (*Kallsyms, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read kallsyms: %w", err)
	}
	defer f.Close()
	return ParseKallsyms(f)
}

// ParseKallsyms parses kallsyms text: "ADDR TYPE NAME [MODULE]" lines.
func ParseKallsyms(r io.Reader) (*Kallsyms, error) {
	k := &Kallsyms{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	lineNo, nonzero, any := 0, false, false
	for sc.Scan() {
		lineNo++
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if len(fields) < 3 {
			return nil, fmt.Errorf("read kallsyms: line %d: want ADDR TYPE NAME, have %q", lineNo, sc.Text())
		}
		addr, err := strconv.ParseUint(fields[0], 16, 64)
		if err != nil {
			return nil, fmt.Errorf("read kallsyms: line %d: %w", lineNo, err)
		}
		any = true
		if addr != 0 {
			nonzero = true
		}
		switch fields[1] {
		case "t", "T", "w", "W":
		default:
			continue
		}
		s := textSym{start: addr, name: fields[2]}
		if len(fields) > 3 {
			s.module = strings.Trim(fields[3], "[]")
		}
		k.table.syms = append(k.table.syms, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read kallsyms: %w", err)
	}
	if any && !nonzero {
		return nil, ErrKallsymsHidden
	}
	k.table.sort()
	return k, nil
}

// Len returns the number of text symbols.
func (k *Kallsyms) Len() int { return len(k.table.syms) }

// Module returns the module of the symbol containing a ("" for the kernel
// image or when no symbol contains a).
func (k *Kallsyms) Module(a Addr) string {
	if i := k.table.lookup(uint64(a)); i >= 0 {
		return k.table.syms[i].module
	}
	return ""
}

// Symbolize resolves kernel runtime addresses.
func (k *Kallsyms) Symbolize(addrs []Addr) []Location { return k.table.symbolize(addrs) }
