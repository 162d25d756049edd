package symbolize

import (
	"cmp"
	"slices"

	"github.com/hwprof/hwprof/addrspace"
)

// textSym is one entry of a kallsyms or perf map table.
type textSym struct {
	start, size uint64 // size 0: up to the next entry
	name        string
	module      string
}

// textTable is a sorted table of runtime-address symbols.
type textTable struct {
	syms []textSym
}

// sort orders the entries by start; at one start the entry added last wins.
func (t *textTable) sort() {
	byStart := func(a, b textSym) int { return cmp.Compare(a.start, b.start) }
	if !slices.IsSortedFunc(t.syms, byStart) { // kallsyms mostly is
		slices.SortStableFunc(t.syms, byStart)
	}
	out := t.syms[:0]
	for _, s := range t.syms {
		if n := len(out); n > 0 && out[n-1].start == s.start {
			out[n-1] = s
			continue
		}
		out = append(out, s)
	}
	t.syms = out
}

func (t *textTable) lookup(a uint64) int {
	i, found := slices.BinarySearchFunc(t.syms, a, func(s textSym, a uint64) int { return cmp.Compare(s.start, a) })
	if !found {
		i--
	}
	for j := i; j >= 0 && j > i-4; j-- {
		s := t.syms[j]
		end := s.start + s.size
		if s.size == 0 {
			if j+1 >= len(t.syms) {
				if j == i {
					return j
				}
				continue
			}
			end = t.syms[j+1].start
		}
		if a < end {
			return j
		}
	}
	return -1
}

func (t *textTable) symbolize(addrs []addrspace.ObjAddr) []Location {
	nm := names{}
	syms := map[int]*Symbol{}
	out := make([]Location, len(addrs))
	for k, a := range addrs {
		out[k].Addr = a
		i := t.lookup(uint64(a))
		if i < 0 {
			continue
		}
		s := syms[i]
		if s == nil {
			e := t.syms[i]
			s = &Symbol{Name: nm.get(e.name), Start: addrspace.ObjAddr(e.start), Size: e.size}
			syms[i] = s
		}
		out[k].Symbol = s
		out[k].Frames = []Frame{{Func: s.Name}}
	}
	return out
}
