package pipeline

import (
	"math/rand/v2"

	"github.com/hwprof/hwprof/ccmap"
)

// program is a synthetic program tree: every function has a few call
// sites, some calling one of several callees, and calls may recurse.
type program struct {
	sites [][]progSite
}

type progSite struct {
	addr    uint64
	callees []ccmap.FuncID
}

func newProgram(r *rand.Rand, nfuncs int) *program {
	p := &program{sites: make([][]progSite, nfuncs)}
	for f := range p.sites {
		for s := range 1 + r.IntN(3) {
			ps := progSite{addr: uint64(f)<<12 | uint64(s+1)*0x10}
			nc := 1
			if r.IntN(4) == 0 {
				nc = 2 + r.IntN(2)
			}
			for range nc {
				ps.callees = append(ps.callees, ccmap.FuncID(1+r.IntN(nfuncs-1)))
			}
			p.sites[f] = append(p.sites[f], ps)
		}
	}
	return p
}

// stack draws a stack of depth frames from function 0, innermost first.
func (p *program) stack(r *rand.Rand, depth int) []ccmap.Frame {
	fr := make([]ccmap.Frame, depth)
	f := ccmap.FuncID(0)
	for i := depth - 1; i >= 0; i-- {
		fr[i].Func = f
		if i == 0 {
			break
		}
		s := p.sites[f][r.IntN(len(p.sites[f]))]
		fr[i].Site = s.addr
		f = s.callees[r.IntN(len(s.callees))]
	}
	return fr
}

// event is one call of the producer API, recorded so that the same input
// can be folded directly and through the pipeline.
type event struct {
	edge   bool
	frames []ccmap.Frame // the stack, or the edge's context (nil: none)
	site   ccmap.CallSite
	callee ccmap.FuncID
	weight uint64
}

// events draws n events: stacks of 1 to 20 frames drawn Zipf-like from a
// set of distinct stacks (so they repeat), and call edges with no context,
// an empty context, the caller's own context, or a context whose caller
// frame is missing (as at an entry probe).
func events(seed uint64, n int) []event {
	r := rand.New(rand.NewPCG(seed, 7))
	p := newProgram(r, 40)
	distinct := make([][]ccmap.Frame, 300)
	for i := range distinct {
		distinct[i] = p.stack(r, 1+r.IntN(20))
	}
	z := rand.NewZipf(r, 1.2, 1, uint64(len(distinct)-1))
	evs := make([]event, 0, n)
	for range n {
		st := distinct[z.Uint64()]
		w := 1 + uint64(r.IntN(5000))
		if r.IntN(3) > 0 || len(st) < 2 {
			evs = append(evs, event{frames: st, weight: w})
			continue
		}
		e := event{edge: true, site: ccmap.CallSite{Caller: st[1].Func, Addr: st[1].Site}, callee: st[0].Func, weight: w}
		switch r.IntN(4) {
		case 0: // no context
		case 1:
			e.frames = []ccmap.Frame{}
		case 2:
			e.frames = st[1:]
		case 3:
			if len(st) > 2 {
				e.frames = st[2:]
			}
		}
		evs = append(evs, e)
	}
	return evs
}

// direct folds evs into one map on this goroutine: the reference.
func direct(evs []event) *ccmap.Map {
	m := ccmap.New()
	for _, e := range evs {
		if !e.edge {
			m.AddStack(e.frames, e.weight)
		} else if e.frames == nil {
			m.AddEdge(e.site, e.callee, e.weight)
		} else {
			m.AddEdgeInContext(e.frames, e.site, e.callee, e.weight)
		}
	}
	return m
}

// feed hands evs to p.
func feed(p *Folder, evs []event) {
	for _, e := range evs {
		if e.edge {
			p.AddEdge(e.frames, e.site, e.callee, e.weight)
		} else {
			p.Add(e.frames, e.weight)
		}
	}
}
