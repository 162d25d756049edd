package symbolize

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"unsafe"
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
// It reads all of it first (a few MB): the names are then substrings of
// that one text, not an allocation each.
func ParseKallsyms(r io.Reader) (*Kallsyms, error) {
	text, err := readKallsyms(r)
	if err != nil {
		return nil, err
	}
	k := &Kallsyms{table: textTable{syms: make([]textSym, 0, bytes.Count(text, []byte{'\n'})+1)}}
	err = scanKallsyms(text, func(s textSym) { k.table.syms = append(k.table.syms, s) })
	if err != nil {
		return nil, err
	}
	k.table.sort()
	return k, nil
}

// ReadKallsyms reads a kallsyms file's text, for KallsymsFor.
func ReadKallsyms(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read kallsyms: %w", err)
	}
	defer f.Close()
	return readKallsyms(f)
}

func readKallsyms(r io.Reader) ([]byte, error) {
	var buf bytes.Buffer
	if st, ok := r.(interface{ Stat() (os.FileInfo, error) }); ok {
		if fi, err := st.Stat(); err == nil && fi.Size() > 0 {
			buf.Grow(int(fi.Size()) + 1) // a file (a saved kallsyms): one read
		}
	}
	if buf.Cap() == 0 {
		buf.Grow(8 << 20) // /proc/kallsyms says size 0 and is 3-10 MB: few, large reads
	}
	if _, err := buf.ReadFrom(r); err != nil {
		return nil, fmt.Errorf("read kallsyms: %w", err)
	}
	return buf.Bytes(), nil
}

// KallsymsFor resolves the kernel addresses addrs with kallsyms text (as
// ReadKallsyms reads it), keeping only the symbols that contain them: the
// same symbols as ParseKallsyms gives for those addresses, for a fraction
// of the time and memory, as a report needs a few hundred of a kernel's
// hundred thousand. text must not be written again: the names are
// substrings of it.
//
// The symbol of address a is the text symbol with the greatest start at
// or below a (it extends to the next start). In one pass over the lines,
// in any order, a start s can only be that of the first needed address at
// or above it (of the others at or above it, that address's symbol starts
// after s or at it), so each needed address keeps the greatest start that
// falls on it; an address that keeps none is in the symbol of the address
// before it. Kept alone, each symbol still extends past its addresses:
// no other kept start lies between.
func KallsymsFor(text []byte, addrs []Addr) (*Kallsyms, error) {
	need := make([]uint64, len(addrs))
	for i, a := range addrs {
		need[i] = uint64(a)
	}
	slices.Sort(need)
	need = slices.Compact(need)
	best := make([]textSym, len(need))
	found := make([]bool, len(need))
	j := 0 // the last line's: lines mostly come in address order
	err := scanKallsyms(text, func(s textSym) {
		// j becomes the first needed address at or above s
		if j+1 < len(need) && need[j] < s.start && need[j+1] >= s.start {
			j++ // the usual step when lines come in address order
		} else if j > 0 && need[j-1] >= s.start || j < len(need) && need[j] < s.start {
			j, _ = slices.BinarySearch(need, s.start)
		}
		if j < len(need) && (!found[j] || s.start >= best[j].start) {
			best[j], found[j] = s, true // at one start the line read last wins, as in ParseKallsyms
		}
	})
	if err != nil {
		return nil, err
	}
	k := &Kallsyms{}
	for i := range need {
		if found[i] {
			k.table.syms = append(k.table.syms, best[i])
		}
	}
	return k, nil
}

// scanKallsyms calls add for every text symbol (types t, T, w, W) of
// kallsyms text, in the order of the lines; the names are substrings of
// text.
func scanKallsyms(b []byte, add func(textSym)) error {
	if len(b) == 0 {
		return nil
	}
	// The text is not written again: the names can be substrings of it.
	text := unsafe.String(&b[0], len(b))
	modules := map[string]string{} // module names, interned
	lineNo, nonzero, any := 0, false, false
	var fields [4]string
	for len(text) > 0 {
		line := text
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = ""
		}
		lineNo++
		var nf int
		// The kernel's layout, "%px %c %s\t[%s]": fields at fixed
		// columns; anything else is split at blanks.
		if len(line) > 19 && line[16] == ' ' && line[18] == ' ' && line[19] != ' ' && line[19] != '\t' {
			fields[0], fields[1], fields[2] = line[:16], line[17:18], line[19:]
			nf = 3
			if i := strings.IndexByte(fields[2], '\t'); i >= 0 {
				if n := splitFieldsString(fields[2][i:], fields[3:]); n > 0 {
					nf = 4
				}
				fields[2] = fields[2][:i]
			}
			if strings.IndexByte(fields[2], ' ') >= 0 {
				nf = splitFieldsString(line, fields[:])
			}
		} else {
			nf = splitFieldsString(line, fields[:])
		}
		if nf == 0 {
			continue
		}
		if nf < 3 {
			return fmt.Errorf("read kallsyms: line %d: want ADDR TYPE NAME, have %q", lineNo, line)
		}
		addr, err := parseHexDigits(fields[0])
		if err != nil {
			return fmt.Errorf("read kallsyms: line %d: %w", lineNo, err)
		}
		any = true
		if addr != 0 {
			nonzero = true
		}
		if len(fields[1]) != 1 {
			continue
		}
		switch fields[1][0] {
		case 't', 'T', 'w', 'W':
		default:
			continue
		}
		s := textSym{start: addr, name: fields[2]}
		if nf > 3 {
			m, ok := modules[fields[3]]
			if !ok {
				m = strings.Trim(fields[3], "[]")
				modules[fields[3]] = m
			}
			s.module = m
		}
		add(s)
	}
	if any && !nonzero {
		return ErrKallsymsHidden
	}
	return nil
}

// splitFieldsString splits line at runs of spaces and tabs into at most
// len(dst) fields and returns how many it found.
func splitFieldsString(line string, dst []string) int {
	n := 0
	for i := 0; i < len(line) && n < len(dst); {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		j := i
		for j < len(line) && line[j] != ' ' && line[j] != '\t' {
			j++
		}
		if j > i {
			dst[n] = line[i:j]
			n++
		}
		i = j
	}
	return n
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

// hexValue maps a byte to its hex digit's value, 0xff for a non-digit.
var hexValue = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for c := byte('0'); c <= '9'; c++ {
		t[c] = c - '0'
	}
	for c := byte('a'); c <= 'f'; c++ {
		t[c] = c - 'a' + 10
		t[c-'a'+'A'] = c - 'a' + 10
	}
	return t
}()

// parseHexDigits parses a hex number without a prefix.
func parseHexDigits(b string) (uint64, error) {
	if len(b) == 0 || len(b) > 16 {
		return 0, fmt.Errorf("bad address %q", b)
	}
	var v uint64
	for i := 0; i < len(b); i++ {
		d := hexValue[b[i]]
		if d == 0xff {
			return 0, fmt.Errorf("bad address %q", b)
		}
		v = v<<4 | uint64(d)
	}
	return v, nil
}
