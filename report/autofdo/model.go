package autofdo

import (
	"cmp"
	"maps"
	"slices"
)

// Loc is a position in a function as LLVM's sample profiles give it: the
// line's offset from the line the function is declared on (the low 16
// bits, as LLVM computes it), and the line's base discriminator.
type Loc struct {
	Offset uint32
	Disc   uint32
}

func (a Loc) compare(b Loc) int {
	return cmp.Or(cmp.Compare(a.Offset, b.Offset), cmp.Compare(a.Disc, b.Disc))
}

// Func is the profile of one function, or of one function inlined at a
// call site of another.
type Func struct {
	Name string // linkage name (mangled), as clang names the function
	// Head is how often the function was entered (0 when unknown: LLVM
	// then takes the count of its first line); inlined functions have
	// none in the text format.
	Head uint64
	// Body counts each line's executions (or samples, for a profile of
	// time); Targets the calls from a line to each callee, by name.
	Body    map[Loc]uint64
	Targets map[Loc]map[string]uint64
	// Inlined are the functions inlined at each call site, by name.
	Inlined map[Loc]map[string]*Func
	// Sampled is the sum of the counts of the sampled instructions of
	// the function's own lines (each line counts its most sampled one);
	// 0 in a profile of calls.
	Sampled uint64
}

func newFunc(name string) *Func {
	return &Func{Name: name, Body: map[Loc]uint64{}, Targets: map[Loc]map[string]uint64{}, Inlined: map[Loc]map[string]*Func{}}
}

// Total is the function's total count: its lines' and those of the
// functions inlined into it.
func (f *Func) Total() uint64 {
	var t uint64
	for _, n := range f.Body {
		t += n
	}
	t = max(t, f.Sampled)
	for _, in := range f.Inlined {
		for _, g := range in {
			t += g.Total()
		}
	}
	return t
}

// inlined returns the function name inlined at loc, made when new.
func (f *Func) inlined(loc Loc, name string) *Func {
	m := f.Inlined[loc]
	if m == nil {
		m = map[string]*Func{}
		f.Inlined[loc] = m
	}
	g := m[name]
	if g == nil {
		g = newFunc(name)
		m[name] = g
	}
	return g
}

func (f *Func) addTarget(loc Loc, name string, n uint64) {
	m := f.Targets[loc]
	if m == nil {
		m = map[string]uint64{}
		f.Targets[loc] = m
	}
	m[name] += n
}

// add adds g's counts to f's.
func (f *Func) add(g *Func) {
	f.Head += g.Head
	f.Sampled += g.Sampled
	for l, n := range g.Body {
		f.Body[l] += n
	}
	for l, ts := range g.Targets {
		for name, n := range ts {
			f.addTarget(l, name, n)
		}
	}
	for l, in := range g.Inlined {
		for name, h := range in {
			f.inlined(l, name).add(h)
		}
	}
}

// scaled returns f with every count times s, rounded.
func (f *Func) scaled(s float64) *Func {
	g := newFunc(f.Name)
	g.Head = round(float64(f.Head) * s)
	g.Sampled = round(float64(f.Sampled) * s)
	for l, n := range f.Body {
		g.Body[l] = round(float64(n) * s)
	}
	for l, ts := range f.Targets {
		for name, n := range ts {
			g.addTarget(l, name, round(float64(n)*s))
		}
	}
	for l, in := range f.Inlined {
		for name, h := range in {
			g.inlined(l, name).add(h.scaled(s))
		}
	}
	return g
}

func round(x float64) uint64 { return uint64(x + 0.5) }

// Profile is a sample profile: its functions (those that were not
// inlined everywhere), by name.
type Profile struct {
	Funcs map[string]*Func
	// Dropped counts the samples and calls left out because they were in
	// other objects than the one profiled, or had no source line.
	OtherObjects, NoLine uint64
}

// NewProfile returns an empty profile.
func NewProfile() *Profile { return &Profile{Funcs: map[string]*Func{}} }

func (p *Profile) fn(name string) *Func {
	f := p.Funcs[name]
	if f == nil {
		f = newFunc(name)
		p.Funcs[name] = f
	}
	return f
}

// Add adds q's counts to p's (profiles of the same kind of count: two
// timer recordings, two exact ones).
func (p *Profile) Add(q *Profile) {
	for name, f := range q.Funcs {
		p.fn(name).add(f)
	}
	p.OtherObjects += q.OtherObjects
	p.NoLine += q.NoLine
}

// sortedFuncs returns p's functions by total count, heaviest first, then
// by name.
func sortedFuncs(fs map[string]*Func) []*Func {
	out := slices.Collect(maps.Values(fs))
	tot := make(map[*Func]uint64, len(out))
	for _, f := range out {
		tot[f] = f.Total()
	}
	slices.SortFunc(out, func(a, b *Func) int {
		return cmp.Or(cmp.Compare(tot[b], tot[a]), cmp.Compare(a.Name, b.Name))
	})
	return out
}
