package autofdo

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/hwprof/hwprof/profile"
)

// BOLTStats says what WriteBOLT wrote: the records (branches, or sampled
// addresses without LBR), the functions they fall in, whether the
// profile is of branches (LBR), and the counts left out as outside the
// object profiled or outside any function symbol.
type BOLTStats struct {
	Records, Funcs int
	LBR            bool
	Left           uint64
}

// WriteBOLT writes BOLT's own profile (.fdata), what `llvm-bolt -data=`
// reads, of the functions of object (as FromProfile picks it) in p, a
// profile loaded with its sampled instructions (engine's Instrs).
//
// Of an LBR recording (p.Branches), one line per branch:
//
//	1 <function> <hex offset> 1 <function> <hex offset> <mispredicted> <count>
//
// the taken branches from or into the object's functions (an end outside
// them is "0 [unknown] 0"), and the conditional branches run through
// without being taken, from the branch to the next instruction, as
// perf2bolt's aggregator writes the fall-throughs of each range it
// finds between two branch-stack entries. Of any other recording, BOLT's
// "no_lbr" profile: a first line "no_lbr" and the events' names, then
// one line per sampled instruction, "1 <function> <hex offset>
// <samples>". Functions are named by their symbols, a local one (a C
// static function) as BOLT names it, "name/N" with N its number among
// the object's local symbols of that name.
func WriteBOLT(w io.Writer, p *profile.Profile, object string) (BOLTStats, error) {
	var st BOLTStats
	obj, ok := pickObject(p, object)
	if !ok {
		return st, fmt.Errorf("no samples or calls in an object %q", object)
	}
	in := func(id int) bool {
		f := &p.Funcs[id]
		return f.Object == obj && f.LinkName != "" && f.Start != 0
	}
	loc := func(id int, addr uint64) string {
		if !in(id) {
			return "0 [unknown] 0"
		}
		f := &p.Funcs[id]
		return "1 " + boltName(f) + " " + strconv.FormatUint(addr-f.Start, 16)
	}
	funcs := map[string]bool{}
	lines := map[string][2]uint64{} // "from to": mispredicted, count
	if len(p.Branches) > 0 {
		st.LBR = true
		for _, b := range p.Branches {
			if !in(int(b.From)) && !in(int(b.To)) {
				st.Left += b.Count
				continue
			}
			for _, id := range []int{int(b.From), int(b.To)} {
				if in(id) {
					funcs[boltName(&p.Funcs[id])] = true
				}
			}
			k := loc(int(b.From), b.FromAddr) + " " + loc(int(b.To), b.ToAddr)
			c := lines[k]
			lines[k] = [2]uint64{c[0] + b.Mispreds, c[1] + b.Count}
		}
	} else {
		per := meanPeriod(p)
		for _, s := range p.Instrs {
			n := round(float64(s.Self) / per)
			if n == 0 {
				continue
			}
			if !in(int(s.Func)) {
				st.Left += n
				continue
			}
			funcs[boltName(&p.Funcs[s.Func])] = true
			k := loc(int(s.Func), s.Addr)
			c := lines[k]
			lines[k] = [2]uint64{0, c[1] + n}
		}
	}
	if len(lines) == 0 {
		return st, fmt.Errorf("no branches or samples in the functions of %s", obj)
	}
	st.Records, st.Funcs = len(lines), len(funcs)
	bw := bufio.NewWriter(w)
	if !st.LBR {
		var names []string
		for _, e := range p.Recording.Events {
			names = append(names, strings.ReplaceAll(e.Name, " ", "_"))
		}
		fmt.Fprintln(bw, strings.Join(append([]string{"no_lbr"}, names...), " "))
	}
	keys := slices.Collect(maps.Keys(lines))
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(lines[b][1], lines[a][1]), cmp.Compare(a, b)) })
	for _, k := range keys {
		if st.LBR {
			fmt.Fprintf(bw, "%s %d %d\n", k, lines[k][0], lines[k][1])
		} else {
			fmt.Fprintf(bw, "%s %d\n", k, lines[k][1])
		}
	}
	return st, bw.Flush()
}

// boltName is the name BOLT gives a function: its symbol's, and for a
// local symbol "/N", its number among the local symbols of that name
// (BOLT's NameResolver counts them in address order); a PLT entry
// "name@PLT". A space, which would end the field, is escaped as BOLT
// escapes names.
func boltName(f *profile.Func) string {
	name := strings.ReplaceAll(f.LinkName, " ", `\ `)
	if base, ok := strings.CutSuffix(name, "@plt"); ok {
		name = base + "@PLT"
	}
	if f.Local > 0 {
		name += "/" + strconv.Itoa(f.Local)
	}
	return name
}
