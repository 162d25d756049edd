package engine

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/buildid"
	"github.com/hwprof/hwprof/ccmap"
	"github.com/hwprof/hwprof/internal/diag"
	"github.com/hwprof/hwprof/offcpu"
	"github.com/hwprof/hwprof/profile"
	"github.com/hwprof/hwprof/symbolize"
)

// finish symbolizes the address ids of addrMap (the pipeline's merged
// map), projects the map onto functions and fills in the recording's
// facts.
func (l *loader) finish(addrMap *ccmap.Map) *profile.Profile {
	l.growEvents()
	if l.o.Instrs && l.ranges.ranges != nil {
		l.rangeIDs()
	}
	locs := l.symbolize()
	funcs, fmap, funcObj := l.functions(locs)
	if l.test.funcMap != nil {
		*l.test.funcMap = fmap
	}
	m := ccmap.Project(addrMap, func(id ccmap.FuncID) ccmap.FuncID { return fmap[id] })
	l.unrooted(m, funcs, fmap)
	p := &profile.Profile{Map: m, Funcs: funcs, Sites: l.sites(m, locs, funcObj), Recording: l.recording()}
	if off := l.offMap(); off != nil {
		p.OffCPU = ccmap.Project(off, func(id ccmap.FuncID) ccmap.FuncID { return fmap[id] })
		maps.Copy(p.Sites, l.sites(p.OffCPU, locs, funcObj))
	}
	p.Recording.OffCPU = l.off.stats
	p.Recording.OffCPU.OnCPUTime = l.onCPUTime()
	l.offWarnings()
	if l.o.SiteLines {
		p.Leaves = l.leafChains(addrMap, locs, fmap)
		if l.o.Instrs {
			p.Instrs = l.instrs(addrMap, locs, fmap)
			l.rangeProfile(p, locs, fmap)
		}
		p.Recording.GoBuildIDs = l.goBuildIDs(funcs, funcObj, p.Recording.BuildIDs)
	}
	for i, s := range l.ev.srcs {
		if l.ev.used[i] && (s == profile.LBR || s == profile.Exact || s == profile.Calls) {
			p.HasCalls = true
		}
	}
	if l.lbr.callsUnknown > 0 {
		l.warn(fmt.Sprintf("%d call samples whose call site or callee could not be derived were left out of the call counts", l.lbr.callsUnknown))
	}
	if l.probes.noRetAddr > 0 {
		l.warn(fmt.Sprintf("%d probe samples without a return address (no user stack copy) were left out", l.probes.noRetAddr))
	}
	if l.probes.notCall > 0 {
		l.warn(fmt.Sprintf("%d probe hits whose return address follows no call instruction (a function entered by the kernel, as _start is, or by a jump; a new goroutine's first function) were left out of the call counts",
			l.probes.notCall))
	}
	tot := addrMap.Totals()
	l.stackWarnings(tot.Samples + tot.ContextCalls) // stacks sampled, and exact hits (calls in context)
	var log diag.Log
	l.eng.Diagnose(&log)
	for _, w := range l.warnings {
		log.Note(w)
	}
	p.Warnings = log.Warnings()
	p.Recording.Incomplete = log.Incomplete()
	p.Recording.Lost += l.eng.Skips.Samples
	if !l.follow || l.last {
		l.eng.Close() // no goroutine outlives Load; the vdso's file is removed
	}
	return p
}

func (l *loader) warn(s string) { l.warnings = append(l.warnings, s) }

// symbolize resolves every address id through the engine's Symbols:
// once per unique address of each object, by the objects' symbols alone,
// or with LoadOptions.SiteLines through their DWARF too; the kernel
// through the kallsyms symbolize.FindKallsyms finds (a saved one, or
// /proc/kallsyms when the recording was made on this kernel), JIT code
// through its process's perf map. Each object's file is opened once,
// objects in parallel.
func (l *loader) symbolize() []symbolize.Location {
	keys := l.addrs.keys
	syms := l.eng.Symbols
	hs := make([]Handle, len(keys))
	for i, k := range keys {
		hs[i] = syms.Add(k.obj, k.pid, k.addr)
	}
	var errs []KeyError
	if l.follow && !l.last {
		syms.ResolveAdded(l.o.SiteLines) // the files read stay for the next part (Follower)
		errs = syms.Errors()
	} else {
		errs = syms.Resolve(l.o.SiteLines)
	}
	for _, ke := range errs { // the kernel's first, as it is the most common
		if errors.Is(ke.Err, ErrNoKernelSymbols) {
			_, why := l.eng.Objects.Kernel()
			l.warn(fmt.Sprintf("no kernel symbols: %s: kernel functions show as %s", why, symbolize.KernelPath))
		}
	}
	for _, ke := range errs {
		// JIT code without a perf map is common: its functions show as
		// addresses without a warning, as in hwprof script. A file refused
		// is warned of once by Diagnose (Objects.Refused).
		if !errors.Is(ke.Err, ErrNoKernelSymbols) && !IsPerfMap(ke.Key.Path) && !errors.Is(ke.Err, symbolize.ErrRefused) {
			l.symbolizeWarning(ke.Key, ke.Err)
		}
	}
	for _, key := range syms.Unnamed() {
		l.warn(fmt.Sprintf("no symbols in %s: stripped, and no debug file found (by build-id, .gnu_debuglink or debuginfod): its functions show as [object+0xoffset]", key.Path))
	}
	locs := make([]symbolize.Location, len(keys))
	for i, h := range hs {
		locs[i], _ = syms.Location(h)
	}
	return locs
}

func (l *loader) symbolizeWarning(key symbolize.ObjectKey, err error) {
	var mm *symbolize.BuildIDMismatchError
	switch {
	case key.Path == symbolize.KernelPath:
		l.warn(fmt.Sprintf("kernel symbols: %v", err))
	case errors.As(err, &mm):
		l.warn(fmt.Sprintf("%v: its functions show as [object+0xoffset]", err))
	default:
		l.warn(fmt.Sprintf("cannot symbolize %s: %v", key.Path, err))
	}
}

// funcKey identifies a function: its object, symbol start and name.
type funcKey struct {
	obj   *addrspace.Object
	start uint64
	name  string
}

// functions maps every address id to a function id: one per object and
// symbol, named by the symbol's demangled short name; an address without a
// symbol is a function of its own, "[object+0xaddr]", and so is a symbol
// without a name (legal ELF, and what damage to .symtab makes), at its
// start; an address in no object is "[unknown]". The kernel without
// symbols is one "[kernel.kallsyms]".
func (l *loader) functions(locs []symbolize.Location) ([]profile.Func, []ccmap.FuncID, []*addrspace.Object) {
	ids := map[funcKey]ccmap.FuncID{}
	var funcs []profile.Func
	var objs []*addrspace.Object
	fmap := make([]ccmap.FuncID, len(l.addrs.keys))
	for i, k := range l.addrs.keys {
		fk := funcKey{obj: k.obj}
		fn := profile.Func{}
		switch {
		case k == brokenKey:
			fk.name, fn.Name = profile.BrokenStack, profile.BrokenStack
		case k == preemptedKey:
			fk.name, fn.Name = profile.Preempted, profile.Preempted
		case k == noStackKey:
			fk.name, fn.Name = profile.NoOffCPUStack, profile.NoOffCPUStack
		case k.obj == nil:
			fk.name, fn.Name = "[unknown]", "[unknown]"
		case locs[i].Symbol != nil:
			sym := locs[i].Symbol
			fk.start, fk.name = uint64(sym.Start), sym.Name.Raw
			fn.Name = cmp.Or(sym.Name.Short, sym.Name.Full, sym.Name.Raw)
			if fn.Name == "" {
				fn.Name = unnamed(k.obj, uint64(sym.Start))
			}
			fn.Start, fn.LinkName, fn.Local = uint64(sym.Start), sym.Name.Raw, sym.Local
		case k.obj.Kind == addrspace.KindKernel || k.obj.Kind == addrspace.KindModule:
			fk.name = symbolize.KernelPath
			fn.Name = "[" + symbolize.KernelPath + "]"
		default:
			fk.start = uint64(k.addr)
			fk.name = unnamed(k.obj, uint64(k.addr))
			fn.Name, fn.Start = fk.name, uint64(k.addr)
		}
		if k.obj != nil {
			fn.Object = k.obj.Path
			if k.obj.Kind == addrspace.KindKernel || k.obj.Kind == addrspace.KindModule {
				fn.Object = symbolize.KernelPath
			}
		}
		id, ok := ids[fk]
		if !ok {
			id = ccmap.FuncID(len(funcs))
			ids[fk] = id
			funcs = append(funcs, fn)
			objs = append(objs, k.obj)
		}
		fmap[i] = id
		if fr := locs[i].Frames; l.o.SiteLines && len(fr) > 0 && funcs[id].StartLine == 0 {
			// The outermost frame is the function itself. A function
			// without a start line (Go's <autogenerated> wrappers) takes
			// the first file one of its addresses names, whichever
			// addresses a profile has (a Follower's part, the whole).
			out := fr[len(fr)-1]
			funcs[id].StartLine = out.StartLine
			if funcs[id].File == "" || out.StartLine != 0 {
				funcs[id].File = out.File
			}
		}
	}
	return funcs, fmap, objs
}

// unnamed names code at object address addr of obj that has no symbol
// name: "[object+0xaddr]".
func unnamed(obj *addrspace.Object, addr uint64) string {
	return fmt.Sprintf("[%s+0x%x]", filepath.Base(obj.Path), addr)
}

// goBuildIDs reads the Go build-id of every object of funcs without a GNU
// build-id, each file once.
func (l *loader) goBuildIDs(funcs []profile.Func, objs []*addrspace.Object, known map[string]buildid.ID) map[string]string {
	out := map[string]string{}
	seen := map[string]bool{}
	for i, obj := range objs {
		path := funcs[i].Object
		if obj == nil || obj.Kind != addrspace.KindFile || seen[path] || !known[path].IsZero() {
			continue
		}
		seen[path] = true
		file := l.eng.Objects.File(path)
		if file == "" {
			continue
		}
		if id, err := buildid.ReadGo(file); err == nil && id != "" {
			out[path] = id
		}
	}
	return out
}

// sites describes the call site of every edge of m: its object, its
// address there, and the source line of the call (the innermost inlined
// frame's) when the object has DWARF.
func (l *loader) sites(m *ccmap.Map, locs []symbolize.Location, funcObj []*addrspace.Object) map[ccmap.CallSite]profile.Site {
	out := map[ccmap.CallSite]profile.Site{}
	for _, by := range []ccmap.Measure{ccmap.Total, ccmap.Calls} {
		for _, e := range m.Edges(by) {
			if _, ok := out[e.Site]; ok {
				continue
			}
			obj := funcObj[e.Site.Caller]
			s := profile.Site{Offset: e.Site.Addr}
			if obj != nil {
				s.Object = obj.Path
				if obj.Kind == addrspace.KindKernel || obj.Kind == addrspace.KindModule {
					s.Object = symbolize.KernelPath
				}
			}
			if id, ok := l.addrs.ids[newAddrKey(obj, 0, addrspace.ObjAddr(e.Site.Addr))]; ok && len(locs[id].Frames) > 0 {
				s.File, s.Line = locs[id].Frames[0].File, locs[id].Frames[0].Line
				if l.o.SiteLines {
					s.Frames = sourceFrames(locs[id].Frames)
				}
			}
			out[e.Site] = s
		}
	}
	return out
}

// sourceFrames copies a location's frames into the public model.
func sourceFrames(fr []symbolize.Frame) []profile.SourceFrame {
	out := make([]profile.SourceFrame, len(fr))
	for i, f := range fr {
		out[i] = profile.SourceFrame{Name: cmp.Or(f.Func.Short, f.Func.Full, f.Func.Raw), File: f.File, Line: f.Line, StartLine: f.StartLine,
			LinkName: f.Func.Raw, Discriminator: f.Discriminator}
	}
	return out
}

// recording fills in the facts read along the way.
func (l *loader) recording() profile.Recording {
	rec := l.rec
	rec.Command = l.r.Features().Cmdline
	rec.Source = recordingSource(l.ev.srcs, l.ev.used)
	rec.Processes = l.processes()
	rec.Sampled = l.sampled()
	rec.BuildIDs = l.eng.Objects.BuildIDs()
	rec.ThreadPeriods = l.threadPeriods()
	if l.per.timed {
		rec.DurationNS = l.per.last - l.per.first
	}
	for _, a := range l.r.Attrs() {
		e := profile.Event{Name: a.Name, OffCPU: offcpu.IsEvent(&a.Attr), Switches: offcpu.IsSwitchEvent(&a.Attr)}
		if a.Attr.Freq() {
			e.Freq = a.Attr.SamplePeriod
		} else {
			e.Period = a.Attr.SamplePeriod
		}
		rec.Events = append(rec.Events, e)
	}
	return rec
}

// threadPeriods lists each thread's last period for the events with a
// fixed period whose threads ended at different periods.
func (l *loader) threadPeriods() []profile.ThreadPeriod {
	var out []profile.ThreadPeriod
	for ev := range l.per.periodsSeen {
		if len(l.per.periodsSeen[ev]) < 2 || l.ev.format.Attr(ev).Freq() {
			continue
		}
		var tps []profile.ThreadPeriod
		differ := false
		for k, p := range l.per.lastPeriod {
			if k.ev != ev {
				continue
			}
			differ = differ || (len(tps) > 0 && p != tps[0].Period)
			tps = append(tps, profile.ThreadPeriod{Event: l.ev.attrs[ev].Name, TID: k.tid, Period: p})
		}
		if differ {
			out = append(out, tps...)
		}
	}
	slices.SortFunc(out, func(a, b profile.ThreadPeriod) int {
		return cmp.Or(cmp.Compare(a.Event, b.Event), cmp.Compare(a.TID, b.TID))
	})
	return out
}

func sortLBRKeys(keys []lbrKey) {
	slices.SortFunc(keys, func(a, b lbrKey) int {
		return cmp.Or(cmp.Compare(a.caller, b.caller), cmp.Compare(a.site, b.site), cmp.Compare(a.callee, b.callee))
	})
}

// leafChains splits the self weight of every function with a sampled
// instruction in inlined code by the source frames of its sampled
// instructions (profile.Profile.Leaves): addrMap's self weights are by
// address id, and every address was symbolized with its inlined frames.
// Chains are told apart by their functions and by the lines of the
// calls (every frame's line but the innermost's).
func (l *loader) leafChains(addrMap *ccmap.Map, locs []symbolize.Location, fmap []ccmap.FuncID) map[ccmap.FuncID][]profile.LeafChain {
	type chainKey struct {
		fn    ccmap.FuncID
		calls string
	}
	type chain struct {
		c     profile.LeafChain
		heavy uint64 // weight of the instruction at c.Addr
	}
	chains := map[chainKey]*chain{}
	inlined := map[ccmap.FuncID]bool{}
	var b strings.Builder
	for _, f := range addrMap.Functions(ccmap.Self) {
		if f.Self == 0 || int(f.Func) >= len(locs) {
			continue
		}
		fn, fr := fmap[f.Func], locs[f.Func].Frames
		b.Reset()
		for i, sf := range fr {
			b.WriteString(cmp.Or(sf.Func.Short, sf.Func.Full, sf.Func.Raw))
			if i > 0 {
				fmt.Fprintf(&b, ":%d", sf.Line)
			}
			b.WriteByte(0)
		}
		k := chainKey{fn, b.String()}
		ch := chains[k]
		if ch == nil {
			ch = &chain{}
			chains[k] = ch
			ch.c.Frames = sourceFrames(fr)
		}
		ch.c.Self += f.Self
		if f.Self > ch.heavy {
			ch.heavy = f.Self
			ch.c.Addr = uint64(l.addrs.keys[f.Func].addr)
			if len(fr) > 0 {
				ch.c.Frames[0].Line = fr[0].Line
			}
		}
		if len(fr) > 1 {
			inlined[fn] = true
		}
	}
	if len(inlined) == 0 {
		return nil
	}
	out := map[ccmap.FuncID][]profile.LeafChain{}
	for k, ch := range chains {
		if inlined[k.fn] {
			out[k.fn] = append(out[k.fn], ch.c)
		}
	}
	for _, cs := range out {
		slices.SortFunc(cs, func(a, b profile.LeafChain) int {
			return cmp.Or(cmp.Compare(b.Self, a.Self), cmp.Compare(a.Addr, b.Addr))
		})
	}
	return out
}

// instrs lists the self weight of every sampled instruction with its
// source frames (profile.Profile.Instrs), heaviest first.
func (l *loader) instrs(addrMap *ccmap.Map, locs []symbolize.Location, fmap []ccmap.FuncID) []profile.Instr {
	var out []profile.Instr
	for _, f := range addrMap.Functions(ccmap.Self) {
		if f.Self == 0 || int(f.Func) >= len(locs) {
			continue
		}
		out = append(out, profile.Instr{Func: fmap[f.Func], Addr: uint64(l.addrs.keys[f.Func].addr),
			Frames: sourceFrames(locs[f.Func].Frames), Self: f.Self})
	}
	return out
}
