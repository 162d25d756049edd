package synth

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// KernelMmapPrefix is the name perf gives the kernel's map ("machine->
// mmap_name" of the host); the file name of the kernel MMAP is this
// followed by the reference symbol: "[kernel.kallsyms]_text".
const KernelMmapPrefix = "[kernel.kallsyms]"

// KernelText is the running kernel's text as perf finds it in
// /proc/kallsyms: from the reference relocation symbol ("_text", else
// "_stext") to "_etext".
type KernelText struct {
	Start, End uint64 // [Start, End): the map perf gives the kernel
	RefSym     string // "_text" or "_stext"
	RefAddr    uint64 // address of RefSym, the record's pgoff
}

// Name is the file name of the kernel MMAP record: "[kernel.kallsyms]_text".
func (k KernelText) Name() string { return KernelMmapPrefix + k.RefSym }

// ReadKernelText finds the kernel text in procRoot/kallsyms as perf's
// machine__get_running_kernel_start does: the address of "_text" (else
// "_stext") among function or absolute symbols, and "_etext" for the end.
// Without "_etext" the end is the lowest module address above the text in
// procRoot/modules, else the top of the address space, as perf ends the
// kernel map at the next map. ok is false when kallsyms hides the
// addresses (kptr_restrict shows them as 0) or lacks both symbols; err is
// for files that cannot be read.
func ReadKernelText(procRoot string) (k KernelText, ok bool, err error) {
	name := filepath.Join(procRoot, "kallsyms")
	f, err := os.Open(name)
	if err != nil {
		return KernelText{}, false, fmt.Errorf("read kernel text: %w", err)
	}
	defer f.Close()
	var text, stext, etext uint64
	sc := bufio.NewScanner(f)
	for sc.Scan() && (text == 0 || etext == 0) {
		sym, typ, a, ok := kallsymsLine(sc.Bytes())
		if !ok || !functionOrAbs(typ) {
			continue
		}
		var addr *uint64
		switch string(sym) {
		case "_text":
			addr = &text
		case "_stext":
			addr = &stext
		case "_etext":
			addr = &etext
		default:
			continue
		}
		if v, err := strconv.ParseUint(string(a), 16, 64); err == nil {
			*addr = v
		}
	}
	if err := sc.Err(); err != nil {
		return KernelText{}, false, fmt.Errorf("read kernel text: %s: %w", name, err)
	}
	switch {
	case text != 0:
		k = KernelText{Start: text, RefSym: "_text", RefAddr: text}
	case stext != 0:
		k = KernelText{Start: stext, RefSym: "_stext", RefAddr: stext}
	default:
		return KernelText{}, false, nil
	}
	k.End = etext
	if etext <= k.Start {
		k.End = nextModule(procRoot, k.Start)
	}
	return k, true, nil
}

// kallsymsLine splits "ffffffff81000000 T _text\t[module]" into the
// symbol, its type and its address's hex digits.
func kallsymsLine(line []byte) (sym []byte, typ byte, addr []byte, ok bool) {
	addr, rest, ok1 := bytes.Cut(line, []byte{' '})
	t, rest, ok2 := bytes.Cut(rest, []byte{' '})
	if !ok1 || !ok2 || len(t) != 1 {
		return nil, 0, nil, false
	}
	sym, _, _ = bytes.Cut(rest, []byte{'\t'})
	return sym, t[0], addr, true
}

// functionOrAbs mirrors perf's find_symbol_cb: a function ('T', 'W') or an
// absolute symbol ('A'), in either case.
func functionOrAbs(typ byte) bool {
	switch typ {
	case 'T', 't', 'W', 'w', 'A', 'a':
		return true
	}
	return false
}

// nextModule is the lowest module load address above start in
// procRoot/modules, or the top of the address space.
func nextModule(procRoot string, start uint64) uint64 {
	end := ^uint64(0)
	text, err := os.ReadFile(filepath.Join(procRoot, "modules"))
	if err != nil {
		return end
	}
	for line := range bytes.Lines(text) {
		// "name size refcnt deps state 0xaddr [taint]"
		f := bytes.Fields(line)
		if len(f) < 6 {
			continue
		}
		a, ok := bytes.CutPrefix(f[5], []byte("0x"))
		if !ok {
			continue
		}
		if v, err := strconv.ParseUint(string(a), 16, 64); err == nil && v > start && v < end {
			end = v
		}
	}
	return end
}
