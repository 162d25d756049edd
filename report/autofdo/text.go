package autofdo

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// WriteText writes p in LLVM's text sample profile format, the one
// `llvm-profdata merge --sample` reads: per function a line
// "name:total:head", then one line per body position, indented one space
// per level of inlining, "offset[.discriminator]: count [target:count]...",
// and per function inlined at a call site "offset[.discriminator]:
// name:total" with that function's lines below it. Functions come
// heaviest first; lines by offset and discriminator, so the output is
// the same for the same profile. Functions with no count are left out.
func WriteText(w io.Writer, p *Profile) error {
	bw := bufio.NewWriter(w)
	for _, f := range sortedFuncs(p.Funcs) {
		t := f.Total()
		if t == 0 && f.Head == 0 {
			continue
		}
		fmt.Fprintf(bw, "%s:%d:%d\n", f.Name, t, f.Head)
		writeBody(bw, f, 1)
	}
	return bw.Flush()
}

func writeBody(w *bufio.Writer, f *Func, depth int) {
	indent := strings.Repeat(" ", depth)
	locs := slices.Collect(maps.Keys(f.Body))
	for l := range f.Targets {
		if _, ok := f.Body[l]; !ok {
			locs = append(locs, l)
		}
	}
	slices.SortFunc(locs, Loc.compare)
	for _, l := range locs {
		fmt.Fprintf(w, "%s%s: %d", indent, l, f.Body[l])
		ts := f.Targets[l]
		names := slices.Collect(maps.Keys(ts))
		slices.SortFunc(names, func(a, b string) int { return cmp.Or(cmp.Compare(ts[b], ts[a]), cmp.Compare(a, b)) })
		for _, name := range names {
			if ts[name] > 0 {
				fmt.Fprintf(w, " %s:%d", name, ts[name])
			}
		}
		w.WriteByte('\n')
	}
	sites := slices.Collect(maps.Keys(f.Inlined))
	slices.SortFunc(sites, Loc.compare)
	for _, l := range sites {
		for _, g := range sortedFuncs(f.Inlined[l]) {
			t := g.Total()
			if t == 0 {
				continue
			}
			fmt.Fprintf(w, "%s%s: %s:%d\n", indent, l, g.Name, t)
			writeBody(w, g, depth+1)
		}
	}
}

func (l Loc) String() string {
	if l.Disc == 0 {
		return fmt.Sprint(l.Offset)
	}
	return fmt.Sprintf("%d.%d", l.Offset, l.Disc)
}
