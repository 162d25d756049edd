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

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/internal/safefile"
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

// KallsymsText is kallsyms text as ReadKallsyms reads it: chunks of whole
// lines, in order. The names of the Kallsyms made of it are substrings of
// its chunks.
type KallsymsText struct {
	chunks [][]byte
}

// All returns every text symbol of t.
func (t *KallsymsText) All() (*Kallsyms, error) {
	lines := 0
	for _, c := range t.chunks {
		lines += bytes.Count(c, []byte{'\n'})
	}
	k := &Kallsyms{table: textTable{syms: make([]textSym, 0, lines+1)}}
	err := scanKallsyms(t.chunks, func(s textSym) { k.table.syms = append(k.table.syms, s) })
	if err != nil {
		return nil, err
	}
	k.table.sort()
	return k, nil
}

// RefAddr returns the address of the kernel's text symbol name (perf's
// reference relocation symbol, "_text" or "_stext", which a recording's
// kernel MMAP record names with its address at recording time) in t: the
// first line of type T or t naming it; false when none does.
func (t *KallsymsText) RefAddr(name string) (addrspace.ObjAddr, bool) {
	if name == "" {
		return 0, false
	}
	for _, c := range t.chunks {
		for _, typ := range []string{" T ", " t "} {
			text := unsafe.String(unsafe.SliceData(c), len(c))
			i := strings.Index(text, typ+name+"\n")
			if i < 0 {
				continue
			}
			start := strings.LastIndexByte(text[:i], '\n') + 1
			a, err := parseHexDigits(text[start:i])
			if err != nil {
				continue
			}
			return addrspace.ObjAddr(a), true
		}
	}
	return 0, false
}

// Relocate moves the kernel's own symbols (not those of modules, which the
// kernel places on their own) by delta (modulo 2^64: a move down is a
// large delta), for a kallsyms taken when the kernel was at another
// address (KASLR picks one at every boot): delta is the reference
// symbol's address in the recording minus its address in the kallsyms.
func (k *Kallsyms) Relocate(delta uint64) {
	if delta == 0 {
		return
	}
	for i := range k.table.syms {
		if k.table.syms[i].module == "" {
			k.table.syms[i].start += delta
		}
	}
	k.table.sort()
}

// ReadKallsyms reads a kallsyms file's text, for KallsymsText.For and All
// (a regular file: a FIFO or a device is refused, not read).
func ReadKallsyms(path string) (*KallsymsText, error) {
	f, err := safefile.OpenLocal(path)
	if err != nil {
		return nil, fmt.Errorf("read kallsyms: %w", err)
	}
	defer f.Close()
	return readKallsyms(f)
}

// kallsymsChunk is the size of the chunks /proc/kallsyms is read in: a few
// large reads (it is 3-10 MB and says size 0), each into a fresh chunk
// kept as it is, never one buffer grown and copied.
const kallsymsChunk = 1 << 20

// readKallsyms reads kallsyms text in chunks of whole lines
// (readKallsymsChunks).
func readKallsyms(r io.Reader) (*KallsymsText, error) {
	size := kallsymsChunk
	if st, ok := r.(interface{ Stat() (os.FileInfo, error) }); ok {
		if fi, err := st.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 {
			size = int(fi.Size()) + 1 // a file (a saved kallsyms): one read, and its end
		}
	}
	return readKallsymsChunks(r, size)
}

// readKallsymsChunks reads kallsyms text in chunks of size bytes, cut
// after their last whole line: the partial line at the end of a chunk's
// read starts the next chunk (a line longer than a chunk gets a chunk of
// its own, twice its length).
func readKallsymsChunks(r io.Reader, size int) (*KallsymsText, error) {
	t := &KallsymsText{}
	var carry []byte
	for {
		buf := make([]byte, max(size, 2*len(carry)))
		n := copy(buf, carry)
		m, err := io.ReadFull(r, buf[n:])
		n += m
		switch err {
		case nil:
		case io.EOF, io.ErrUnexpectedEOF:
			if n > 0 {
				t.chunks = append(t.chunks, buf[:n])
			}
			return t, nil
		default:
			return nil, fmt.Errorf("read kallsyms: %w", err)
		}
		i := bytes.LastIndexByte(buf, '\n')
		if i < 0 {
			carry = buf // one line so far: a larger chunk
			continue
		}
		t.chunks = append(t.chunks, buf[:i+1])
		carry = buf[i+1:]
	}
}

// For resolves the kernel addresses addrs with the text t, keeping only
// the symbols that contain them: the same symbols as All gives for those
// addresses, for a fraction of the time and memory, as a report needs a
// few hundred of a kernel's hundred thousand.
//
// The symbol of address a is the text symbol with the greatest start at
// or below a (it extends to the next start). In one pass over the lines,
// in any order, a start s can only be that of the first needed address at
// or above it (of the others at or above it, that address's symbol starts
// after s or at it), so each needed address keeps the greatest start that
// falls on it; an address that keeps none is in the symbol of the address
// before it. Kept alone, each symbol still extends past its addresses:
// no other kept start lies between.
func (t *KallsymsText) For(addrs []addrspace.ObjAddr) (*Kallsyms, error) {
	need := make([]uint64, len(addrs))
	for i, a := range addrs {
		need[i] = uint64(a)
	}
	slices.Sort(need)
	need = slices.Compact(need)
	best := make([]textSym, len(need))
	found := make([]bool, len(need))
	j := 0 // the last line's: lines mostly come in address order
	err := scanKallsyms(t.chunks, func(s textSym) {
		// j becomes the first needed address at or above s
		if j+1 < len(need) && need[j] < s.start && need[j+1] >= s.start {
			j++ // the usual step when lines come in address order
		} else if j > 0 && need[j-1] >= s.start || j < len(need) && need[j] < s.start {
			j, _ = slices.BinarySearch(need, s.start)
		}
		if j < len(need) && (!found[j] || s.start >= best[j].start) {
			best[j], found[j] = s, true // at one start the line read last wins, as in All
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
// kallsyms text, the chunks' lines in order (no line spans two chunks);
// the names are substrings of the chunks.
func scanKallsyms(chunks [][]byte, add func(textSym)) error {
	modules := map[string]string{} // module names, interned
	lineNo, nonzero, any := 0, false, false
	var fields [4]string
	for _, b := range chunks {
		if len(b) == 0 {
			continue
		}
		// The text is not written again: the names can be substrings of it.
		text := unsafe.String(&b[0], len(b))
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
func (k *Kallsyms) Module(a addrspace.ObjAddr) string {
	if i := k.table.lookup(uint64(a)); i >= 0 {
		return k.table.syms[i].module
	}
	return ""
}

// Symbolize resolves kernel runtime addresses.
func (k *Kallsyms) Symbolize(addrs []addrspace.ObjAddr) []Location { return k.table.symbolize(addrs) }

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
