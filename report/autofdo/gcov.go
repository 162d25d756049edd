package autofdo

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"io"
	"maps"
	"slices"
)

// The AutoFDO profile of GCC's -fauto-profile (gcc/auto-profile.cc,
// GCC 12): a gcov file (little-endian 32-bit words, 64-bit counters as two
// words) with a string table of function names, the function profiles,
// an empty module table and a working set.
const (
	gcovDataMagic        = 0x67636461 // "gcda"
	autoProfileVersion   = 2
	tagAFDOFileNames     = 0xaa000000
	tagAFDOFunction      = 0xac000000
	tagAFDOModule        = 0xae000000
	tagAFDOWorkingSet    = 0xaf000000
	histTypeIndirectCall = 3 // HIST_TYPE_INDIR_CALL in gcc/value-prof.h
)

// WriteGCOV writes p as GCC 12's AutoFDO profile (gcov format), the file
// gcc's -fauto-profile=FILE reads. GCC 12 keys a line by its offset from
// the function's declaration line alone (offset << 16): the counts of a
// line's discriminators are merged (the largest, as for a line's
// instructions), and so are the functions inlined at one call line.
func WriteGCOV(w io.Writer, p *Profile) error {
	funcs := sortedFuncs(p.Funcs)
	g := &gcovWriter{w: bufio.NewWriter(w), index: map[string]uint32{}}
	for _, f := range funcs {
		g.names(gccFunc(f))
	}
	g.u32(gcovDataMagic)
	g.u32(autoProfileVersion)
	g.u32(0)
	g.u32(tagAFDOFileNames)
	g.u32(0) // section lengths are skipped by the reader
	g.u32(uint32(len(g.strings)))
	for _, s := range g.strings {
		g.u32(uint32(len(s) + 1))
		g.w.WriteString(s)
		g.w.WriteByte(0)
	}
	g.u32(tagAFDOFunction)
	g.u32(0)
	g.u32(uint32(len(funcs)))
	for _, f := range funcs {
		g.u64(f.Head)
		g.instance(gccFunc(f))
	}
	g.u32(tagAFDOModule)
	g.u32(0)
	g.u32(0)
	g.u32(tagAFDOWorkingSet)
	g.u32(0)
	for range 128 {
		g.u32(0)
		g.u64(0)
	}
	return g.w.Flush()
}

// gccFunc merges f's discriminators, which GCC 12 does not read.
func gccFunc(f *Func) *Func {
	g := newFunc(f.Name)
	g.Head, g.Sampled = f.Head, f.Sampled
	for l, n := range f.Body {
		k := Loc{Offset: l.Offset}
		g.Body[k] = max(g.Body[k], n)
	}
	for l, ts := range f.Targets {
		for name, n := range ts {
			g.addTarget(Loc{Offset: l.Offset}, name, n)
		}
	}
	for l, in := range f.Inlined {
		for name, h := range in {
			g.inlined(Loc{Offset: l.Offset}, name).add(gccFunc(h))
		}
	}
	return g
}

type gcovWriter struct {
	w       *bufio.Writer
	strings []string
	index   map[string]uint32
}

func (g *gcovWriter) u32(v uint32) { g.w.Write(binary.LittleEndian.AppendUint32(nil, v)) }
func (g *gcovWriter) u64(v uint64) { g.u32(uint32(v)); g.u32(uint32(v >> 32)) }

func (g *gcovWriter) name(s string) uint32 {
	i, ok := g.index[s]
	if !ok {
		i = uint32(len(g.strings))
		g.index[s] = i
		g.strings = append(g.strings, s)
	}
	return i
}

// names adds every name of f to the string table.
func (g *gcovWriter) names(f *Func) {
	g.name(f.Name)
	for _, ts := range f.Targets {
		for _, t := range slices.Sorted(maps.Keys(ts)) {
			g.name(t)
		}
	}
	for _, l := range slices.SortedFunc(maps.Keys(f.Inlined), Loc.compare) {
		for _, h := range sortedFuncs(f.Inlined[l]) {
			g.names(h)
		}
	}
}

// instance writes one function instance: name, line counts with their
// call targets, then the functions inlined at its call sites, nested.
func (g *gcovWriter) instance(f *Func) {
	locs := slices.Collect(maps.Keys(f.Body))
	for l := range f.Targets {
		if _, ok := f.Body[l]; !ok {
			locs = append(locs, l)
		}
	}
	slices.SortFunc(locs, Loc.compare)
	var sites []Loc
	for _, l := range slices.SortedFunc(maps.Keys(f.Inlined), Loc.compare) {
		for range f.Inlined[l] {
			sites = append(sites, l)
		}
	}
	g.u32(g.index[f.Name])
	g.u32(uint32(len(locs)))
	g.u32(uint32(len(sites)))
	for _, l := range locs {
		ts := f.Targets[l]
		names := slices.SortedFunc(maps.Keys(ts), func(a, b string) int { return cmp.Or(cmp.Compare(ts[b], ts[a]), cmp.Compare(a, b)) })
		g.u32(l.Offset << 16)
		g.u32(uint32(len(names)))
		g.u64(f.Body[l])
		for _, t := range names {
			g.u32(histTypeIndirectCall)
			g.u64(uint64(g.index[t]))
			g.u64(ts[t])
		}
	}
	for _, l := range slices.SortedFunc(maps.Keys(f.Inlined), Loc.compare) {
		for _, h := range sortedFuncs(f.Inlined[l]) {
			g.u32(l.Offset << 16)
			g.instance(h)
		}
	}
}
