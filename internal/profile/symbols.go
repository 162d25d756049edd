package profile

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"

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
// with LoadOptions.SiteLines through their DWARF too; the kernel through
// the kallsyms symbolize.FindKallsyms finds (a saved one, or
// /proc/kallsyms when the recording was made on this kernel). Each
// object's file is opened once, objects in parallel.
func (l *loader) symbolize() []symbolize.Location {
	keys := l.addrs.keys
	locs := make([]symbolize.Location, len(keys))
	groups := map[*procmap.Object]*symGroup{}
	var order []*symGroup
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
				g = &symGroup{key: key, open: key}
				if local, mapped := l.o.Objects[k.obj.Path]; mapped {
					g.open, g.local = symbolize.ObjectKey{Path: local}, true
				}
				order = append(order, g)
			}
			groups[k.obj] = g
		}
		if g != nil {
			g.ids = append(g.ids, i)
			g.addrs = append(g.addrs, symbolize.Addr(k.addr))
		}
	}
	so := symbolize.Options{SymFS: l.o.SymFS, DebugDirs: l.o.DebugDirs, Kallsyms: l.kernelPath}
	var res map[symbolize.ObjectKey]symbolize.Result
	if l.o.SiteLines { // the objects' DWARF: SymbolizeAll's parallel tables
		req := map[symbolize.ObjectKey][]symbolize.Addr{}
		for _, g := range order {
			if !g.local {
				req[g.key] = append(req[g.key], g.addrs...)
			}
		}
		res = symbolize.New(so).SymbolizeAll(req)
	}
	resolvers := l.openResolvers(order, so)
	next := map[symbolize.ObjectKey]int{} // objects of one key share its result
	for _, g := range order {
		var r symbolize.Result
		if o, ok := resolvers[g.open]; ok {
			if r.Err = o.err; r.Err == nil {
				r.Locations = o.r.Symbolize(g.addrs)
			}
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

// symGroup is the addresses of one object (ids and their object
// addresses), the key of its symbols, and the file they are read from: the
// key's, or (local) a file given for the object in LoadOptions.Objects.
type symGroup struct {
	key, open symbolize.ObjectKey
	local     bool
	ids       []int
	addrs     []symbolize.Addr
}

type openedResolver struct {
	local bool // a file given for an object: read as it is, without SymFS
	r     symbolize.Resolver
	err   error
}

// openResolver makes an opened object a Resolver (nil on error).
func openResolver(o *symbolize.Object, err error) (symbolize.Resolver, error) {
	if err != nil {
		return nil, err
	}
	return o, nil
}

// openResolvers opens, once per file and in parallel, the resolvers the
// groups need outside SymbolizeAll: the kernel's from its kallsyms text,
// for the addresses of every kernel object (the kernel and its modules);
// an object's from its ELF symbols, or with SiteLines from its DWARF too
// (a local file).
func (l *loader) openResolvers(order []*symGroup, so symbolize.Options) map[symbolize.ObjectKey]*openedResolver {
	out := map[symbolize.ObjectKey]*openedResolver{}
	var kernelAddrs []symbolize.Addr
	for _, g := range order {
		if g.key.Path == symbolize.KernelPath && !g.local {
			kernelAddrs = append(kernelAddrs, g.addrs...)
		}
		if (g.local || !l.o.SiteLines) && out[g.open] == nil {
			out[g.open] = &openedResolver{local: g.local}
		}
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for key, o := range out {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			opts := so
			if o.local {
				opts = symbolize.Options{DebugDirs: l.o.DebugDirs}
			}
			switch {
			case key.Path == symbolize.KernelPath && !o.local:
				o.r, o.err = l.kernelSymbols(kernelAddrs)
			case l.o.SiteLines: // a local file
				o.r, o.err = openResolver(symbolize.Open(key, opts))
			default:
				o.r, o.err = openResolver(symbolize.OpenSymbols(key, opts))
			}
		}()
	}
	wg.Wait()
	return out
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
	rec.Processes = l.processes()
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
