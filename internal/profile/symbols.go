package profile

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/hwprof/hwprof/ccmap"
	"github.com/hwprof/hwprof/internal/procmap"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/symbolize"
)

// finish folds what is pending, symbolizes the address ids, projects the
// map onto functions and fills in the recording's facts.
func (l *loader) finish() *Profile {
	l.growEvents()
	l.clearStacks()
	l.flushLBR()
	addrMap := l.fold.Close()
	locs := l.symbolize()
	if l.vdsoFile != "" {
		os.Remove(l.vdsoFile)
	}
	funcs, fmap, funcObj := l.functions(locs)
	m := ccmap.Project(addrMap, func(id ccmap.FuncID) ccmap.FuncID { return fmap[id] })
	p := &Profile{Map: m, Funcs: funcs, Sites: l.sites(m, locs, funcObj), Recording: l.recording()}
	for i, s := range l.srcs {
		if l.used[i] && (s == srcLBR || s == srcExact || s == srcCalls) {
			p.HasCalls = true
		}
	}
	if l.callsUnknown > 0 {
		l.warn(fmt.Sprintf("%d call samples whose call site or callee could not be derived were left out of the call counts", l.callsUnknown))
	}
	if l.noRetAddr > 0 {
		l.warn(fmt.Sprintf("%d probe samples without a return address (no user stack copy) were left out", l.noRetAddr))
	}
	p.Warnings = append(l.r.Warnings(), l.warnings...)
	if l.kallsyms != nil {
		<-l.kallsyms // no goroutine outlives Load
	}
	return p
}

func (l *loader) warn(s string) { l.warnings = append(l.warnings, s) }

// symbolize resolves every address id: by the objects' symbols alone, or
// with LoadOptions.SiteLines through their DWARF too (objects in parallel:
// building the tables of a large debug package is the slow part); the
// kernel through the kallsyms symbolize.FindKallsyms finds (a saved one,
// or /proc/kallsyms when the recording was made on this kernel).
func (l *loader) symbolize() []symbolize.Location {
	keys := l.addrs.keys
	locs := make([]symbolize.Location, len(keys))
	type group struct {
		key   symbolize.ObjectKey
		ids   []int
		addrs []symbolize.Addr
	}
	groups := map[*procmap.Object]*group{}
	var order []*procmap.Object
	kernelHere, kernelWarned := l.kernelPath != "", false
	for i, k := range keys {
		if k.obj == nil {
			continue
		}
		g, ok := groups[k.obj]
		if !ok {
			key, can := l.objectKey(k.obj)
			if can && key.Path == symbolize.KernelPath && !kernelHere {
				can = false
				if !kernelWarned {
					kernelWarned = true
					l.warn(fmt.Sprintf("no kernel symbols: %s: kernel functions show as %s", l.kernelWhy, symbolize.KernelPath))
				}
			}
			if can {
				g = &group{key: key}
				order = append(order, k.obj)
			}
			groups[k.obj] = g
		}
		if g != nil {
			g.ids = append(g.ids, i)
			g.addrs = append(g.addrs, symbolize.Addr(k.addr))
		}
	}
	req := map[symbolize.ObjectKey][]symbolize.Addr{}
	for _, obj := range order {
		g := groups[obj]
		if _, mapped := l.o.Objects[obj.Path]; mapped || !l.o.SiteLines {
			continue
		}
		req[g.key] = append(req[g.key], g.addrs...)
	}
	so := symbolize.Options{SymFS: l.o.SymFS, DebugDirs: l.o.DebugDirs, Kallsyms: l.kernelPath}
	res := symbolize.New(so).SymbolizeAll(req)
	next := map[symbolize.ObjectKey]int{} // objects of one key share its result
	var kernel symbolize.Resolver
	var kernelErr error
	var kernelAddrs []symbolize.Addr // of every kernel object (the kernel, modules)
	for _, obj := range order {
		if g := groups[obj]; g.key.Path == symbolize.KernelPath {
			kernelAddrs = append(kernelAddrs, g.addrs...)
		}
	}
	for _, obj := range order {
		g := groups[obj]
		var r symbolize.Result
		if local, mapped := l.o.Objects[obj.Path]; mapped {
			r = symbolizeObject(symbolize.ObjectKey{Path: local}, symbolize.Options{DebugDirs: l.o.DebugDirs}, l.o.SiteLines, g.addrs)
		} else if !l.o.SiteLines && g.key.Path == symbolize.KernelPath {
			if kernel == nil && kernelErr == nil {
				kernel, kernelErr = l.kernelSymbols(kernelAddrs)
			}
			if r.Err = kernelErr; r.Err == nil {
				r.Locations = kernel.Symbolize(g.addrs)
			}
		} else if !l.o.SiteLines {
			r = symbolizeObject(g.key, so, false, g.addrs)
		} else {
			r = res[g.key]
			start := next[g.key]
			next[g.key] = start + len(g.addrs)
			if r.Err == nil && start+len(g.addrs) <= len(r.Locations) {
				r.Locations = r.Locations[start : start+len(g.addrs)]
			}
		}
		if r.Err != nil {
			l.symbolizeWarning(g.key, r.Err)
			continue
		}
		for j, id := range g.ids {
			if j < len(r.Locations) {
				locs[id] = r.Locations[j]
			}
		}
	}
	return locs
}

// symbolizeObject opens one object, with DWARF or for its symbols only,
// and resolves addrs.
func symbolizeObject(key symbolize.ObjectKey, so symbolize.Options, lines bool, addrs []symbolize.Addr) symbolize.Result {
	open := symbolize.OpenSymbols
	if lines {
		open = symbolize.Open
	}
	o, err := open(key, so)
	if err != nil {
		return symbolize.Result{Err: err}
	}
	return symbolize.Result{Locations: o.Symbolize(addrs)}
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

// findKernel decides which kallsyms names the recording's kernel
// (symbolize.FindKallsyms), or why none does.
func (l *loader) findKernel() {
	f := l.r.Features()
	so := symbolize.Options{SymFS: l.o.SymFS, DebugDirs: l.o.DebugDirs}
	l.kernelPath, l.kernelWhy = symbolize.FindKallsyms(so, l.buildIDs[symbolize.KernelPath], f.OSRelease, f.Hostname)
	l.kernelLocal, _ = symbolize.KernelIsLocal(l.buildIDs[symbolize.KernelPath], f.OSRelease, f.Hostname)
}

// preloadKernel starts reading the kernel's symbols (slow for
// /proc/kallsyms: the kernel formats every line) while the records are
// read, when an event samples the kernel and a kallsyms names it.
func (l *loader) preloadKernel() {
	if l.kernelPath == "" {
		return
	}
	kernel := false
	for _, a := range l.r.Attrs() {
		kernel = kernel || !a.Attr.Flags.Has(perf.FlagExcludeKernel)
	}
	if !kernel {
		return
	}
	l.kallsyms = make(chan struct{})
	go func() {
		defer close(l.kallsyms)
		l.kernelText, l.kernelErr = symbolize.ReadKallsyms(l.kernelPath)
	}()
}

// kernelSymbols returns a resolver of the kernel addresses addrs: the
// symbols of the kallsyms text that contain them (symbolize.KallsymsFor),
// from the text preloaded or read now.
func (l *loader) kernelSymbols(addrs []symbolize.Addr) (symbolize.Resolver, error) {
	if l.kallsyms == nil {
		l.kernelText, l.kernelErr = symbolize.ReadKallsyms(l.kernelPath)
	} else {
		<-l.kallsyms
	}
	if l.kernelErr != nil {
		return nil, l.kernelErr
	}
	return symbolize.KallsymsFor(l.kernelText, addrs)
}

// funcKey identifies a function: its object, symbol start and name.
type funcKey struct {
	obj   *procmap.Object
	start uint64
	name  string
}

// functions maps every address id to a function id: one per object and
// symbol, named by the symbol's demangled short name; an address without a
// symbol is a function of its own, "[object+0xaddr]", and an address in no
// object "[unknown]". The kernel without symbols is one "[kernel.kallsyms]".
func (l *loader) functions(locs []symbolize.Location) ([]Func, []ccmap.FuncID, []*procmap.Object) {
	ids := map[funcKey]ccmap.FuncID{}
	var funcs []Func
	var objs []*procmap.Object
	fmap := make([]ccmap.FuncID, len(l.addrs.keys))
	for i, k := range l.addrs.keys {
		fk := funcKey{obj: k.obj}
		fn := Func{}
		switch {
		case k.obj == nil:
			fk.name, fn.Name = "[unknown]", "[unknown]"
		case locs[i].Symbol != nil:
			sym := locs[i].Symbol
			fk.start, fk.name = uint64(sym.Start), sym.Name.Raw
			fn.Name = cmp.Or(sym.Name.Short, sym.Name.Full, sym.Name.Raw)
		case k.obj.Kind == procmap.KindKernel || k.obj.Kind == procmap.KindModule:
			fk.name = symbolize.KernelPath
			fn.Name = "[" + symbolize.KernelPath + "]"
		default:
			fk.start = uint64(k.addr)
			fk.name = fmt.Sprintf("[%s+0x%x]", filepath.Base(k.obj.Path), uint64(k.addr))
			fn.Name = fk.name
		}
		if k.obj != nil {
			fn.Object = k.obj.Path
			if k.obj.Kind == procmap.KindKernel || k.obj.Kind == procmap.KindModule {
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
	}
	return funcs, fmap, objs
}

// sites describes the call site of every edge of m: its object, its
// address there, and the source line of the call (the innermost inlined
// frame's) when the object has DWARF.
func (l *loader) sites(m *ccmap.Map, locs []symbolize.Location, funcObj []*procmap.Object) map[ccmap.CallSite]Site {
	out := map[ccmap.CallSite]Site{}
	for _, by := range []ccmap.Measure{ccmap.Total, ccmap.Calls} {
		for _, e := range m.Edges(by) {
			if _, ok := out[e.Site]; ok {
				continue
			}
			obj := funcObj[e.Site.Caller]
			s := Site{Offset: e.Site.Addr}
			if obj != nil {
				s.Object = obj.Path
				if obj.Kind == procmap.KindKernel || obj.Kind == procmap.KindModule {
					s.Object = symbolize.KernelPath
				}
			}
			if id, ok := l.addrs.ids[addrKey{obj, procmap.ObjAddr(e.Site.Addr)}]; ok && len(locs[id].Frames) > 0 {
				s.File, s.Line = locs[id].Frames[0].File, locs[id].Frames[0].Line
			}
			out[e.Site] = s
		}
	}
	return out
}

// recording fills in the facts read along the way.
func (l *loader) recording() Recording {
	rec := l.rec
	rec.Command = l.r.Features().Cmdline
	rec.Source = sourceName(l.srcs, l.used)
	if l.timed {
		rec.DurationNS = l.last - l.first
	}
	for _, a := range l.r.Attrs() {
		e := Event{Name: a.Name}
		if a.Attr.Freq() {
			e.Freq = a.Attr.SamplePeriod
		} else {
			e.Period = a.Attr.SamplePeriod
		}
		rec.Events = append(rec.Events, e)
	}
	return rec
}

func sortLBRKeys(keys []lbrKey) {
	slices.SortFunc(keys, func(a, b lbrKey) int {
		return cmp.Or(cmp.Compare(a.caller, b.caller), cmp.Compare(a.site, b.site), cmp.Compare(a.callee, b.callee))
	})
}
