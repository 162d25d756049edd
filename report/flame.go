package report

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/hwprof/hwprof/ccmap"
	"github.com/hwprof/hwprof/profile"
	"github.com/hwprof/hwprof/report/flamegraph"
)

// FlameStacks converts a profile to the input of package flamegraph: one
// Stack per calling context of the CC-Map that has weight, root first,
// with Time its sampled weight (Self: stacks ending in that context,
// weighted by their periods: nanoseconds for clock events), Samples the
// number of those stacks and Calls the calls into its leaf in that
// context. Contexts removed by ccmap's Prune
// are one "[pruned]" frame under their parent; calls the source counted
// on an edge without a context (lbr and calls sources) are a two-frame
// stack, caller then callee. So the stacks' Time adds up to the map's
// Totals().Samples and their Calls to Totals().Calls.
//
// A frame's kind comes from its object's path (objectKind); frames named
// "[broken]" or "[truncated]" stand for a broken stack and are kept, of
// kind Broken. With redundancy skipping (--dedup-ratio), Samples counts
// the stacks folded, not the samples skipped.
//
// A profile of sampled weight (Measure Sampled) with time off the CPU
// (record --off-cpu) adds one Stack per context of p.OffCPU with weight,
// its OffCPU the nanoseconds spent off the CPU there (stacks of preempted
// intervals end in a "[preempted]" frame, intervals without a stack are
// one "[off-CPU, no stack]" frame), so the stacks' OffCPU adds up to
// p.OffCPU's Totals().Samples; Meta.HasWall says that the on-CPU samples
// are of a clock event (nanoseconds, as the time off the CPU). A profile
// report.Weighted made has its measure in Map already, and no OffCPU.
func FlameStacks(p *profile.Profile) (flamegraph.Meta, []flamegraph.Stack) {
	t := p.Map.Totals()
	meta := flamegraph.Meta{
		Command:   strings.Join(p.Recording.Command, " "),
		Source:    p.Recording.Source.String(),
		Samples:   p.Recording.Samples,
		Lost:      p.Recording.Lost,
		Throttled: p.Recording.Throttled,
		HasTime:   t.Samples > 0,
		HasCalls:  p.HasCalls && t.Calls > 0,
		Warnings:  p.Warnings,
	}
	fb := frameBuilder{p: p}
	type nodeKey struct {
		ctx    ccmap.ContextID
		parent ccmap.ContextID // of a pruned node
	}
	done := map[nodeKey]bool{}
	var stacks []flamegraph.Stack
	for _, by := range []ccmap.Measure{ccmap.Self, ccmap.Calls} {
		cct := p.Map.CCT(by)
		for i := range cct.Nodes {
			n := &cct.Nodes[i]
			if n.Self == 0 && n.Calls == 0 {
				continue
			}
			k := nodeKey{ctx: n.Context, parent: ccmap.NoContext}
			if n.Pruned && n.Parent >= 0 {
				k.parent = cct.Nodes[n.Parent].Context
			}
			if done[k] {
				continue
			}
			done[k] = true
			stacks = append(stacks, flamegraph.Stack{Frames: fb.path(&cct, i), Time: float64(n.Self), Samples: n.Stacks, Calls: float64(n.Calls)})
		}
	}
	if t.ContextCalls < t.Calls {
		stacks = appendEdgeCalls(stacks, p, &fb)
	}
	if off := offCPUMap(p); off != nil {
		meta.HasOffCPU = true
		meta.HasWall = p.Recording.OffCPU.OnCPUTime
		stacks = appendOffCPU(stacks, off, &fb)
	}
	return meta, stacks
}

// offCPUMap is p's time off the CPU for a flame graph: p.OffCPU when p is
// of sampled weight and spent time off the CPU, else nil.
func offCPUMap(p *profile.Profile) *ccmap.Map {
	if p.Measure != profile.Sampled || p.OffCPU == nil || p.OffCPU.Totals().Samples == 0 {
		return nil
	}
	return p.OffCPU
}

// appendOffCPU appends a stack for each context of off with time off the
// CPU, weighted by it (Stack.OffCPU).
func appendOffCPU(stacks []flamegraph.Stack, off *ccmap.Map, fb *frameBuilder) []flamegraph.Stack {
	cct := off.CCT(ccmap.Self)
	for i := range cct.Nodes {
		if n := &cct.Nodes[i]; n.Self > 0 {
			stacks = append(stacks, flamegraph.Stack{Frames: fb.path(&cct, i), OffCPU: float64(n.Self)})
		}
	}
	return stacks
}

// appendEdgeCalls appends a caller-callee stack for the calls of each
// edge that came without a context.
func appendEdgeCalls(stacks []flamegraph.Stack, p *profile.Profile, fb *frameBuilder) []flamegraph.Stack {
	for _, e := range p.Map.Edges(ccmap.Calls) {
		calls := e.Calls
		for _, c := range p.Map.EdgeContexts(e.Site, e.Callee, ccmap.Calls) {
			calls -= min(calls, c.Calls)
		}
		if calls == 0 {
			continue
		}
		stacks = append(stacks, flamegraph.Stack{
			Frames: []flamegraph.Frame{fb.frame(e.Site.Caller), fb.frame(e.Callee)},
			Calls:  float64(calls),
		})
	}
	return stacks
}

// frameBuilder makes flame-graph frames of a profile's functions, each
// once.
type frameBuilder struct {
	p      *profile.Profile
	frames map[ccmap.FuncID]flamegraph.Frame
}

func (b *frameBuilder) frame(id ccmap.FuncID) flamegraph.Frame {
	if f, ok := b.frames[id]; ok {
		return f
	}
	f := flamegraph.Frame{Name: b.p.FuncName(id)}
	if int(id) < len(b.p.Funcs) {
		f.Object = b.p.Funcs[id].Object
	}
	f.Kind = frameKind(f.Name, f.Object)
	if b.frames == nil {
		b.frames = map[ccmap.FuncID]flamegraph.Frame{}
	}
	b.frames[id] = f
	return f
}

// path is the frames of node i of t, root first; a pruned node is a
// "[pruned]" frame.
func (b *frameBuilder) path(t *ccmap.CCT, i int) []flamegraph.Frame {
	n := 0
	for j := i; j >= 0; j = t.Nodes[j].Parent {
		n++
	}
	out := make([]flamegraph.Frame, n)
	for j := i; j >= 0; j = t.Nodes[j].Parent {
		n--
		if t.Nodes[j].Pruned {
			out[n] = flamegraph.Frame{Name: "[pruned]", Kind: flamegraph.Unknown}
		} else {
			out[n] = b.frame(t.Nodes[j].Func)
		}
	}
	return out
}

// frameKind is the kind of a frame of function name in object obj:
// Broken for the "[broken]" and "[truncated]" frames of a broken stack;
// from the object's path otherwise: the kernel ("[kernel.kallsyms]",
// "[kernel...]", modules *.ko), JIT code (a perf map /tmp/perf-PID.map,
// a jitdump file jit-PID.dump,
// anonymous memory "//anon", "[anon...]", "memfd:"), a shared library
// (*.so, *.so.N, and the vdso), the program (any other file), unknown
// (no object).
func frameKind(name, obj string) flamegraph.Kind {
	base := filepath.Base(obj)
	switch {
	case name == "[broken]" || name == "[truncated]" || name == profile.BrokenStack:
		return flamegraph.Broken
	case obj == "":
		return flamegraph.Unknown
	case strings.HasPrefix(obj, "[kernel") || strings.HasSuffix(obj, ".ko") || strings.Contains(base, ".ko."):
		return flamegraph.Kernel
	case strings.HasPrefix(obj, "/tmp/perf-") || strings.HasPrefix(obj, "//anon") || strings.HasPrefix(obj, "[anon") ||
		strings.HasPrefix(obj, "memfd:") || strings.HasPrefix(obj, "/memfd:") || isJITDump(base):
		return flamegraph.JIT
	case obj == "[vdso]" || obj == "[vsyscall]" || strings.HasSuffix(base, ".so") || strings.Contains(base, ".so."):
		return flamegraph.Library
	case strings.HasPrefix(obj, "["):
		return flamegraph.Unknown
	}
	return flamegraph.Program
}

// FlameWeight is the weight a flame graph or folded stacks of p show
// first: calls when w asks for them and p counts calls; off-CPU time when
// w asks for it and p has some (FlameStacks); wall time when w asks for
// it and p's on-CPU samples are of a clock event too; else time when p
// has sampled stacks, else calls, else off-CPU time.
func FlameWeight(p *profile.Profile, w flamegraph.Weight) flamegraph.Weight {
	t := p.Map.Totals()
	off := offCPUMap(p) != nil
	switch {
	case w == flamegraph.WeightCalls && p.HasCalls && t.Calls > 0:
		return flamegraph.WeightCalls
	case w == flamegraph.WeightOffCPU && off:
		return flamegraph.WeightOffCPU
	case w == flamegraph.WeightWall && off && p.Recording.OffCPU.OnCPUTime:
		return flamegraph.WeightWall
	case t.Samples > 0:
		return flamegraph.WeightTime
	case p.HasCalls:
		return flamegraph.WeightCalls
	case off:
		return flamegraph.WeightOffCPU
	}
	return flamegraph.WeightTime
}

// MeasureWeight is the flame-graph weight of measure m: WeightOffCPU for
// profile.OffCPUTime, WeightWall for profile.WallTime, w (time or calls)
// for the sampled weight. A flame graph of the whole profile (not
// Weighted) by that weight opens on m, and offers the other weights.
func MeasureWeight(m profile.Measure, w flamegraph.Weight) flamegraph.Weight {
	switch m {
	case profile.OffCPUTime:
		return flamegraph.WeightOffCPU
	case profile.WallTime:
		return flamegraph.WeightWall
	}
	return w
}

// A NoWeightError says that a profile has none of the weight asked for,
// and why.
type NoWeightError struct {
	Weight flamegraph.Weight // the weight asked for
	Source profile.Source    // the recording's source
}

func (e *NoWeightError) Error() string {
	if e.Weight == flamegraph.WeightCalls {
		return fmt.Sprintf("the recording has no call counts (its source, %s, samples time; only lbr, calls and exact recordings count calls)", e.Source)
	}
	return fmt.Sprintf("the recording has no sampled time (its source, %s, counts calls only)", e.Source)
}

// CheckWeight returns a *NoWeightError when p has none of weight w: calls
// need a source that counts them (lbr, calls, exact), time needs sampled
// stacks (every source but exact). FlameWeight falls back to the other
// weight; a caller whose user asked for w checks it first.
func CheckWeight(p *profile.Profile, w flamegraph.Weight) error {
	t := p.Map.Totals()
	if w == flamegraph.WeightCalls && !(p.HasCalls && t.Calls > 0) || w == flamegraph.WeightTime && t.Samples == 0 {
		return &NoWeightError{Weight: w, Source: p.Recording.Source}
	}
	return nil
}

// Flamegraph writes p as a flame-graph page (flamegraph.WriteHTML).
func Flamegraph(w io.Writer, p *profile.Profile, o flamegraph.Options) error {
	meta, stacks := FlameStacks(p)
	if meta.Title == "" && p.Recording.File != "" {
		meta.Title = "hwprof flame graph: " + filepath.Base(p.Recording.File)
	}
	o.Weight = FlameWeight(p, o.Weight)
	if err := flamegraph.WriteHTML(w, meta, stacks, o); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// Folded writes p as folded stacks (flamegraph.WriteFolded) by weight w
// (FlameWeight decides which: time, calls, off-CPU or wall time).
func Folded(w io.Writer, p *profile.Profile, weight flamegraph.Weight) error {
	_, stacks := FlameStacks(p)
	if err := flamegraph.WriteFolded(w, stacks, FlameWeight(p, weight)); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// isJITDump says whether a file's base name is a jitdump file's,
// jit-PID.dump.
func isJITDump(base string) bool {
	pid, ok := strings.CutPrefix(base, "jit-")
	pid, ok2 := strings.CutSuffix(pid, ".dump")
	return ok && ok2 && pid != "" && strings.Trim(pid, "0123456789") == ""
}
