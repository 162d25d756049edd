package profile

import (
	"cmp"
	"errors"
	"slices"

	"github.com/hwprof/hwprof/buildid"
	"github.com/hwprof/hwprof/ccmap"
)

// A Merger adds up profiles of the same program — recordings of many runs
// or many machines — into one (Add, then Profile). Functions line up by
// their object and their name and start address; an object is known by
// its build-id (GNU, else Go) when the recording gives one, else by its
// path, so the same library installed under different paths on different
// machines is one object. Weights, call counts and contexts add up
// (ccmap's Merge); the recordings' facts are combined (counts summed,
// events, processes and warnings listed once each).
//
// The result does not depend on the order or grouping of the profiles
// added: Profile lays everything out in a canonical order, and a merged
// profile can be added to another Merger (Merge of Merges is a Merge).
// A Merger is not safe for concurrent use; merge per goroutine and
// merge the results.
type Merger struct {
	ids   map[funcKey]ccmap.FuncID
	funcs []Func
	keys  []funcKey
	m     *ccmap.Map
	off   *ccmap.Map // the time off the CPU (nil until a profile has some)
	sites map[ccmap.CallSite]Site
	// leaves are the functions' leaf chains (Profile.Leaves) by function
	// and address
	leaves map[leafKey]LeafChain
	n      int
	has    bool // HasCalls of any
	rec    Recording
	warn   []string
}

// leafKey identifies a leaf chain of a merge: its function and address.
type leafKey struct {
	fn   ccmap.FuncID
	addr uint64
}

// funcKey identifies a function across recordings.
type funcKey struct {
	obj   string // build-id, else "path:" + path
	name  string
	start uint64
}

func (k funcKey) compare(o funcKey) int {
	return cmp.Or(cmp.Compare(k.obj, o.obj), cmp.Compare(k.name, o.name), cmp.Compare(k.start, o.start))
}

// NewMerger returns an empty Merger.
func NewMerger() *Merger {
	return &Merger{ids: map[funcKey]ccmap.FuncID{}, m: ccmap.New(), sites: map[ccmap.CallSite]Site{}, leaves: map[leafKey]LeafChain{}}
}

// objectID is how a merge knows the object of f in p: its build-id, else
// its path.
func objectID(p *Profile, f *Func) string {
	if f.ObjectID != "" {
		return f.ObjectID
	}
	path := f.Object
	if id := p.Recording.BuildIDs[path]; !id.IsZero() {
		return id.String()
	}
	if id := p.Recording.GoBuildIDs[path]; id != "" {
		return "go:" + id
	}
	return "path:" + path
}

// Add folds p in; p is not changed.
func (mg *Merger) Add(p *Profile) {
	fmap := make([]ccmap.FuncID, len(p.Funcs))
	for i, f := range p.Funcs {
		fmap[i] = mg.function(funcKey{obj: objectID(p, &f), name: f.Name, start: f.Start}, f)
	}
	id := func(f ccmap.FuncID) ccmap.FuncID {
		if int(f) < len(fmap) {
			return fmap[f]
		}
		// An id the profile does not name ("[func N]"): its own function.
		return mg.function(funcKey{obj: "?", name: p.FuncName(f)}, Func{Name: p.FuncName(f)})
	}
	mg.m.Merge(ccmap.Project(p.Map, id))
	if p.OffCPU != nil {
		if mg.off == nil {
			mg.off = ccmap.New()
		}
		mg.off.Merge(ccmap.Project(p.OffCPU, id))
	}
	for cs, s := range p.Sites {
		k := ccmap.CallSite{Caller: id(cs.Caller), Addr: cs.Addr}
		if old, ok := mg.sites[k]; !ok || compareSites(s, old) < 0 {
			mg.sites[k] = s
		}
	}
	for f, chains := range p.Leaves {
		for _, ch := range chains {
			k := leafKey{id(f), ch.Addr}
			old, ok := mg.leaves[k]
			if ok && compareFrames(old.Frames, ch.Frames) <= 0 {
				ch.Frames = old.Frames
			}
			ch.Self += old.Self
			mg.leaves[k] = ch
		}
	}
	mg.has = mg.has || p.HasCalls
	mg.addRecording(&p.Recording)
	mg.warn = append(mg.warn, p.Warnings...)
	mg.n++
}

func (mg *Merger) function(k funcKey, f Func) ccmap.FuncID {
	id, ok := mg.ids[k]
	if !ok {
		id = ccmap.FuncID(len(mg.funcs))
		mg.ids[k] = id
		f.ObjectID = k.obj
		mg.funcs = append(mg.funcs, f)
		mg.keys = append(mg.keys, k)
		return id
	}
	// The same function seen on several machines: keep the least path
	// and the best known source position, whatever the order.
	g := &mg.funcs[id]
	if f.Object != "" && (g.Object == "" || f.Object < g.Object) {
		g.Object = f.Object
	}
	if cmp.Or(cmp.Compare(f.StartLine, g.StartLine), cmp.Compare(f.File, g.File)) > 0 {
		g.File, g.StartLine = f.File, f.StartLine
	}
	return id
}

// compareSites orders descriptions of one call site: the one with more
// source frames first, then by their fields.
func compareSites(a, b Site) int {
	return cmp.Or(cmp.Compare(len(b.Frames), len(a.Frames)), cmp.Compare(a.Object, b.Object),
		cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line),
		slices.CompareFunc(a.Frames, b.Frames, func(x, y SourceFrame) int {
			return cmp.Or(cmp.Compare(x.Name, y.Name), cmp.Compare(x.File, y.File),
				cmp.Compare(x.Line, y.Line), cmp.Compare(x.StartLine, y.StartLine))
		}))
}

func (mg *Merger) addRecording(r *Recording) {
	a := &mg.rec
	if mg.n == 0 {
		a.File, a.Command, a.Source = r.File, slices.Clone(r.Command), r.Source
	} else {
		if a.File != r.File {
			a.File = ""
		}
		if !slices.Equal(a.Command, r.Command) {
			a.Command = nil
		}
		if a.Source != r.Source {
			a.Source = Mixed
		}
	}
	a.Events = append(a.Events, r.Events...)
	a.Samples += r.Samples
	a.Lost += r.Lost
	a.Throttled += r.Throttled
	a.Incomplete = a.Incomplete || r.Incomplete // a merge of a recording read in part is one too
	a.DurationNS += r.DurationNS
	a.Periods = append(a.Periods, r.Periods...)
	a.Processes = append(a.Processes, r.Processes...)
	a.Sampled = append(a.Sampled, r.Sampled...)
	a.Leaf.Checked += r.Leaf.Checked
	a.Leaf.Inserted += r.Leaf.Inserted
	a.Leaf.Unknown += r.Leaf.Unknown
	addOffCPU(&a.OffCPU, &r.OffCPU, mg.n == 0)
	a.BuildIDs = mergeIDs(a.BuildIDs, r.BuildIDs, buildid.ID.String)
	a.GoBuildIDs = mergeIDs(a.GoBuildIDs, r.GoBuildIDs, func(s string) string { return s })
}

// addOffCPU adds the off-CPU totals of b to a (first: a is the first
// recording's).
func addOffCPU(a, b *OffCPUStats, first bool) {
	if first {
		a.OnCPUTime = b.OnCPUTime
	} else {
		a.OnCPUTime = a.OnCPUTime && b.OnCPUTime
	}
	a.Recorded = a.Recorded || b.Recorded
	a.NS += b.NS
	a.Intervals += b.Intervals
	a.PreemptedNS += b.PreemptedNS
	a.Preempted += b.Preempted
	a.NoStack += b.NoStack
	a.NoStackNS += b.NoStackNS
	a.StackLost += b.StackLost
	a.OpenAtStart += b.OpenAtStart
	a.OpenAtEnd += b.OpenAtEnd
	a.EndedByExit += b.EndedByExit
	a.Unmatched += b.Unmatched
	a.SwitchesLost += b.SwitchesLost
	a.Threads = append(a.Threads, b.Threads...)
}

// mergeIDs adds the build-ids of b to a; a path with different build-ids
// on different machines keeps the least.
func mergeIDs[ID any](a, b map[string]ID, key func(ID) string) map[string]ID {
	if len(b) == 0 {
		return a
	}
	if a == nil {
		a = make(map[string]ID, len(b))
	}
	for path, id := range b {
		if old, ok := a[path]; !ok || key(id) < key(old) {
			a[path] = id
		}
	}
	return a
}

// Profile returns the merged profile, laid out canonically: functions
// sorted by object, name and start, events, period changes, processes
// and warnings sorted and listed once. It is an error to ask before any
// Add. The Merger must not be used after.
func (mg *Merger) Profile() (*Profile, error) {
	if mg.n == 0 {
		return nil, errors.New("merge profiles: no profiles")
	}
	order := make([]ccmap.FuncID, len(mg.funcs))
	for i := range order {
		order[i] = ccmap.FuncID(i)
	}
	slices.SortFunc(order, func(a, b ccmap.FuncID) int { return mg.keys[a].compare(mg.keys[b]) })
	perm := make([]ccmap.FuncID, len(order))
	funcs := make([]Func, len(order))
	for to, from := range order {
		perm[from] = ccmap.FuncID(to)
		funcs[to] = mg.funcs[from]
	}
	pm := func(f ccmap.FuncID) ccmap.FuncID { return perm[f] }
	p := &Profile{Map: ccmap.Project(mg.m, pm), Funcs: funcs, Sites: map[ccmap.CallSite]Site{}, HasCalls: mg.has, Recording: mg.rec}
	for cs, s := range mg.sites {
		s.Object = funcs[perm[cs.Caller]].Object
		p.Sites[ccmap.CallSite{Caller: perm[cs.Caller], Addr: cs.Addr}] = s
	}
	p.Leaves = mergedLeaves(mg.leaves, perm, p.Map, funcs)
	if mg.off != nil {
		p.OffCPU = ccmap.Project(mg.off, pm)
	}
	canonicalRecording(&p.Recording)
	p.Warnings = sortedUnique(mg.warn)
	return p, nil
}

// mergedLeaves lays the merged leaf chains out as Profile.Leaves, with
// the functions renumbered by perm. A function's self weight from
// profiles that had no chains for it (loaded without source positions)
// is a chain of its own code at its start, so that its chains still sum
// to its self weight.
func mergedLeaves(leaves map[leafKey]LeafChain, perm []ccmap.FuncID, m *ccmap.Map, funcs []Func) map[ccmap.FuncID][]LeafChain {
	if len(leaves) == 0 {
		return nil
	}
	out := map[ccmap.FuncID][]LeafChain{}
	sum := map[ccmap.FuncID]uint64{}
	for k, ch := range leaves {
		f := perm[k.fn]
		out[f] = append(out[f], ch)
		sum[f] += ch.Self
	}
	for _, fw := range m.Functions(ccmap.Self) {
		if s, ok := sum[fw.Func]; ok && fw.Self > s {
			ch := LeafChain{Self: fw.Self - s}
			if int(fw.Func) < len(funcs) {
				ch.Addr = funcs[fw.Func].Start
			}
			out[fw.Func] = append(out[fw.Func], ch)
		}
	}
	for _, cs := range out {
		slices.SortFunc(cs, func(a, b LeafChain) int {
			return cmp.Or(cmp.Compare(b.Self, a.Self), cmp.Compare(a.Addr, b.Addr), compareFrames(a.Frames, b.Frames))
		})
	}
	return out
}

// compareFrames orders the source frames of one address seen in several
// recordings: more frames first, then by name, file and lines.
func compareFrames(a, b []SourceFrame) int {
	if c := cmp.Compare(len(b), len(a)); c != 0 {
		return c
	}
	for i := range a {
		x, y := a[i], b[i]
		if c := cmp.Or(cmp.Compare(x.Name, y.Name), cmp.Compare(x.File, y.File), cmp.Compare(x.Line, y.Line), cmp.Compare(x.StartLine, y.StartLine)); c != 0 {
			return c
		}
	}
	return 0
}

// Merge returns the profiles merged (a Merger of them).
func Merge(ps ...*Profile) (*Profile, error) {
	mg := NewMerger()
	for _, p := range ps {
		mg.Add(p)
	}
	return mg.Profile()
}

func canonicalRecording(r *Recording) {
	slices.SortFunc(r.Events, func(a, b Event) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Period, b.Period), cmp.Compare(a.Freq, b.Freq))
	})
	r.Events = slices.Compact(r.Events)
	slices.SortFunc(r.Periods, func(a, b PeriodChange) int {
		return cmp.Or(cmp.Compare(a.TimeNS, b.TimeNS), cmp.Compare(a.Event, b.Event), cmp.Compare(a.Period, b.Period))
	})
	var total uint64
	for _, pr := range r.Processes {
		total += pr.Weight
	}
	for i := range r.Processes {
		r.Processes[i].Share = 0
		if total > 0 {
			r.Processes[i].Share = float64(r.Processes[i].Weight) / float64(total)
		}
	}
	slices.SortFunc(r.Processes, func(a, b Process) int {
		return cmp.Or(cmp.Compare(b.Weight, a.Weight), cmp.Compare(a.PID, b.PID), cmp.Compare(a.Comm, b.Comm), cmp.Compare(a.Samples, b.Samples))
	})
	SortSampled(r.Sampled)
	slices.SortFunc(r.OffCPU.Threads, func(a, b ThreadTime) int {
		return cmp.Or(cmp.Compare(a.PID, b.PID), cmp.Compare(a.TID, b.TID), cmp.Compare(a.Comm, b.Comm),
			cmp.Compare(a.LifeNS, b.LifeNS), cmp.Compare(a.OnNS, b.OnNS), cmp.Compare(a.OffNS, b.OffNS))
	})
}

func sortedUnique(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return slices.Compact(s)
}

// SortSampled sorts threads busiest first, then by process, thread and
// name.
func SortSampled(ts []SampledThread) {
	slices.SortFunc(ts, func(a, b SampledThread) int {
		return cmp.Or(cmp.Compare(b.Samples, a.Samples), cmp.Compare(a.PID, b.PID), cmp.Compare(a.TID, b.TID), cmp.Compare(a.Comm, b.Comm))
	})
}
