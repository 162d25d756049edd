package symbolize

import (
	"cmp"
	"debug/dwarf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
)

// attrMIPSLinkageName is DW_AT_MIPS_linkage_name, which older GCCs emit
// instead of DW_AT_linkage_name.
const attrMIPSLinkageName dwarf.Attr = 0x2007

// attrGNUDiscriminator is DW_AT_GNU_discriminator, the discriminator of
// an inlined call (LLVM writes it on DW_TAG_inlined_subroutine).
const attrGNUDiscriminator dwarf.Attr = 0x2136

// inlRange is the address range of one DW_TAG_inlined_subroutine.
type inlRange struct {
	lo, hi   uint64
	name     int32 // index into dwarfIndex.names
	decl     int32 // the inlined function's DW_AT_decl_line, 0 if unknown
	depth    int32 // 1 for a call inlined directly into the subprogram
	callFile int32 // index into dwarfIndex.files, -1 if unknown
	callLine int32
	callCol  int32
	callDisc uint32 // DW_AT_GNU_discriminator of the call, 0 if none
}

// funcGroup is one subprogram with the inlined calls in it.
type funcGroup struct {
	name    int32
	decl    int32  // DW_AT_decl_line, 0 if unknown
	lo      uint64 // start of the first range
	linkage bool   // name stays: see useSymbolNames
	// symName (-1: none) names the addresses below symEnd instead of name.
	symName int32
	symEnd  uint64
	inl     []inlRange
}

// funcRange is one address range of a subprogram.
type funcRange struct {
	lo, hi uint64
	group  *funcGroup
}

// lineRow is one row of a line table.
type lineRow struct {
	addr   uint64
	file   int32
	line   int32
	col    int32
	disc   uint32 // the row's discriminator (DWARF 4+), 0 if none
	endSeq bool
}

// dwarfIndex is the range and line tables of one object, built once.
type dwarfIndex struct {
	funcs []funcRange
	lines []lineRow
	files []string
	names []string // raw function names

	// while building
	d       *dwarf.Data
	lineSec []byte           // .debug_line, for checkLineCounts
	order   binary.ByteOrder // of lineSec
	nameIdx map[dwarf.Offset]nameRef
	nameStr map[string]int32
	fileIdx map[string]int32
	cuFiles []int32
	// cuMangles: the CU's language mangles names (see mangles)
	cuMangles bool
}

// buildDWARF indexes d; lineSec is its .debug_line section (see
// lineSection; nil if unknown) in byte order bo, for checkLineCounts.
// Without inlines it reads the line tables alone: no subprogram or
// inlined-call ranges, and no DIE beyond each unit's first.
func buildDWARF(d *dwarf.Data, lineSec []byte, bo binary.ByteOrder, inlines bool) (*dwarfIndex, error) {
	x := &dwarfIndex{d: d, lineSec: lineSec, order: bo, nameIdx: map[dwarf.Offset]nameRef{}, nameStr: map[string]int32{}, fileIdx: map[string]int32{}}
	r := d.Reader()
	started, prev := false, dwarf.Offset(0)
	for {
		cu, err := r.Next()
		if err != nil {
			return nil, fmt.Errorf("read DWARF: %w", err)
		}
		if cu == nil {
			break
		}
		// A malformed DW_AT_sibling can send debug/dwarf's reader back
		// to an entry it read (found by FuzzOpen: it looped for ever).
		if started && cu.Offset <= prev {
			return nil, fmt.Errorf("read DWARF: entry at %#x after the one at %#x: malformed sibling link", cu.Offset, prev)
		}
		started, prev = true, cu.Offset
		if cu.Tag != dwarf.TagCompileUnit && cu.Tag != dwarf.TagPartialUnit {
			r.SkipChildren()
			continue
		}
		lang, _ := cu.Val(dwarf.AttrLanguage).(int64)
		x.cuMangles = mangles(lang)
		if err := x.lineTable(cu); err != nil {
			return nil, err
		}
		if !inlines {
			r.SkipChildren() // to the next unit, its DIEs unread
			continue
		}
		if cu.Children {
			if err := x.walk(r); err != nil {
				return nil, err
			}
		}
	}
	x.finish()
	return x, nil
}

func (x *dwarfIndex) file(name string) int32 {
	if i, ok := x.fileIdx[name]; ok {
		return i
	}
	i := int32(len(x.files))
	x.files = append(x.files, name)
	x.fileIdx[name] = i
	return i
}

// lineTable reads the line table of cu into x.lines and sets x.cuFiles.
func (x *dwarfIndex) lineTable(cu *dwarf.Entry) error {
	x.cuFiles = x.cuFiles[:0]
	if off, ok := cu.Val(dwarf.AttrStmtList).(int64); ok {
		if err := checkLineCounts(x.lineSec, off, x.order); err != nil {
			return fmt.Errorf("read DWARF line table: %w", err)
		}
	}
	lr, err := x.d.LineReader(cu)
	if err != nil {
		return fmt.Errorf("read DWARF line table: %w", err)
	}
	if lr == nil {
		return nil
	}
	compDir, _ := cu.Val(dwarf.AttrCompDir).(string)
	files := lr.Files()
	// debug/dwarf joins relative directories with DW_AT_comp_dir for
	// DWARF 4 but not for DWARF 5 (whose file 0 is the CU's own file, the
	// way to tell them apart); join them here as addr2line does.
	v5 := len(files) > 0 && files[0] != nil
	byEntry := make(map[*dwarf.LineFile]int32, len(files))
	for _, f := range files {
		if f == nil {
			x.cuFiles = append(x.cuFiles, -1)
			continue
		}
		name := f.Name
		if v5 && compDir != "" && !path.IsAbs(name) {
			name = path.Join(compDir, name)
		}
		i := x.file(name)
		byEntry[f] = i
		x.cuFiles = append(x.cuFiles, i)
	}
	var le dwarf.LineEntry
	for {
		if err := lr.Next(&le); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("read DWARF line table: %w", err)
		}
		row := lineRow{addr: le.Address, line: int32(le.Line), col: int32(le.Column), disc: uint32(le.Discriminator), endSeq: le.EndSequence, file: -1}
		if le.File != nil {
			if i, ok := byEntry[le.File]; ok {
				row.file = i
			} else {
				row.file = x.file(le.File.Name)
			}
		}
		x.lines = append(x.lines, row)
	}
}

// scope is the function context of an open DIE while walking a CU.
type scope struct {
	group *funcGroup
	depth int32
}

// walk reads the children of a CU, recording subprogram and inlined
// subroutine ranges.
func (x *dwarfIndex) walk(r *dwarf.Reader) error {
	stack := []scope{{}}
	for len(stack) > 0 {
		e, err := r.Next()
		if err != nil {
			return fmt.Errorf("read DWARF: %w", err)
		}
		if e == nil {
			return nil
		}
		if e.Tag == 0 {
			stack = stack[:len(stack)-1]
			continue
		}
		cur := stack[len(stack)-1]
		next := cur
		switch e.Tag {
		case dwarf.TagSubprogram:
			next = scope{}
			ranges := x.ranges(e)
			if len(ranges) > 0 {
				name, linkage := x.funcName(e)
				g := &funcGroup{name: name, decl: x.nameIdx[e.Offset].decl, lo: ranges[0][0], linkage: linkage, symName: -1}
				for _, rg := range ranges {
					x.funcs = append(x.funcs, funcRange{lo: rg[0], hi: rg[1], group: g})
				}
				next = scope{group: g}
			}
		case dwarf.TagInlinedSubroutine:
			if cur.group == nil {
				break
			}
			ranges := x.ranges(e)
			if len(ranges) == 0 {
				break
			}
			name, _ := x.funcName(e)
			in := inlRange{name: name, decl: x.nameIdx[e.Offset].decl, depth: cur.depth + 1, callFile: -1}
			if f, ok := e.Val(dwarf.AttrCallFile).(int64); ok && f >= 0 && int(f) < len(x.cuFiles) {
				in.callFile = x.cuFiles[f]
			}
			if l, ok := e.Val(dwarf.AttrCallLine).(int64); ok {
				in.callLine = int32(l)
			}
			if c, ok := e.Val(dwarf.AttrCallColumn).(int64); ok {
				in.callCol = int32(c)
			}
			if d, ok := e.Val(attrGNUDiscriminator).(int64); ok && d > 0 {
				in.callDisc = uint32(d)
			}
			for _, rg := range ranges {
				in.lo, in.hi = rg[0], rg[1]
				cur.group.inl = append(cur.group.inl, in)
			}
			next = scope{group: cur.group, depth: in.depth}
		}
		if e.Children {
			if !mayHoldCode(e.Tag) {
				r.SkipChildren()
				continue
			}
			stack = append(stack, next)
		}
	}
	return nil
}

// mayHoldCode reports whether a DIE with this tag may have subprograms or
// inlined subroutines among its descendants; the children of others (types,
// variables, call sites) are skipped.
func mayHoldCode(t dwarf.Tag) bool {
	switch t {
	case dwarf.TagSubprogram, dwarf.TagInlinedSubroutine, dwarf.TagLexDwarfBlock,
		dwarf.TagNamespace, dwarf.TagModule, dwarf.TagClassType, dwarf.TagStructType,
		dwarf.TagUnionType, dwarf.TagCompileUnit, dwarf.TagPartialUnit:
		return true
	}
	return false
}

// ranges returns e's address ranges, without empty and discarded ones
// (address 0 or the -1/-2 tombstones of linkers).
func (x *dwarfIndex) ranges(e *dwarf.Entry) [][2]uint64 {
	if e.Val(dwarf.AttrLowpc) == nil && e.Val(dwarf.AttrRanges) == nil {
		return nil
	}
	rs, err := x.d.Ranges(e)
	if err != nil {
		return nil
	}
	out := rs[:0]
	for _, r := range rs {
		if r[0] == 0 || r[0] >= ^uint64(1) || r[1] <= r[0] {
			continue
		}
		out = append(out, r)
	}
	return out
}

// funcName returns the interned raw name of a subprogram or inlined
// subroutine: the first DW_AT_linkage_name along DW_AT_abstract_origin and
// DW_AT_specification, else the first DW_AT_name; and whether the name is
// final (see useSymbolNames).
func (x *dwarfIndex) funcName(e *dwarf.Entry) (int32, bool) {
	if n, ok := x.nameIdx[e.Offset]; ok {
		return n.idx, n.final
	}
	linkage, plain, decl := x.nameChain(e)
	name := linkage
	if name == "" {
		name = plain
	}
	if name == "" {
		name = "??"
	}
	final := linkage != "" || !x.cuMangles
	i := x.intern(name)
	x.nameIdx[e.Offset] = nameRef{i, final, decl}
	return i, final
}

type nameRef struct {
	idx   int32
	final bool
	decl  int32 // DW_AT_decl_line along the chain, 0 if none
}

// mangles reports whether a DW_AT_language mangles its linkage names (all
// but those of binutils' non_mangled list).
func mangles(lang int64) bool {
	switch lang {
	case 0x1, 0x2, 0x3, 0x5, 0x6, 0x7, 0x9, 0xc, 0xd, 0xf, 0x12, 0x1d, 0x8001:
		// C89, C, Ada83, Cobol74, Cobol85, Fortran77, Pascal83, C99,
		// Ada95, PLI, UPC, C11, Mips_Assembler
		return false
	}
	return true
}

func (x *dwarfIndex) intern(name string) int32 {
	i, ok := x.nameStr[name]
	if !ok {
		i = int32(len(x.names))
		x.names = append(x.names, name)
		x.nameStr[name] = i
	}
	return i
}

// useSymbolNames names subprograms of languages that mangle (C++, Rust)
// whose DWARF name is not a linkage name after the ELF symbol starting
// exactly at the subprogram's first range (the first there in .symtab
// order), for the addresses inside that symbol, as addr2line does: GCC
// gives functions in an anonymous namespace no DW_AT_linkage_name, and
// their mangled symbol names demangle to "(anonymous namespace)::f(int)".
// C functions keep their DWARF names; addr2line sometimes prints an alias
// of the same address instead (__GI___libc_sa_len for __libc_sa_len).
func (x *dwarfIndex) useSymbolNames(t *symTable) {
	nameStr := map[string]int32{}
	for i, n := range x.names {
		nameStr[n] = int32(i)
	}
	for _, f := range x.funcs {
		g := f.group
		if g.linkage {
			continue
		}
		g.linkage = true // done, whatever the outcome
		name, end, ok := t.nameAt(g.lo)
		if !ok || name == x.names[g.name] {
			continue
		}
		k, ok := nameStr[name]
		if !ok {
			k = int32(len(x.names))
			x.names = append(x.names, name)
			nameStr[name] = k
		}
		g.symName, g.symEnd = k, end
	}
}

// groupName returns the name of g's frame at a.
func (x *dwarfIndex) groupName(g *funcGroup, a uint64) string {
	if g.symName >= 0 && a >= g.lo && a < g.symEnd {
		return x.names[g.symName]
	}
	return x.names[g.name]
}

// nameChain follows DW_AT_abstract_origin and DW_AT_specification from e
// and returns the first linkage name, the first DW_AT_name and the first
// DW_AT_decl_line (read up to the entry with the linkage name, and on
// from it when it has none).
func (x *dwarfIndex) nameChain(e *dwarf.Entry) (linkage, plain string, decl int32) {
	var r *dwarf.Reader
	for hop := 0; e != nil && hop < 8; hop++ {
		if l, ok := e.Val(dwarf.AttrDeclLine).(int64); ok && decl == 0 && l > 0 && l < 1<<31 {
			decl = int32(l)
		}
		if s, ok := e.Val(dwarf.AttrLinkageName).(string); ok && s != "" {
			return s, plain, x.declAfter(r, e, decl, hop)
		}
		if s, ok := e.Val(attrMIPSLinkageName).(string); ok && s != "" {
			return s, plain, x.declAfter(r, e, decl, hop)
		}
		if s, ok := e.Val(dwarf.AttrName).(string); ok && plain == "" {
			plain = s
		}
		e = x.origin(&r, e)
	}
	return "", plain, decl
}

// declAfter returns decl, or when it is 0 the first DW_AT_decl_line
// along the chain on from e (a linkage name on a declaration whose
// definition has no line of its own is rare; a specification holds it).
func (x *dwarfIndex) declAfter(r *dwarf.Reader, e *dwarf.Entry, decl int32, hop int) int32 {
	for ; decl == 0 && e != nil && hop < 8; hop++ {
		if e = x.origin(&r, e); e == nil {
			break
		}
		if l, ok := e.Val(dwarf.AttrDeclLine).(int64); ok && l > 0 && l < 1<<31 {
			decl = int32(l)
		}
	}
	return decl
}

// origin returns the entry e's DW_AT_abstract_origin (else its
// DW_AT_specification) names, read with *r (made when nil), or nil when
// it names none or the entry cannot be read.
func (x *dwarfIndex) origin(r **dwarf.Reader, e *dwarf.Entry) *dwarf.Entry {
	ref, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
	if !ok {
		ref, ok = e.Val(dwarf.AttrSpecification).(dwarf.Offset)
	}
	if !ok {
		return nil
	}
	if *r == nil {
		*r = x.d.Reader()
	}
	(*r).Seek(ref)
	next, err := (*r).Next()
	if err != nil {
		return nil
	}
	return next
}

func (x *dwarfIndex) finish() {
	slices.SortFunc(x.funcs, func(a, b funcRange) int {
		if c := cmp.Compare(a.lo, b.lo); c != 0 {
			return c
		}
		return cmp.Compare(b.hi, a.hi) // the enclosing range first
	})
	slices.SortStableFunc(x.lines, func(a, b lineRow) int {
		if c := cmp.Compare(a.addr, b.addr); c != 0 {
			return c
		}
		// At one address the end of a sequence comes before rows that
		// start another, so the last row at an address is a live one.
		if a.endSeq != b.endSeq {
			if a.endSeq {
				return -1
			}
			return 1
		}
		return 0
	})
	x.d, x.nameIdx, x.nameStr, x.fileIdx, x.cuFiles = nil, nil, nil, nil, nil
}

// line returns the line-table row for a: the last row at the greatest
// address not above a, unless it ends a sequence; none for a nil index.
func (x *dwarfIndex) line(a uint64) (lineRow, bool) {
	if x == nil {
		return lineRow{}, false
	}
	i, found := slices.BinarySearchFunc(x.lines, a, func(r lineRow, a uint64) int { return cmp.Compare(r.addr, a) })
	if found {
		for i+1 < len(x.lines) && x.lines[i+1].addr == a {
			i++
		}
	} else {
		i--
	}
	if i < 0 || x.lines[i].endSeq {
		return lineRow{}, false
	}
	return x.lines[i], true
}

// function returns the innermost subprogram range containing a.
func (x *dwarfIndex) function(a uint64) *funcGroup {
	i, found := slices.BinarySearchFunc(x.funcs, a, func(f funcRange, a uint64) int { return cmp.Compare(f.lo, a) })
	if found {
		for i+1 < len(x.funcs) && x.funcs[i+1].lo == a {
			i++
		}
	} else {
		i--
	}
	for j := i; j >= 0 && j > i-8; j-- {
		if a >= x.funcs[j].lo && a < x.funcs[j].hi {
			return x.funcs[j].group
		}
	}
	return nil
}

// frames returns the source frames of a, innermost first, or nil when no
// subprogram contains a. nm interns names; slab provides the memory.
func (x *dwarfIndex) frames(a uint64, nm names, slab *frameSlab) []Frame {
	g := x.function(a)
	if g == nil {
		return nil
	}
	var chain []*inlRange // chain[d-1] is the inlined call at depth d
	for i := range g.inl {
		in := &g.inl[i]
		if a < in.lo || a >= in.hi {
			continue
		}
		d := int(in.depth)
		for len(chain) < d {
			chain = append(chain, nil)
		}
		chain[d-1] = in
	}
	// Keep the unbroken prefix of depths 1, 2, ...
	for i, in := range chain {
		if in == nil {
			chain = chain[:i]
			break
		}
	}
	frames := slab.take(len(chain) + 1)
	inner := Frame{Func: nm.get(x.groupName(g, a)), StartLine: int(g.decl)}
	if len(chain) > 0 {
		inner.Func = nm.get(x.names[chain[len(chain)-1].name])
		inner.StartLine = int(chain[len(chain)-1].decl)
	}
	if row, ok := x.line(a); ok {
		inner.File, inner.Line, inner.Column, inner.Discriminator = x.fileName(row.file), int(row.line), int(row.col), int(row.disc)
	}
	inner.Inlined = len(chain) > 0
	frames = append(frames, inner)
	for d := len(chain); d >= 1; d-- {
		in := chain[d-1]
		f := Frame{File: x.fileName(in.callFile), Line: int(in.callLine), Column: int(in.callCol), Discriminator: int(in.callDisc), Inlined: d > 1}
		if d > 1 {
			f.Func = nm.get(x.names[chain[d-2].name])
			f.StartLine = int(chain[d-2].decl)
		} else {
			f.Func = nm.get(x.groupName(g, a))
			f.StartLine = int(g.decl)
		}
		frames = append(frames, f)
	}
	return frames
}

func (x *dwarfIndex) fileName(i int32) string {
	if i < 0 || int(i) >= len(x.files) {
		return ""
	}
	return x.files[i]
}
