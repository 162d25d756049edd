package autofdo

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/hwprof/hwprof/ccmap"
	"github.com/hwprof/hwprof/profile"
)

// Counts are the two kinds of count one recording gives: Samples, where
// time went (sampled instructions, in samples: self weight over the
// recording's mean period), and Calls, how often each function was
// entered and each call site called each callee (the exact source's
// probe hits, LBR's estimates). Either may be nil.
type Counts struct {
	Samples *Profile
	Calls   *Profile
	// Partial says that Calls are of the first part of the run only (an
	// exact recording stopped early by --max-slowdown): counts of another
	// stretch of the program than its samples', whose shares between the
	// program's phases differ from the whole run's. Combine then takes
	// from them only the shares of each call site's callees.
	Partial bool
}

// FromProfile turns a profile loaded with its sampled instructions
// (engine's Instrs) into counts of the functions of object: the object's
// path as recorded or its base name; "" picks the program, the object
// named by the recorded command (else the one with the most samples
// outside shared libraries and the kernel). Samples and calls in other
// objects are left out and counted (Profile.OtherObjects).
func FromProfile(p *profile.Profile, object string) (Counts, error) {
	var c Counts
	obj, ok := pickObject(p, object)
	if !ok {
		return c, fmt.Errorf("no samples or calls in an object %q", object)
	}
	if len(p.Executed) > 0 {
		// An LBR recording: counts of executions and calls taken, in one
		// unit, as AutoFDO makes them of LBR.
		c.Samples = executed(p, obj)
		return c, nil
	}
	if len(p.Instrs) > 0 {
		c.Samples = samples(p, obj)
	}
	if p.HasCalls && p.Map.Totals().Calls > 0 {
		c.Calls = calls(p, obj)
	}
	return c, nil
}

// meanPeriod is the weight of one sample of p.
func meanPeriod(p *profile.Profile) float64 {
	t := p.Map.Totals()
	if t.Stacks == 0 || t.Samples == 0 {
		return 1
	}
	return float64(t.Samples) / float64(t.Stacks)
}

// samples folds p's sampled instructions into line counts in samples,
// nested by the inlined frames of each instruction, with call targets
// from the time sampled under each call site (a profile of time: the
// callees that took the most time through a site weigh most).
func samples(p *profile.Profile, obj string) *Profile {
	out := NewProfile()
	per := meanPeriod(p)
	for _, in := range p.Instrs {
		n := round(float64(in.Self) / per)
		if n == 0 {
			continue
		}
		f := &p.Funcs[in.Func]
		if f.Object != obj {
			out.OtherObjects += n
			continue
		}
		node, loc, ok := out.at(f, in.Frames)
		if !ok {
			out.NoLine += n
			continue
		}
		// A line's count is its most sampled instruction's (AutoFDO's
		// convention: every instruction of a line runs as often), times
		// the copies the compiler made of it (an unrolled loop's
		// instruction runs once every duplication factor iterations).
		n *= duplication(uint32(in.Frames[0].Discriminator))
		node.Body[loc] = max(node.Body[loc], n)
		node.Sampled += n
	}
	for _, e := range p.Map.Edges(ccmap.Total) {
		n := round(float64(e.Total) / per)
		out.edge(p, e.Site, e.Callee, obj, n)
	}
	entryHeads(out)
	return out
}

// executed folds the instruction executions and calls an LBR
// recording's branch stacks give into line counts (each line its most
// executed instruction's count, times its duplication factor), call
// targets and heads (the calls taken into each function).
func executed(p *profile.Profile, obj string) *Profile {
	out := NewProfile()
	for _, in := range p.Executed {
		f := &p.Funcs[in.Func]
		if f.Object != obj {
			out.OtherObjects += in.Self
			continue
		}
		node, loc, ok := out.at(f, in.Frames)
		if !ok {
			out.NoLine += in.Self
			continue
		}
		n := in.Self * duplication(uint32(in.Frames[0].Discriminator))
		node.Body[loc] = max(node.Body[loc], n)
		node.Sampled += n
	}
	for _, bc := range p.BranchCalls {
		callee := &p.Funcs[bc.Callee]
		if callee.Object == obj {
			out.fn(linkName(callee)).Head += bc.Site.Self
		}
		caller := &p.Funcs[bc.Site.Func]
		if caller.Object != obj || strings.HasPrefix(callee.Object, "[") {
			continue
		}
		if node, loc, ok := out.at(caller, bc.Site.Frames); ok {
			node.addTarget(loc, linkName(callee), bc.Site.Self)
		}
	}
	return out
}

// calls folds p's measured call edges into heads, call targets and the
// counts of the lines that call.
func calls(p *profile.Profile, obj string) *Profile {
	out := NewProfile()
	for _, e := range p.Map.Edges(ccmap.Calls) {
		if e.Calls == 0 {
			continue
		}
		out.edge(p, e.Site, e.Callee, obj, e.Calls)
		if callee := &p.Funcs[e.Callee]; callee.Object == obj {
			out.fn(linkName(callee)).Head += e.Calls // called from anywhere
		}
	}
	for _, f := range out.Funcs {
		callLines(f)
		entry := Loc{}
		f.Body[entry] = max(f.Body[entry], f.Head) // the declaration's line runs once a call
	}
	return out
}

// callLines makes each line that calls count at least its calls.
func callLines(f *Func) {
	for l, ts := range f.Targets {
		var n uint64
		for _, c := range ts {
			n += c
		}
		f.Body[l] = max(f.Body[l], n)
	}
	for _, in := range f.Inlined {
		for _, g := range in {
			callLines(g)
		}
	}
}

// entryHeads estimates, in a profile of samples, each function's head as
// LLVM would without one: the count of its first line.
func entryHeads(p *Profile) {
	for _, f := range p.Funcs {
		first, ok := Loc{}, false
		for l := range f.Body {
			if !ok || l.compare(first) < 0 {
				first, ok = l, true
			}
		}
		if ok {
			f.Head = f.Body[first]
		}
	}
}

// edge adds n calls (or samples) of callee at site, a call from the
// object profiled, and says whether it did. A callee in another object
// is named as the call target all the same: the compiler of the caller
// sees the call. Calls from other objects are no part of the profile.
func (out *Profile) edge(p *profile.Profile, site ccmap.CallSite, callee ccmap.FuncID, obj string, n uint64) bool {
	caller := &p.Funcs[site.Caller]
	if strings.HasPrefix(p.Funcs[callee].Object, "[") {
		return false // an interrupt or exception entered the kernel: no call
	}
	if n == 0 || caller.Object != obj {
		return false
	}
	s, ok := p.Sites[site]
	if !ok || len(s.Frames) == 0 {
		out.NoLine += n
		return false
	}
	node, loc, ok := out.at(caller, s.Frames)
	if !ok {
		out.NoLine += n
		return false
	}
	node.addTarget(loc, linkName(&p.Funcs[callee]), n)
	return true
}

// at returns the node of the profile that frames (innermost first, the
// last fn itself) fall in, and the position of the innermost frame's
// line there; false when a frame has no line or start line.
func (out *Profile) at(fn *profile.Func, frames []profile.SourceFrame) (*Func, Loc, bool) {
	if len(frames) == 0 {
		return nil, Loc{}, false
	}
	for _, fr := range frames {
		if fr.Line == 0 || fr.StartLine == 0 {
			return nil, Loc{}, false
		}
	}
	outer := frames[len(frames)-1]
	node := out.fn(canonical(cmpOr(outer.LinkName, linkName(fn))))
	for i := len(frames) - 1; i > 0; i-- {
		node = node.inlined(loc(frames[i]), canonical(cmpOr(frames[i-1].LinkName, frames[i-1].Name)))
	}
	return node, loc(frames[0]), true
}

// loc is a frame's position as LLVM computes it: its line's offset from
// the function's start line in 16 bits, and the base discriminator.
func loc(fr profile.SourceFrame) Loc {
	return Loc{Offset: uint32(fr.Line-fr.StartLine) & 0xffff, Disc: baseDiscriminator(uint32(fr.Discriminator))}
}

// baseDiscriminator decodes the base discriminator of an LLVM
// discriminator (DILocation::getBaseDiscriminator: its first component,
// prefix-encoded; the duplication factor and copy id follow).
func baseDiscriminator(d uint32) uint32 {
	if d&1 != 0 {
		return 0
	}
	d >>= 1
	if d&0x20 != 0 {
		return (d>>1)&0xfe0 | d&0x1f
	}
	return d & 0x1f
}

// duplication decodes the duplication factor of an LLVM discriminator
// (DILocation::getDuplicationFactorFromDiscriminator: its second
// component); 1 when it has none.
func duplication(d uint32) uint64 {
	if d&1 == 0 {
		if d&0x40 != 0 {
			d >>= 14
		} else {
			d >>= 7
		}
	} else {
		d >>= 1
	}
	return uint64(max(baseDiscriminator(d), 1))
}

// linkName is the name clang knows a function by: its symbol's (mangled)
// name, else its display name.
func linkName(f *profile.Func) string { return canonical(cmpOr(f.LinkName, f.Name)) }

// canonical strips the suffixes compilers add to a function's symbol
// when they clone or split it (".cold", ".part.N", ".constprop.N",
// ".isra.N", ".llvm.N"), as LLVM's FunctionSamples::getCanonicalFnName
// does before it looks a function up.
func canonical(name string) string {
	if i := strings.IndexByte(name, '@'); i > 0 {
		name = name[:i] // a versioned symbol: clock_gettime@@GLIBC_2.17
	}
	for _, suf := range []string{".cold", ".part.", ".constprop.", ".isra.", ".llvm."} {
		if i := strings.Index(name, suf); i > 0 {
			name = name[:i]
		}
	}
	return name
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// pickObject resolves --object: a recorded path, or a base name, or ""
// for the program; false when an object given has no samples or calls.
func pickObject(p *profile.Profile, object string) (string, bool) {
	given := object != ""
	weight := map[string]uint64{}
	for _, f := range p.Map.Functions(ccmap.Self) {
		weight[p.Funcs[f.Func].Object] += f.Self
	}
	for _, e := range p.Map.Edges(ccmap.Calls) {
		weight[p.Funcs[e.Site.Caller].Object] += e.Calls
	}
	for _, in := range p.Executed {
		weight[p.Funcs[in.Func].Object] += in.Self
	}
	if object == "" && len(p.Recording.Command) > 0 {
		object = filepath.Base(p.Recording.Command[0])
	}
	best, bestW := "", uint64(0)
	for o, w := range weight {
		if o == object || (object != "" && filepath.Base(o) == filepath.Base(object)) {
			return o, true
		}
		if o != "" && !strings.Contains(filepath.Base(o), ".so") && !strings.HasPrefix(o, "[") && (w > bestW || w == bestW && o < best) {
			best, bestW = o, w
		}
	}
	return best, !given
}
