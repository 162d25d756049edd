package profile

import (
	"github.com/hwprof/hwprof/ccmap"
	"github.com/hwprof/hwprof/internal/pipeline"
)

// folder takes the address-level stacks and call edges the reader
// produces and folds them into a CC-Map (internal/pipeline's shape).
type folder interface {
	Add(frames []ccmap.Frame, weight uint64)
	AddEdge(ctx []ccmap.Frame, site ccmap.CallSite, callee ccmap.FuncID, weight uint64)
	Close() *ccmap.Map
}

// newFolder returns the folder for o: the worker pool of package
// pipeline (folding off the reader's path, redundancy skipping).
func newFolder(o LoadOptions) folder {
	return pipeline.New(pipeline.Options{Workers: o.Workers, DedupRatio: o.DedupRatio, Seed: o.Seed})
}

// directFolder folds on the caller's goroutine into one map (tests).
type directFolder struct{ m *ccmap.Map }

func (d *directFolder) Add(frames []ccmap.Frame, weight uint64) { d.m.AddStack(frames, weight) }

func (d *directFolder) AddEdge(ctx []ccmap.Frame, site ccmap.CallSite, callee ccmap.FuncID, weight uint64) {
	if ctx == nil {
		d.m.AddEdge(site, callee, weight)
		return
	}
	d.m.AddEdgeInContext(ctx, site, callee, weight)
}

func (d *directFolder) Close() *ccmap.Map { return d.m }

// project returns m with every FuncID replaced by f(id): the address-level
// map folded by function. It replays m: every context with sampled Self
// weight as a stack of that weight (so Total counts each function once per
// stack under the new ids too), every context's Calls as a call edge in its
// context, and each edge's calls that came without a context as a plain
// edge. Totals.Stacks then counts distinct stacks, not samples.
func project(m *ccmap.Map, f func(ccmap.FuncID) ccmap.FuncID) *ccmap.Map {
	out := ccmap.New()
	cct := m.CCT(ccmap.Self)
	var path []ccmap.CCTNode // root .. current node
	var frames []ccmap.Frame
	for _, n := range m.CCT(ccmap.Calls).Nodes {
		cct.Nodes = append(cct.Nodes, n) // calls-only contexts are absent from the Self view
	}
	seen := make(map[ccmap.ContextID]bool, len(cct.Nodes))
	for _, n := range cct.Nodes {
		path = path[:n.Depth]
		path = append(path, n)
		if n.Pruned || seen[n.Context] {
			continue
		}
		seen[n.Context] = true
		if n.Self > 0 {
			frames = frames[:0]
			for j := len(path) - 1; j >= 0; j-- {
				site := uint64(0)
				if j+1 < len(path) {
					site = path[j+1].Site
				}
				frames = append(frames, ccmap.Frame{Func: f(path[j].Func), Site: site})
			}
			out.AddStack(frames, n.Self)
		}
		if n.Calls > 0 && len(path) > 1 {
			frames = frames[:0]
			for j := len(path) - 2; j >= 0; j-- {
				frames = append(frames, ccmap.Frame{Func: f(path[j].Func), Site: path[j+1].Site})
			}
			p := path[len(path)-2]
			out.AddEdgeInContext(frames, ccmap.CallSite{Caller: f(p.Func), Addr: n.Site}, f(n.Func), n.Calls)
		}
	}
	for _, e := range m.Edges(ccmap.Calls) {
		var inCtx uint64
		for _, c := range m.EdgeContexts(e.Site, e.Callee, ccmap.Calls) {
			inCtx += c.Calls
		}
		if e.Calls > inCtx {
			out.AddEdge(ccmap.CallSite{Caller: f(e.Site.Caller), Addr: e.Site.Addr}, f(e.Callee), e.Calls-inCtx)
		}
	}
	return out
}
