package ccmap

import (
	"math/rand/v2"
)

// program is a synthetic call graph: every function has a few call sites,
// each calling one or a few callees (so some sites are polymorphic).
type program struct {
	sites [][]progSite // per function
}

type progSite struct {
	addr    uint64
	callees []FuncID
}

func newProgram(r *rand.Rand, nfuncs int) *program {
	p := &program{sites: make([][]progSite, nfuncs)}
	for f := range p.sites {
		ns := 1 + r.IntN(4)
		for s := range ns {
			ps := progSite{addr: uint64(f)<<12 | uint64(s+1)*0x10}
			nc := 1
			if r.IntN(5) == 0 {
				nc = 2 + r.IntN(3)
			}
			for range nc {
				ps.callees = append(ps.callees, FuncID(1+r.IntN(nfuncs-1)))
			}
			p.sites[f] = append(p.sites[f], ps)
		}
	}
	return p
}

// stack draws one stack of depth frames, outermost function 0 ("main"),
// returned innermost first.
func (p *program) stack(r *rand.Rand, depth int) []Frame {
	fr := make([]Frame, depth)
	f := FuncID(0)
	for i := depth - 1; i >= 0; i-- {
		fr[i].Func = f
		if i == 0 {
			break
		}
		ss := p.sites[f]
		s := ss[r.IntN(len(ss))]
		fr[i].Site = s.addr
		f = s.callees[r.IntN(len(s.callees))]
	}
	return fr
}

// zipfStacks returns nstacks distinct-ish stacks of depth frames and a
// sequence of nsamples indexes into them drawn Zipf-like (s = 1.1).
func zipfStacks(seed uint64, nfuncs, nstacks, depth, nsamples int) ([][]Frame, []int) {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	p := newProgram(r, nfuncs)
	stacks := make([][]Frame, nstacks)
	for i := range stacks {
		stacks[i] = p.stack(r, depth)
	}
	z := rand.NewZipf(r, 1.1, 1, uint64(nstacks-1))
	seq := make([]int, nsamples)
	for i := range seq {
		seq[i] = int(z.Uint64())
	}
	return stacks, seq
}
