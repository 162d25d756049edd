package symbolize

import (
	"bytes"
	"cmp"
	"debug/elf"
	"debug/gosym"
	"encoding/binary"
)

// goInlines reads the inline tree of a Go 1.20+ pclntab (the layout of
// runtime.pcHeader, runtime._func and runtime.inlinedCall in the Go
// sources), so that a Go binary without DWARF still gives inlined frames.
// It needs the go:func.* symbol (funcdata is relative to it), so binaries
// built with -ldflags=-s (no .symtab) give no inlined frames.
type goInlines struct {
	order       binary.ByteOrder
	minLC       uint64
	text        uint64 // moduledata.text: start of .text
	funcnametab []byte
	pctab       []byte
	functab     []byte // nfunc+1 pairs of uint32 (entryOff, funcOff), funcOff relative to functab
	nfunc       int
	gofunc      []byte // bytes from go:func.* to the end of its section
}

const (
	goPCDataInlTreeIndex = 2 // abi.PCDATA_InlTreeIndex
	goFuncDataInlTree    = 3 // abi.FUNCDATA_InlTree
	goFuncFixed          = 44
)

func newGoInlines(f *elf.File, pcln []byte) *goInlines {
	if len(pcln) < 8+8*8 || f.Class != elf.ELFCLASS64 {
		return nil
	}
	bo := f.ByteOrder
	if bo.Uint32(pcln) != 0xfffffff1 || pcln[7] != 8 { // Go120PCLnTabMagic, 8-byte pointers
		return nil
	}
	word := func(i int) uint64 { return bo.Uint64(pcln[8+8*i:]) }
	nfunc := word(0)
	nameOff, pctabOff, pclnOff := word(3), word(6), word(7)
	n := uint64(len(pcln))
	if nameOff > n || pctabOff > n || pclnOff > n || nfunc > n || pclnOff+(nfunc+1)*8 > n {
		return nil
	}
	g := &goInlines{
		order:       bo,
		minLC:       uint64(pcln[6]),
		funcnametab: pcln[nameOff:],
		pctab:       pcln[pctabOff:],
		functab:     pcln[pclnOff:],
		nfunc:       int(nfunc),
	}
	if s := f.Section(".text"); s != nil {
		g.text = s.Addr
	}
	syms, err := f.Symbols()
	if err != nil {
		return nil
	}
	for _, s := range syms {
		if s.Name != "go:func.*" {
			continue
		}
		for _, sec := range f.Sections {
			if sec.Type == elf.SHT_NOBITS || s.Value < sec.Addr || s.Value >= sec.Addr+sec.Size {
				continue
			}
			d, err := sec.Data()
			if err != nil {
				return nil
			}
			g.gofunc = d[s.Value-sec.Addr:]
		}
	}
	if g.gofunc == nil || g.minLC == 0 {
		return nil
	}
	return g
}

func (g *goInlines) u32(b []byte, off uint64) (uint32, bool) {
	if off+4 > uint64(len(b)) {
		return 0, false
	}
	return g.order.Uint32(b[off:]), true
}

// function returns the _func bytes and entry of the function at pc.
func (g *goInlines) function(pc uint64) ([]byte, uint64, bool) {
	if pc < g.text {
		return nil, 0, false
	}
	off := pc - g.text
	// The last entry whose entryOff is not above off.
	lo, hi := 0, g.nfunc
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		e, _ := g.u32(g.functab, uint64(m)*8)
		if cmp.Compare(uint64(e), off) <= 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	i := lo - 1
	if i < 0 {
		return nil, 0, false
	}
	entryOff, ok1 := g.u32(g.functab, uint64(i)*8)
	funcOff, ok2 := g.u32(g.functab, uint64(i)*8+4)
	if !ok1 || !ok2 || uint64(funcOff)+goFuncFixed > uint64(len(g.functab)) {
		return nil, 0, false
	}
	return g.functab[funcOff:], g.text + uint64(entryOff), true
}

// inlIndex returns the inline tree index at pc (-1: not inlined code).
func (g *goInlines) inlIndex(fn []byte, entry, pc uint64) int32 {
	npcdata, _ := g.u32(fn, 28)
	if npcdata <= goPCDataInlTreeIndex {
		return -1
	}
	off, ok := g.u32(fn, goFuncFixed+4*goPCDataInlTreeIndex)
	if !ok || off == 0 || uint64(off) >= uint64(len(g.pctab)) {
		return -1
	}
	return g.pcvalue(g.pctab[off:], entry, pc)
}

// pcvalue decodes a pc-value table (runtime.step) up to pc.
func (g *goInlines) pcvalue(p []byte, entry, pc uint64) int32 {
	val, cur := int32(-1), entry
	for first := true; len(p) > 0; first = false {
		uv, n := binary.Uvarint(p)
		if n <= 0 || uv == 0 && !first {
			return -1
		}
		p = p[n:]
		val += int32(-(uint32(uv) & 1) ^ (uint32(uv) >> 1))
		pcd, n := binary.Uvarint(p)
		if n <= 0 {
			return -1
		}
		p = p[n:]
		cur += pcd * g.minLC
		if pc < cur {
			return val
		}
	}
	return -1
}

// startLine returns the start line of the function whose _func is fn
// (runtime._func.startLine, Go 1.20+), 0 when unknown.
func (g *goInlines) startLine(fn []byte) int {
	l, ok := g.u32(fn, 36)
	if !ok || int32(l) < 0 {
		return 0
	}
	return int(int32(l))
}

// inlinedCall returns the name, parent pc offset and start line of inline
// tree entry ix (runtime.inlinedCall).
func (g *goInlines) inlinedCall(fn []byte, ix int32) (string, uint32, int, bool) {
	npcdata, _ := g.u32(fn, 28)
	nfuncdata := uint32(0)
	if len(fn) > 43 {
		nfuncdata = uint32(fn[43])
	}
	if nfuncdata <= goFuncDataInlTree {
		return "", 0, 0, false
	}
	tree, ok := g.u32(fn, goFuncFixed+4*uint64(npcdata)+4*goFuncDataInlTree)
	if !ok || tree == ^uint32(0) {
		return "", 0, 0, false
	}
	at := uint64(tree) + 16*uint64(ix)
	nameOff, ok1 := g.u32(g.gofunc, at+4)
	parent, ok2 := g.u32(g.gofunc, at+8)
	start, ok3 := g.u32(g.gofunc, at+12)
	if !ok1 || !ok2 || uint64(nameOff) >= uint64(len(g.funcnametab)) {
		return "", 0, 0, false
	}
	if !ok3 || int32(start) < 0 {
		start = 0
	}
	name := g.funcnametab[nameOff:]
	if i := bytes.IndexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	return string(name), parent, int(start), true
}

// frames returns the frames of pc, innermost first: one per inlined call
// (with the position of pc, then of each call site) and the physical
// function last.
func (g *goInlines) frames(t *gosym.Table, pc uint64, nm names, slab *frameSlab) []Frame {
	fn, entry, ok := g.function(pc)
	if !ok {
		return nil
	}
	file, line, phys := t.PCToLine(pc)
	if phys == nil {
		return nil
	}
	var out []Frame
	cur := pc
	for depth := 0; depth < 64; depth++ {
		ix := g.inlIndex(fn, entry, cur)
		if ix < 0 {
			break
		}
		name, parent, start, ok := g.inlinedCall(fn, ix)
		if !ok {
			break
		}
		if out == nil {
			out = slab.take(8)
		}
		out = append(out, Frame{Func: nm.get(name), File: file, Line: line, Inlined: true, StartLine: start})
		cur = entry + uint64(parent)
		file, line, _ = t.PCToLine(cur)
	}
	if out == nil {
		out = slab.take(1)
	}
	return append(out, Frame{Func: nm.get(phys.Name), File: file, Line: line, StartLine: g.startLine(fn)})
}
