package symbolize

import (
	"cmp"
	"debug/elf"
	"slices"
)

// elfSym is one function symbol of .symtab or .dynsym.
type elfSym struct {
	start, size uint64
	section     elf.SectionIndex
	bind        elf.SymBind
	name        string
	// local numbers the local (STB_LOCAL) symbols of one name in address
	// order, from 1; 0 for a global or weak one.
	local int
}

// symTable is the sorted function symbols of one object.
type symTable struct {
	syms []elfSym
	// limit[i] is where syms[i] ends for lookup: start+size when sized,
	// else the next symbol's start in the same section (or the section end).
	limit []uint64
	// aliasAt maps a start address to the first function symbol there in
	// table order. It is kept until the DWARF names are settled
	// (dwarfIndex.useSymbolNames).
	aliasAt map[uint64]string
}

func funcSym(s elf.Symbol) bool {
	t := elf.ST_TYPE(s.Info)
	if t != elf.STT_FUNC && t != elf.STT_GNU_IFUNC {
		return false
	}
	return s.Value != 0 && s.Section != elf.SHN_UNDEF && s.Section < elf.SHN_LORESERVE
}

// load collects the function symbols of one table, as perf does: the
// .symtab of the debug file if there is one, else the file's .symtab,
// else its .dynsym.
func (t *symTable) load(f, debug *elf.File) {
	var syms []elf.Symbol
	var err error
	if debug != nil {
		syms, err = debug.Symbols()
	}
	if len(syms) == 0 || err != nil {
		syms, err = f.Symbols()
	}
	if len(syms) == 0 || err != nil {
		syms, _ = f.DynamicSymbols()
	}
	t.aliasAt = map[uint64]string{}
	for _, s := range syms {
		if !funcSym(s) {
			continue
		}
		if _, ok := t.aliasAt[s.Value]; !ok {
			t.aliasAt[s.Value] = s.Name
		}
		t.syms = append(t.syms, elfSym{start: s.Value, size: s.Size, section: s.Section, bind: elf.ST_BIND(s.Info), name: s.Name})
	}
}

// better orders symbols at one address as perf's choose_best_symbol (perf
// 6.1, tools/perf/util/symbol.c): a sized one, a non-weak one, a global
// one, the one with fewer leading underscores, the longer name; then by
// name, to be deterministic.
func better(a, b elfSym) int {
	if c := boolOrder(a.size > 0, b.size > 0); c != 0 {
		return c
	}
	if c := boolOrder(a.bind != elf.STB_WEAK, b.bind != elf.STB_WEAK); c != 0 {
		return c
	}
	if c := boolOrder(a.bind == elf.STB_GLOBAL, b.bind == elf.STB_GLOBAL); c != 0 {
		return c
	}
	if c := cmp.Compare(underscores(a.name), underscores(b.name)); c != 0 {
		return c
	}
	if c := cmp.Compare(len(b.name), len(a.name)); c != 0 {
		return c
	}
	return cmp.Compare(a.name, b.name)
}

// boolOrder puts true first.
func boolOrder(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return -1
	}
	return 1
}

func underscores(s string) int {
	n := 0
	for n < len(s) && s[n] == '_' {
		n++
	}
	return n
}

// addPLT adds a "name@plt" symbol for every PLT entry of an x86-64 file,
// as perf does: entry i of .rela.plt is the i-th 16-byte entry of .plt.sec
// when there is one (IBT), else of .plt after its 16-byte header. Call
// load first: IRELATIVE entries are named after their resolver.
func (t *symTable) addPLT(f *elf.File) {
	if f.Machine != elf.EM_X86_64 || f.Class != elf.ELFCLASS64 {
		return
	}
	rela := f.Section(".rela.plt")
	if rela == nil {
		return
	}
	base, end := uint64(0), uint64(0)
	var sec elf.SectionIndex
	for i, s := range f.Sections {
		switch {
		case s.Name == ".plt.sec":
			base, end, sec = s.Addr, s.Addr+s.Size, elf.SectionIndex(i)
		case s.Name == ".plt" && base == 0:
			base, end, sec = s.Addr+16, s.Addr+s.Size, elf.SectionIndex(i)
		}
	}
	data, err := rela.Data()
	if err != nil || base == 0 {
		return
	}
	dyn, err := f.DynamicSymbols()
	if err != nil {
		return
	}
	const entSize = 16
	for i := 0; (i+1)*24 <= len(data); i++ {
		start := base + uint64(i)*entSize
		if start+entSize > end {
			break
		}
		info := f.ByteOrder.Uint64(data[i*24+8:])
		sym := int(info >> 32)
		var name string
		switch elf.R_X86_64(uint32(info)) {
		case elf.R_X86_64_JMP_SLOT:
			if sym >= 1 && sym <= len(dyn) {
				name = dyn[sym-1].Name
			}
		case elf.R_X86_64_IRELATIVE:
			// The addend is the IFUNC resolver: name the entry after it,
			// as perf 6.2+ does (perf 6.1 prints a bare "@plt").
			name = t.aliasAt[f.ByteOrder.Uint64(data[i*24+16:])]
		}
		if name == "" {
			continue
		}
		t.syms = append(t.syms, elfSym{start: start, size: entSize, section: sec, bind: elf.STB_GLOBAL, name: name + "@plt"})
	}
}

// addPLTGOT adds "name@plt" symbols for the entries of .plt.got (calls
// through GOT slots filled at load time, such as __cxa_finalize), as
// objdump labels them: each entry's "jmp *disp(%rip)" (ff 25) names a GOT
// slot, and the .rela.dyn relocation of that slot names the symbol.
func (t *symTable) addPLTGOT(f *elf.File) {
	if f.Machine != elf.EM_X86_64 || f.Class != elf.ELFCLASS64 {
		return
	}
	var sec elf.SectionIndex
	var pg *elf.Section
	for i, s := range f.Sections {
		if s.Name == ".plt.got" && s.Type == elf.SHT_PROGBITS {
			pg, sec = s, elf.SectionIndex(i)
		}
	}
	rela := f.Section(".rela.dyn")
	if pg == nil || rela == nil {
		return
	}
	code, err1 := pg.Data()
	data, err2 := rela.Data()
	dyn, err3 := f.DynamicSymbols()
	if err1 != nil || err2 != nil || err3 != nil {
		return
	}
	slots := map[uint64]string{}
	for i := 0; (i+1)*24 <= len(data); i++ {
		off := f.ByteOrder.Uint64(data[i*24:])
		sym := int(f.ByteOrder.Uint64(data[i*24+8:]) >> 32)
		if sym >= 1 && sym <= len(dyn) {
			slots[off] = dyn[sym-1].Name
		}
	}
	ent := pg.Entsize
	if ent != 8 && ent != 16 {
		ent = 8
	}
	for e := uint64(0); e+ent <= uint64(len(code)); e += ent {
		entry := code[e : e+ent]
		for k := 0; k+6 <= len(entry); k++ {
			if entry[k] != 0xff || entry[k+1] != 0x25 {
				continue
			}
			disp := int32(f.ByteOrder.Uint32(entry[k+2:]))
			slot := pg.Addr + e + uint64(k) + 6 + uint64(int64(disp))
			if name, ok := slots[slot]; ok {
				t.syms = append(t.syms, elfSym{start: pg.Addr + e, size: ent, section: sec, bind: elf.STB_GLOBAL, name: name + "@plt"})
			}
			break
		}
	}
}

// nameAt returns the first symbol name starting at a (see aliasAt) and
// where that symbol ends.
func (t *symTable) nameAt(a uint64) (string, uint64, bool) {
	name, ok := t.aliasAt[a]
	if !ok {
		return "", 0, false
	}
	j := t.lookup(a)
	if j < 0 || t.syms[j].start != a {
		return "", 0, false
	}
	return name, t.limit[j], true
}

// finish sorts and deduplicates the symbols and computes their limits.
// sectionEnd gives the end address of a section index (0 if unknown).
func (t *symTable) finish(sectionEnd func(elf.SectionIndex) uint64) {
	slices.SortFunc(t.syms, func(a, b elfSym) int {
		if c := cmp.Compare(a.start, b.start); c != 0 {
			return c
		}
		return better(a, b)
	})
	t.syms = slices.CompactFunc(t.syms, func(a, b elfSym) bool { return a.start == b.start })
	locals := map[string]int{}
	for i, s := range t.syms {
		if s.bind == elf.STB_LOCAL {
			locals[s.name]++
			t.syms[i].local = locals[s.name]
		}
	}
	t.limit = make([]uint64, len(t.syms))
	for i, s := range t.syms {
		switch {
		case s.size > 0:
			t.limit[i] = s.start + s.size
		case i+1 < len(t.syms) && t.syms[i+1].section == s.section:
			t.limit[i] = t.syms[i+1].start
		default:
			t.limit[i] = sectionEnd(s.section)
		}
	}
}

// lookup returns the index of the symbol containing a, or -1.
func (t *symTable) lookup(a uint64) int {
	i, found := slices.BinarySearchFunc(t.syms, a, func(s elfSym, a uint64) int { return cmp.Compare(s.start, a) })
	if !found {
		i--
	}
	// A sized symbol may contain a function nested in it (rare); look back
	// a little for an enclosing sized symbol.
	for j := i; j >= 0 && j > i-4; j-- {
		if a < t.limit[j] {
			return j
		}
	}
	return -1
}
