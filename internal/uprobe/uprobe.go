package uprobe

import (
	"cmp"
	"debug/elf"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/ianlancetaylor/demangle"

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/internal/safefile"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/symbolize"
)

// Probe is one probe point: a function entry of an object.
type Probe struct {
	Name      string // the symbol's name as in the ELF file (mangled)
	Demangled string // the name demangled (C++, Rust), or Name
	Addr      uint64 // the entry's virtual address in the object (st_value)
	Size      uint64 // st_size
	Offset    uint64 // the entry's file offset: what the kernel probes
}

// Object is an ELF file and its probe points, sorted by address.
type Object struct {
	Path   string // as given (absolute paths are what the kernel needs)
	Probes []Probe
}

// Functions reads the probe points of the ELF file at path: every
// STT_FUNC symbol with a non-zero size inside an executable, allocated
// section other than the PLT sections, from .symtab if the file has one,
// else from .dynsym and, for a Go binary, its pclntab (which go build
// -ldflags=-s and go run keep: goFunctions). Symbols at one address are
// aliases and give one probe, named after the best of them (a global
// over a weak over a local symbol, then the fewest leading underscores,
// then the shortest name). A non-nil filter keeps the functions whose
// mangled or demangled name it matches.
func Functions(path string, filter *regexp.Regexp) (*Object, error) {
	f, err := safefile.OpenELF(path)
	if err != nil {
		return nil, fmt.Errorf("uprobe: %w", err)
	}
	defer f.Close()
	if f.Machine != elf.EM_X86_64 || f.Class != elf.ELFCLASS64 {
		return nil, fmt.Errorf("uprobe: %s is a %v %v object; only x86-64 is supported", path, f.Class, f.Machine)
	}
	if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		return nil, fmt.Errorf("uprobe: %s is not an executable or shared library (%v)", path, f.Type)
	}
	syms, err := f.Symbols()
	if len(syms) == 0 {
		syms, err = f.DynamicSymbols()
		if gs := goFunctions(f.File); len(gs) > 0 {
			// a cgo binary's C functions are in .dynsym only
			syms, err = append(gs, syms...), nil
		}
	}
	if len(syms) == 0 {
		if err == nil || errors.Is(err, elf.ErrNoSymbols) {
			return nil, fmt.Errorf("uprobe: %s has no symbol table (.symtab, a Go pclntab or .dynsym)", path)
		}
		return nil, fmt.Errorf("uprobe: %s: %w", path, err)
	}
	best := map[uint64]elf.Symbol{}
	for _, s := range syms {
		if !probeable(f.File, s) {
			continue
		}
		if prev, ok := best[s.Value]; !ok || betterName(s, prev) {
			best[s.Value] = s
		}
	}
	obj := &Object{Path: path}
	segs := addrspace.Segments(f.Progs)
	for _, s := range best {
		off, ok := addrspace.FileOffset(segs, addrspace.ObjAddr(s.Value))
		if !ok {
			continue // not backed by the file: nothing to probe
		}
		p := Probe{Name: s.Name, Demangled: demangled(s.Name), Addr: s.Value, Size: s.Size, Offset: off}
		if filter != nil && !filter.MatchString(p.Name) && !filter.MatchString(p.Demangled) {
			continue
		}
		obj.Probes = append(obj.Probes, p)
	}
	slices.SortFunc(obj.Probes, func(a, b Probe) int { return cmp.Compare(a.Addr, b.Addr) })
	return obj, nil
}

// goFunctions lists the functions of a Go binary's pclntab
// (symbolize.GoFuncs) as elf.Symbols would list them from .symtab: global
// functions of .text with their entry and size. It returns nothing for a
// file that is not a Go binary or whose table does not read.
func goFunctions(f *elf.File) []elf.Symbol {
	text := f.Section(".text")
	funcs, err := symbolize.GoFuncs(f)
	if text == nil || err != nil {
		return nil
	}
	textIndex := elf.SectionIndex(slices.Index(f.Sections, text))
	var syms []elf.Symbol
	for _, fn := range funcs {
		if fn.End <= fn.Entry {
			continue
		}
		syms = append(syms, elf.Symbol{
			Name: fn.Name, Info: elf.ST_INFO(elf.STB_GLOBAL, elf.STT_FUNC),
			Section: textIndex, Value: fn.Entry, Size: fn.End - fn.Entry,
		})
	}
	return syms
}

func probeable(f *elf.File, s elf.Symbol) bool {
	if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Size == 0 || s.Value == 0 {
		return false
	}
	if s.Section == elf.SHN_UNDEF || s.Section >= elf.SHN_LORESERVE || int(s.Section) >= len(f.Sections) {
		return false
	}
	sec := f.Sections[s.Section]
	const want = elf.SHF_ALLOC | elf.SHF_EXECINSTR
	if sec.Flags&want != want || strings.HasPrefix(sec.Name, ".plt") {
		return false
	}
	return s.Value >= sec.Addr && s.Value < sec.Addr+sec.Size
}

func betterName(a, b elf.Symbol) bool {
	rank := func(s elf.Symbol) int {
		switch elf.ST_BIND(s.Info) {
		case elf.STB_GLOBAL:
			return 0
		case elf.STB_WEAK:
			return 1
		}
		return 2
	}
	if c := cmp.Compare(rank(a), rank(b)); c != 0 {
		return c < 0
	}
	ua, ub := len(a.Name)-len(strings.TrimLeft(a.Name, "_")), len(b.Name)-len(strings.TrimLeft(b.Name, "_"))
	if ua != ub {
		return ua < ub
	}
	if len(a.Name) != len(b.Name) {
		return len(a.Name) < len(b.Name)
	}
	return a.Name < b.Name
}

func demangled(name string) string {
	if d, err := demangle.ToString(name); err == nil {
		return d
	}
	return name
}

// StackBytes is how much of the user stack each sample copies: the return
// address at the top of the stack at a function's entry.
const StackBytes = 8

// SampleType is what every probe hit records, and no more: a hit is one
// call, and each field costs every call its bytes (8 each; the callchain
// 8 plus 8 per entry, its PERF_CONTEXT_USER marker included; the stack
// copy 24: size, the 8 bytes, dyn_size). IDENTIFIER comes first in each
// sample so that the samples of thousands of events sharing one ring can
// be told apart; IP is the callee; TID the thread and TIME the order and
// the process model's moment; the stack copy the return address, i.e. the
// call site; the frame-pointer callchain the calling context (bounded by
// --max-stack). Left out: PERIOD (always 1: the attr's sample_period
// says so), CPU (the calls do not depend on it) and the user registers
// (32 bytes: the copy starts at the stack pointer, so its first u64 is
// the return address without them).
const SampleType = perf.SampleIP | perf.SampleTID | perf.SampleTime |
	perf.SampleIdentifier | perf.SampleCallchain | perf.SampleStackUser

// Events builds the perf events of obj's probes from the tracefs names and
// tracepoint ids Define returned (one per probe, in obj.Probes order): one
// event per tracefs event, in the order of their first probe. base
// supplies the flags of the recording (disabled, inherit, enable_on_exec,
// and for the first event mmap, comm and task tracking; as
// event.BuildAttrs makes them): the first event (first is true) keeps all
// of base's flags, the others lose the side-band tracking bits so that each
// mmap or comm is reported once. Every event samples every hit
// (sample_period 1) with SampleType. Names are "GROUP:NAME", perf's
// spelling of a tracepoint.
func Events(obj *Object, group string, names []string, ids []uint64, base perf.Attr, first bool) []perf.Event {
	var events []perf.Event
	seen := map[uint64]bool{}
	for i := range obj.Probes {
		if seen[ids[i]] {
			continue
		}
		seen[ids[i]] = true
		a := base
		if !first || len(events) > 0 {
			a.Flags &^= perf.FlagMmap | perf.FlagMmap2 | perf.FlagComm | perf.FlagCommExec | perf.FlagTask |
				perf.FlagKsymbol | perf.FlagBPFEvent | perf.FlagMmapData | perf.FlagContextSwitch |
				perf.FlagNamespaces | perf.FlagCgroup | perf.FlagTextPoke
		}
		a.Flags &^= perf.FlagFreq
		a.Flags |= perf.FlagExcludeCallchainKernel | perf.FlagSampleIDAll
		a.Type = perf.TypeTracepoint
		a.Config = ids[i]
		a.SamplePeriod = 1
		a.SampleType = SampleType
		a.SampleRegsUser = 0
		a.SampleStackUser = StackBytes
		events = append(events, perf.Event{Name: group + ":" + names[i], Attr: a})
	}
	return events
}

// Names are the names of every function objs probe, mangled and
// demangled, and the number of probes.
func Names(objs []*Object) (map[string]bool, int) {
	names, n := map[string]bool{}, 0
	for _, o := range objs {
		for _, p := range o.Probes {
			names[p.Name], names[p.Demangled] = true, true
		}
		n += len(o.Probes)
	}
	return names, n
}
