package report

import (
	"fmt"
	"io"
	"math"
	"math/bits"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hwprof/hwprof/ccmap"
	"github.com/hwprof/hwprof/profile"
	"github.com/hwprof/hwprof/report/pprof"
)

// PProfProfile converts a profile to the input of package pprof, as
// FlameStacks does for the flame graph:
//
//   - one Mapping per object with functions, with its build-id (the GNU
//     one the recording gives, else the Go build-id the loader read). A
//     location's address is its object address (the address addr2line
//     takes), and a mapping's Offset is the object address of its Start,
//     so that address - Start + Offset, what pprof's merge keys a
//     location by, is the object address on every machine;
//   - one Function per function of the profile, with its file and start
//     line when the profile was loaded with source positions
//     (engine.LoadOptions.SiteLines), and one per function inlined at a
//     call site that has no code of its own in the profile;
//   - one Location per call site (the call instruction, with its inlined
//     frames as lines, innermost first) and one per function for the
//     samples that ended in it (its entry address, at its start line):
//     the profile is folded by function, so a leaf has no address of its
//     own; but when the profile says where its self weight was sampled in
//     code inlined into it (profile.Profile.Leaves), one Location per such
//     chain of inlined frames (its heaviest instruction's address, its
//     frames as lines, innermost first), as runtime/pprof gives inlined
//     leaves, and each context's self weight of the function is split
//     over its chains in the function's proportions;
//   - one Sample per calling context with self weight (ccmap's CCT by
//     Self; a context Prune removed is a "[pruned]" frame), whose TimeNS
//     is that weight when the recording's events are clocks (cpu-clock,
//     task-clock: nanoseconds), and whose Samples is the weight over the
//     recording's mean period (exact for a fixed period); for other events the weight is
//     Sample.Weight, of sample type EVENT/count (events/count when the
//     recording has several events);
//   - one Edge per call edge with calls when the source counts them, its
//     caller the innermost function at the call site (package pprof
//     writes it as a sample whose calls/count and samples/count are its
//     calls);
//   - the recording's facts as comments.
func PProfProfile(p *profile.Profile) *pprof.Profile {
	c := newPProfConv(p)
	t := p.Map.Totals()
	c.out.HasTime = t.Samples > 0 && clockEvents(p.Recording.Events)
	if t.Samples > 0 && !c.out.HasTime {
		c.out.WeightType = weightType(p.Recording.Events)
	}
	c.out.HasCalls = p.HasCalls && t.Calls > 0
	c.samples(t)
	if p.OffCPU != nil && p.Recording.OffCPU.Recorded {
		c.out.HasOffCPU = true
		c.offSamples()
	}
	if c.out.HasCalls {
		c.edges()
	}
	c.mappings()
	c.header(t)
	return c.out
}

// WritePProf writes p as a gzipped pprof profile (pprof.Write).
func WritePProf(w io.Writer, p *profile.Profile, o pprof.Options) error {
	if err := pprof.Write(w, PProfProfile(p), o); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// clockEvents says whether every event is a clock (cpu-clock,
// task-clock, with or without modifiers), whose periods are nanoseconds.
func clockEvents(evs []profile.Event) bool {
	evs = onCPUEvents(evs)
	for _, e := range evs {
		name, _, _ := strings.Cut(e.Name, ":")
		if name != "cpu-clock" && name != "task-clock" {
			return false
		}
	}
	return len(evs) > 0
}

// onCPUEvents are the events whose samples weigh (all but the off-CPU
// event).
func onCPUEvents(evs []profile.Event) []profile.Event {
	other := func(e profile.Event) bool { return e.OffCPU || e.Switches }
	if !slices.ContainsFunc(evs, other) {
		return evs
	}
	return slices.DeleteFunc(slices.Clone(evs), other)
}

// weightType names the sample type of a non-clock event's weight: the
// event's name without modifiers, "events" for several.
func weightType(evs []profile.Event) string {
	evs = onCPUEvents(evs)
	if len(evs) != 1 {
		return "events"
	}
	name, _, _ := strings.Cut(evs[0].Name, ":")
	name = strings.Map(func(r rune) rune {
		if r == '/' || r == ' ' || r == '=' || r == ',' {
			return '_'
		}
		return r
	}, strings.Trim(name, "/"))
	if name == "" || name == "samples" || name == "calls" || name == "cpu" {
		return "events"
	}
	return name
}

// pprofConv is one conversion.
type pprofConv struct {
	p   *profile.Profile
	out *pprof.Profile

	objs   map[string]int // object path -> mapping index
	ranges [][2]uint64    // per mapping: lowest and highest address used
	inl    map[inlKey]int // inlined function -> function index
	leaf   map[ccmap.FuncID]int
	sites  map[ccmap.CallSite]int
	chains map[chainKey]int // leaf with inlined frames -> location
	pruned int              // location of "[pruned]", -1 until needed
}

// chainKey names a leaf chain: its function and address.
type chainKey struct {
	fn   ccmap.FuncID
	addr uint64
}

// inlKey names a function seen only as an inlined frame: its name and the
// object of the code it was inlined into.
type inlKey struct{ name, obj string }

func newPProfConv(p *profile.Profile) *pprofConv {
	c := &pprofConv{
		p: p, out: &pprof.Profile{}, objs: map[string]int{}, inl: map[inlKey]int{},
		leaf: map[ccmap.FuncID]int{}, sites: map[ccmap.CallSite]int{}, chains: map[chainKey]int{}, pruned: -1,
	}
	for _, f := range p.Funcs {
		c.out.Functions = append(c.out.Functions, pprof.Function{Name: f.Name, File: f.File, StartLine: max(f.StartLine, 0)})
		if f.Object != "" {
			c.inl[inlKey{f.Name, f.Object}] = len(c.out.Functions) - 1
		}
	}
	return c
}

// samples adds a sample per context with self weight.
func (c *pprofConv) samples(t ccmap.Totals) {
	mean := meanPeriod(c.p, t)
	cct := c.p.Map.CCT(ccmap.Self)
	var callers []int // a node's caller locations, outermost last (reused)
	for i := range cct.Nodes {
		n := &cct.Nodes[i]
		if n.Self == 0 {
			continue
		}
		callers = callers[:0]
		for j := i; cct.Nodes[j].Parent >= 0; j = cct.Nodes[j].Parent {
			parent := &cct.Nodes[cct.Nodes[j].Parent] // never a pruned node: those are leaves
			callers = append(callers, c.siteLocation(ccmap.CallSite{Caller: parent.Func, Addr: cct.Nodes[j].Site}))
		}
		add := func(leaf int, w uint64) {
			s := pprof.Sample{Samples: int64(math.Round(float64(w) / mean))}
			if c.out.HasTime {
				s.TimeNS = int64(w)
			} else {
				s.Weight = int64(w)
			}
			s.Stack = append(append(make([]int, 0, 1+len(callers)), leaf), callers...)
			c.out.Samples = append(c.out.Samples, s)
		}
		chains := c.p.Leaves[n.Func]
		if n.Pruned || len(chains) == 0 {
			add(c.leafLocation(&cct, i), n.Self)
			continue
		}
		// The function's self weight split by the inlined frames of its
		// sampled instructions, in every context in the same proportions
		// (the profile keeps the split by function, not by context); the
		// shares sum to n.Self exactly.
		var all, cum, given uint64
		for _, ch := range chains {
			all += ch.Self
		}
		for k := range chains {
			cum += chains[k].Self
			hi, lo := bits.Mul64(n.Self, cum)
			upto, _ := bits.Div64(hi, lo, all) // n.Self*cum/all <= n.Self: no overflow
			if w := upto - given; w > 0 {
				add(c.chainLocation(&cct, i, &chains[k]), w)
			}
			given = upto
		}
	}
}

// offSamples adds a sample for every calling context with time off the
// CPU (p.OffCPU's CCT by Self), whose OffCPUNS is that time.
func (c *pprofConv) offSamples() {
	cct := c.p.OffCPU.CCT(ccmap.Self)
	for i := range cct.Nodes {
		n := &cct.Nodes[i]
		if n.Self == 0 {
			continue
		}
		s := pprof.Sample{OffCPUNS: int64(n.Self), Stack: []int{c.leafLocation(&cct, i)}}
		for j := i; cct.Nodes[j].Parent >= 0; j = cct.Nodes[j].Parent {
			parent := &cct.Nodes[cct.Nodes[j].Parent]
			s.Stack = append(s.Stack, c.siteLocation(ccmap.CallSite{Caller: parent.Func, Addr: cct.Nodes[j].Site}))
		}
		c.out.Samples = append(c.out.Samples, s)
	}
}

// chainLocation is the location of the samples of node i of t that ended
// in ch: the function's own location when ch has no inlined frame, else
// one at ch's address whose lines are ch's frames, innermost first, the
// function's own last.
func (c *pprofConv) chainLocation(t *ccmap.CCT, i int, ch *profile.LeafChain) int {
	fr := ch.Frames
	if len(fr) <= 1 {
		return c.leafLocation(t, i)
	}
	k := chainKey{t.Nodes[i].Func, ch.Addr}
	if l, ok := c.chains[k]; ok {
		return l
	}
	fn := c.leafFunction(k.fn)
	obj := c.funcObject(k.fn)
	loc := pprof.Location{Mapping: -1}
	loc.Mapping, loc.Address = c.mapping(obj, ch.Addr)
	for j, f := range fr {
		g := fn
		if j < len(fr)-1 {
			g = c.inlined(inlKey{f.Name, obj}, max(f.StartLine, 0))
			if c.out.Functions[g].File == "" {
				c.out.Functions[g].File = f.File
			}
		}
		loc.Lines = append(loc.Lines, pprof.Line{Function: g, Line: max(f.Line, 0)})
	}
	c.out.Locations = append(c.out.Locations, loc)
	c.chains[k] = len(c.out.Locations) - 1
	return c.chains[k]
}

// meanPeriod is the sampled weight per sample: the map's sampled weight
// over the samples the recording kept. (The contexts now count their
// samples, ccmap's CCTNode.Stacks, which FlameStacks gives the flame
// graph; the pprof's sample counts are still this estimate.)
func meanPeriod(p *profile.Profile, t ccmap.Totals) float64 {
	return float64(t.Samples) / float64(max(p.Recording.Samples, 1))
}

// edges adds every edge with calls.
func (c *pprofConv) edges() {
	for _, e := range c.p.Map.Edges(ccmap.Calls) {
		if e.Calls == 0 {
			continue
		}
		site := c.siteLocation(e.Site)
		c.out.Edges = append(c.out.Edges, pprof.Edge{
			Caller: c.out.Locations[site].Lines[0].Function,
			Callee: c.leafFunction(e.Callee),
			Site:   site,
			Calls:  int64(e.Calls),
		})
	}
}

// funcObject is the object of the profile's function f, "" for a
// function the profile does not have.
func (c *pprofConv) funcObject(f ccmap.FuncID) string {
	if int(f) < len(c.p.Funcs) {
		return c.p.Funcs[f].Object
	}
	return ""
}

// leafFunction is the pprof function of f, made for ids the profile does
// not name.
func (c *pprofConv) leafFunction(f ccmap.FuncID) int {
	if int(f) < len(c.p.Funcs) {
		return int(f)
	}
	return c.inlined(inlKey{name: c.p.FuncName(f)}, 0)
}

// leafLocation is the location of the samples that end in node i of t:
// its function's entry, or "[pruned]".
func (c *pprofConv) leafLocation(t *ccmap.CCT, i int) int {
	n := &t.Nodes[i]
	if n.Pruned {
		if c.pruned < 0 {
			c.out.Functions = append(c.out.Functions, pprof.Function{Name: "[pruned]"})
			c.pruned = len(c.out.Locations)
			c.out.Locations = append(c.out.Locations, pprof.Location{Mapping: -1, Lines: []pprof.Line{{Function: len(c.out.Functions) - 1}}})
		}
		return c.pruned
	}
	if l, ok := c.leaf[n.Func]; ok {
		return l
	}
	fn := c.leafFunction(n.Func)
	loc := pprof.Location{Mapping: -1, Lines: []pprof.Line{{Function: fn, Line: c.out.Functions[fn].StartLine}}}
	if int(n.Func) < len(c.p.Funcs) {
		f := c.p.Funcs[n.Func]
		loc.Mapping, loc.Address = c.mapping(f.Object, f.Start)
	}
	c.out.Locations = append(c.out.Locations, loc)
	c.leaf[n.Func] = len(c.out.Locations) - 1
	return c.leaf[n.Func]
}

// siteLocation is the location of a call site: the call instruction in
// its caller's object, its lines the site's source frames (innermost
// first) with the caller's own function last.
func (c *pprofConv) siteLocation(cs ccmap.CallSite) int {
	if l, ok := c.sites[cs]; ok {
		return l
	}
	caller := c.leafFunction(cs.Caller)
	obj := c.funcObject(cs.Caller)
	loc := pprof.Location{Mapping: -1}
	if cs.Addr != 0 {
		loc.Mapping, loc.Address = c.mapping(obj, cs.Addr)
	}
	site := c.p.Sites[cs]
	fr := site.Frames
	for k, f := range fr {
		fn := caller
		if k < len(fr)-1 {
			fn = c.inlined(inlKey{f.Name, obj}, max(f.StartLine, 0))
			if c.out.Functions[fn].File == "" {
				c.out.Functions[fn].File = f.File
			}
		}
		loc.Lines = append(loc.Lines, pprof.Line{Function: fn, Line: max(f.Line, 0)}) // gosym gives -1 for no line
	}
	if len(fr) == 0 {
		loc.Lines = []pprof.Line{{Function: caller, Line: max(site.Line, 0)}}
	}
	c.out.Locations = append(c.out.Locations, loc)
	c.sites[cs] = len(c.out.Locations) - 1
	return c.sites[cs]
}

// inlined is the function of an inlined frame: the profile's function of
// that name in the same object, else one made for it.
func (c *pprofConv) inlined(k inlKey, startLine int) int {
	if i, ok := c.inl[k]; ok {
		if c.out.Functions[i].StartLine == 0 {
			c.out.Functions[i].StartLine = startLine
		}
		return i
	}
	c.out.Functions = append(c.out.Functions, pprof.Function{Name: k.name, StartLine: startLine})
	c.inl[k] = len(c.out.Functions) - 1
	return c.inl[k]
}

// mapping returns the mapping of obj after widening its range to addr,
// and the location address; -1 and 0 for no object or address.
func (c *pprofConv) mapping(obj string, addr uint64) (int, uint64) {
	if obj == "" || addr == 0 || addr == math.MaxUint64 {
		return -1, 0
	}
	m, ok := c.objs[obj]
	if !ok {
		m = len(c.out.Mappings)
		c.objs[obj] = m
		c.out.Mappings = append(c.out.Mappings, pprof.Mapping{Path: obj, BuildID: c.buildID(obj)})
		c.ranges = append(c.ranges, [2]uint64{addr, addr})
	}
	c.ranges[m][0] = min(c.ranges[m][0], addr)
	c.ranges[m][1] = max(c.ranges[m][1], addr)
	return m, addr
}

func (c *pprofConv) buildID(obj string) string {
	if id := c.p.Recording.BuildIDs[obj]; !id.IsZero() {
		return id.String()
	}
	return c.p.Recording.GoBuildIDs[obj]
}

// mappings sets the mappings' ranges and puts the program's executable
// first (pprof's main binary): the object named like the recorded
// command, else the one with the most self weight.
func (c *pprofConv) mappings() {
	for i := range c.out.Mappings {
		m := &c.out.Mappings[i]
		m.Start, m.Limit, m.Offset = c.ranges[i][0], c.ranges[i][1]+1, c.ranges[i][0]
	}
	main := c.mainObject()
	if main <= 0 {
		return
	}
	ms := c.out.Mappings
	ms[0], ms[main] = ms[main], ms[0]
	for i := range c.out.Locations {
		switch c.out.Locations[i].Mapping {
		case 0:
			c.out.Locations[i].Mapping = main
		case main:
			c.out.Locations[i].Mapping = 0
		}
	}
}

func (c *pprofConv) mainObject() int {
	if cmd := c.p.Recording.Command; len(cmd) > 0 {
		for i, m := range c.out.Mappings {
			if filepath.Base(m.Path) == filepath.Base(cmd[0]) {
				return i
			}
		}
	}
	best, weight := -1, uint64(0)
	self := make([]uint64, len(c.out.Mappings))
	for _, f := range c.p.Map.Functions(ccmap.Self) {
		if int(f.Func) < len(c.p.Funcs) {
			if m, ok := c.objs[c.p.Funcs[f.Func].Object]; ok {
				self[m] += f.Self
				if self[m] > weight {
					best, weight = m, self[m]
				}
			}
		}
	}
	return best
}

// header sets the comments and the nominal period.
func (c *pprofConv) header(t ccmap.Totals) {
	r := &c.p.Recording
	add := func(format string, a ...any) { c.out.Comments = append(c.out.Comments, fmt.Sprintf(format, a...)) }
	add("hwprof recording %s", filepath.Base(r.File))
	if len(r.Command) > 0 {
		add("command: %s", strings.Join(r.Command, " "))
	}
	add("source: %s", r.Source)
	for _, e := range r.Events {
		if e.Freq != 0 {
			add("event: %s at %d Hz", e.Name, e.Freq)
		} else {
			add("event: %s every %d", e.Name, e.Period)
		}
	}
	add("samples: %d, lost: %d, throttled: %d", r.Samples, r.Lost, r.Throttled)
	if r.DurationNS > 0 {
		add("duration: %v", time.Duration(r.DurationNS))
	}
	if len(r.Periods) > len(r.Events) {
		add("the sampling period changed %d times (adaptive period): weights are each sample's period", len(r.Periods)-len(r.Events))
	}
	if mean := meanPeriod(c.p, t); c.out.HasTime {
		add("samples/count: each context's time over the mean period (%.0f ns)", mean)
	} else if t.Samples > 0 {
		add("samples/count: each context's sampled weight over the mean period (%.0f events)", mean)
	}
	if c.out.HasTime && len(r.Events) == 1 && r.Events[0].Period > 0 && len(r.Periods) <= 1 {
		c.out.PeriodNS = int64(r.Events[0].Period)
	}
	c.out.DurationNS = int64(r.DurationNS)
}
