package main

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/hwprof/hwprof/internal/procmap"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/perfdata"
	"github.com/hwprof/hwprof/symbolize"
	"github.com/hwprof/hwprof/unwind"
)

// cmdScript prints every sample of a recording as `perf script` does:
// command, pid/tid, cpu, time, period and event, then one line per frame
// (address, function+offset, object), with --srcline the source lines of
// each frame including inlined ones, and with -F brstack/brstacksym the
// branch stack. It reads the file in one pass (process model, unwinding),
// symbolizes each unique address of each object once, objects in
// parallel, and then prints.
func cmdScript(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("script", "[-i FILE] [--srcline] [-F brstack,brstacksym] [--symfs DIR] [--debug-dir DIR]", stderr)
	input := fs.String("i", "hwprof.data", "read the recording from `FILE`")
	srcline := fs.Bool("srcline", false, "print the source file and line of every frame, inlined frames included")
	fields := fs.String("F", "", "extra fields: `brstack` (branch stack addresses) and/or brstacksym (symbolized)")
	symfs := fs.String("symfs", "", "look for every object under `DIR`, as perf's --symfs")
	debugDir := fs.String("debug-dir", "", "a `DIR` of binaries and debug files named by build-id")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	var o scriptOptions
	o.srcline = *srcline
	for f := range strings.SplitSeq(*fields, ",") {
		switch strings.TrimSpace(f) {
		case "":
		case "brstack":
			o.brstack = true
		case "brstacksym":
			o.brstackSym = true
		default:
			fmt.Fprintf(stderr, "hwprof script: unknown field %q in -F (known: brstack, brstacksym)\n", f)
			return exitUsage
		}
	}
	so := symbolize.Options{SymFS: *symfs}
	if *debugDir != "" {
		so.DebugDirs = []string{*debugDir}
	}
	r, err := perfdata.Open(*input)
	if err != nil {
		return fail(stderr, err)
	}
	defer r.Close()
	sc := newScripter(r, o, so)
	if err := sc.read(); err != nil {
		fmt.Fprintf(stderr, "hwprof: %v (printing the %d samples read before it)\n", err, len(sc.samples))
	}
	sc.symbolize(stderr)
	w := bufio.NewWriterSize(stdout, 1<<16)
	sc.print(w)
	if err := w.Flush(); err != nil {
		return fail(stderr, err)
	}
	if err != nil {
		return exitError
	}
	return 0
}

type scriptOptions struct {
	srcline, brstack, brstackSym bool
}

// scriptSample is what is printed of one sample; its frames and branches
// are ranges of the scripter's shared slices.
type scriptSample struct {
	comm             string
	pid, tid, cpu    uint32
	hasCPU           bool
	time, period     uint64
	event            int
	frames, framesTo int
	branch, branchTo int
}

// scriptAddr is one address to print: where it resolves (key and index
// into that object's unique addresses) once symbolized.
type scriptAddr struct {
	addr uint64
	obj  *procmap.Object
	key  int // index in scripter.keys, -1 when unmapped
	idx  int // index in the object's addresses
}

type scriptBranch struct {
	from, to scriptAddr
	flags    perf.BranchFlags
}

type scripter struct {
	r        *perfdata.Reader
	o        scriptOptions
	symz     *symbolize.Symbolizer
	maps     *procmap.Map
	unwinder *unwind.Unwinder
	buildIDs map[string]string // path -> build-id hex, from the recording
	samples  []scriptSample
	frames   []scriptAddr
	branches []scriptBranch
	// unique addresses per object
	keys    []symbolize.ObjectKey
	keyOf   map[*procmap.Object]int
	addrs   [][]symbolize.Addr
	addrIdx []map[symbolize.Addr]int
	results []symbolize.Result
	comms   map[string]string // interned command names
}

func newScripter(r *perfdata.Reader, o scriptOptions, so symbolize.Options) *scripter {
	uo := unwind.Options{Root: so.SymFS}
	if vdso, err := unwind.LocalVDSO(); err == nil {
		uo.VDSO = vdso // the recorded processes' vdso, when recorded here
	}
	sc := &scripter{
		r: r, o: o, symz: symbolize.New(so),
		maps:     procmap.New(procmap.NewSegments(so.SymFS)),
		unwinder: unwind.New(uo),
		buildIDs: map[string]string{},
		keyOf:    map[*procmap.Object]int{},
		comms:    map[string]string{},
	}
	for _, b := range r.Features().BuildIDs {
		sc.buildIDs[b.Path] = hex.EncodeToString(b.ID)
	}
	return sc
}

// read applies every record to the process model and unwinds every
// sample, collecting the unique addresses of each object.
func (sc *scripter) read() error {
	var s perf.Sample
	var frames []unwind.Frame
	for sc.r.Next() {
		rec := sc.r.Record()
		switch rec.Type() {
		case perf.RecordSample:
			if err := sc.r.DecodeSample(&s); err != nil {
				continue // counted by the reader's warnings
			}
			frames, _ = sc.unwinder.Append(frames[:0], &s, sc.maps)
			sc.addSample(&s, frames)
		case perf.RecordMmap, perf.RecordMmap2, perf.RecordComm, perf.RecordFork, perf.RecordExit:
			d, err := sc.r.Format().Decode(rec.Raw)
			if err == nil {
				sc.maps.Apply(d)
			}
		}
	}
	return sc.r.Err()
}

func (sc *scripter) addSample(s *perf.Sample, frames []unwind.Frame) {
	ev, _ := sc.r.Format().EventOf(sc.r.Record().Raw)
	ss := scriptSample{
		pid: s.PID, tid: s.TID, cpu: s.CPU, hasCPU: s.Has(perf.SampleCPU),
		time: s.Time, period: s.Period, event: ev, frames: len(sc.frames),
	}
	if !s.Has(perf.SamplePeriod) && ev >= 0 && ev < sc.r.Format().Len() {
		if a := sc.r.Format().Attr(ev); !a.Freq() {
			ss.period = a.SamplePeriod // a fixed period (-c) is not in the samples
		}
	}
	if p, ok := sc.maps.Process(s.PID); ok {
		ss.comm = sc.intern(p.Comm)
	}
	if len(frames) == 0 && s.Has(perf.SampleIP) {
		m, oa, ok := sc.maps.Lookup(s.PID, s.TID, s.Time, procmap.Addr(s.IP))
		frames = append(frames, unwind.Frame{Addr: procmap.Addr(s.IP), Kind: unwind.FrameIP})
		if ok {
			frames[0].Object, frames[0].ObjAddr = m.Object, oa
		}
	}
	for _, f := range frames {
		sc.frames = append(sc.frames, sc.want(uint64(f.Addr), f.Object, f.LookupAddr(), s.PID))
	}
	ss.framesTo = len(sc.frames)
	ss.branch = len(sc.branches)
	if sc.o.brstack || sc.o.brstackSym {
		for _, b := range s.Branches {
			sc.branches = append(sc.branches, scriptBranch{
				from: sc.wantRuntime(s, b.From), to: sc.wantRuntime(s, b.To), flags: b.Flags,
			})
		}
	}
	ss.branchTo = len(sc.branches)
	sc.samples = append(sc.samples, ss)
}

func (sc *scripter) intern(s string) string {
	if v, ok := sc.comms[s]; ok {
		return v
	}
	sc.comms[s] = s
	return s
}

// wantRuntime resolves a runtime address (a branch end) of the sample's
// process and asks for it.
func (sc *scripter) wantRuntime(s *perf.Sample, a uint64) scriptAddr {
	m, oa, ok := sc.maps.Lookup(s.PID, s.TID, s.Time, procmap.Addr(a))
	if !ok {
		return scriptAddr{addr: a, key: -1}
	}
	return sc.want(a, m.Object, oa, s.PID)
}

// want records that addr (in obj at objAddr) is to be symbolized.
func (sc *scripter) want(addr uint64, obj *procmap.Object, objAddr procmap.ObjAddr, pid uint32) scriptAddr {
	sa := scriptAddr{addr: addr, obj: obj, key: -1}
	if obj == nil {
		return sa
	}
	k, ok := sc.keyOf[obj]
	if !ok {
		key, symbolizable := sc.objectKey(obj, pid)
		k = -1
		if symbolizable {
			k = len(sc.keys)
			sc.keys = append(sc.keys, key)
			sc.addrs = append(sc.addrs, nil)
			sc.addrIdx = append(sc.addrIdx, map[symbolize.Addr]int{})
		}
		sc.keyOf[obj] = k
	}
	if k < 0 {
		return sa
	}
	a := symbolize.Addr(objAddr)
	i, ok := sc.addrIdx[k][a]
	if !ok {
		i = len(sc.addrs[k])
		sc.addrs[k] = append(sc.addrs[k], a)
		sc.addrIdx[k][a] = i
	}
	sa.key, sa.idx = k, i
	return sa
}

// objectKey names the resolver of an object: the kernel's kallsyms, a
// JIT region's perf map, or a file with the build-id the recording gives.
func (sc *scripter) objectKey(obj *procmap.Object, pid uint32) (symbolize.ObjectKey, bool) {
	switch obj.Kind {
	case procmap.KindKernel, procmap.KindModule:
		return symbolize.ObjectKey{Path: symbolize.KernelPath}, true
	case procmap.KindJIT:
		return symbolize.ObjectKey{Path: symbolize.PerfMapPath(int(pid))}, true
	case procmap.KindFile:
		id := sc.buildIDs[obj.Path]
		if len(obj.BuildID) > 0 {
			id = hex.EncodeToString(obj.BuildID)
		}
		return symbolize.ObjectKey{Path: obj.Path, BuildID: id}, true
	}
	return symbolize.ObjectKey{}, false
}

// symbolize resolves every object's unique addresses at once; objects
// that cannot be read (missing, build-id mismatch) are reported once.
func (sc *scripter) symbolize(stderr io.Writer) {
	req := make(map[symbolize.ObjectKey][]symbolize.Addr, len(sc.keys))
	for k, key := range sc.keys {
		req[key] = sc.addrs[k]
	}
	res := sc.symz.SymbolizeAll(req)
	sc.results = make([]symbolize.Result, len(sc.keys))
	for k, key := range sc.keys {
		sc.results[k] = res[key]
		if err := res[key].Err; err != nil && key.Path != symbolize.KernelPath && !isPerfMap(key.Path) {
			var mm *symbolize.BuildIDMismatchError
			if errors.As(err, &mm) {
				fmt.Fprintf(stderr, "hwprof: warning: %v: its frames print as [unknown]\n", err)
			} else {
				fmt.Fprintf(stderr, "hwprof: warning: cannot symbolize %s: %v\n", key.Path, err)
			}
		}
	}
}

func isPerfMap(path string) bool { return strings.HasPrefix(path, "/tmp/perf-") }

func (sc *scripter) location(a scriptAddr) (symbolize.Location, bool) {
	if a.key < 0 || sc.results[a.key].Err != nil || a.idx >= len(sc.results[a.key].Locations) {
		return symbolize.Location{}, false
	}
	return sc.results[a.key].Locations[a.idx], true
}

// symOff is "function+0xoff" or "[unknown]".
func (sc *scripter) symOff(a scriptAddr) string {
	loc, ok := sc.location(a)
	if !ok || loc.Symbol == nil {
		return "[unknown]"
	}
	off, _ := loc.Offset()
	return fmt.Sprintf("%s+0x%x", loc.Symbol.Name.Full, off)
}

func objName(a scriptAddr) string {
	if a.obj == nil {
		return "[unknown]"
	}
	return a.obj.Path
}

func (sc *scripter) print(w *bufio.Writer) {
	attrs := sc.r.Attrs()
	for _, s := range sc.samples {
		event := "?"
		if s.event >= 0 && s.event < len(attrs) {
			event = attrs[s.event].Name
		} else if len(attrs) == 1 {
			event = attrs[0].Name
		}
		comm := s.comm
		if comm == "" {
			comm = ":" + fmt.Sprint(s.pid)
		}
		fmt.Fprintf(w, "%16s %6d/%-6d ", comm, s.pid, s.tid)
		if s.hasCPU {
			fmt.Fprintf(w, "[%03d] ", s.cpu)
		}
		fmt.Fprintf(w, "%d.%06d: %10d %s:", s.time/1e9, s.time%1e9/1e3, s.period, event)
		if s.branchTo > s.branch {
			sc.printBranches(w, sc.branches[s.branch:s.branchTo])
		}
		w.WriteByte('\n')
		for _, f := range sc.frames[s.frames:s.framesTo] {
			fmt.Fprintf(w, "\t%16x %s (%s)\n", f.addr, sc.symOff(f), objName(f))
			if sc.o.srcline {
				sc.printSrcline(w, f)
			}
		}
		w.WriteByte('\n')
	}
}

// printSrcline prints the source frames of an address, innermost first;
// inlined frames say into which function they were inlined.
func (sc *scripter) printSrcline(w *bufio.Writer, a scriptAddr) {
	loc, ok := sc.location(a)
	if !ok {
		return
	}
	for i, fr := range loc.Frames {
		if fr.File == "" {
			continue
		}
		fmt.Fprintf(w, "\t%16s %s:%d", "", fr.File, fr.Line)
		if fr.Inlined && i+1 < len(loc.Frames) {
			fmt.Fprintf(w, " %s (inlined into %s)", fr.Func.Short, loc.Frames[i+1].Func.Short)
		}
		w.WriteByte('\n')
	}
}

// printBranches prints the branch stack as perf's brstack and brstacksym
// fields do: from/to/predicted-or-mispredicted/in_tx/abort/cycles.
func (sc *scripter) printBranches(w *bufio.Writer, bs []scriptBranch) {
	for _, b := range bs {
		pred := "-"
		if b.flags.Mispred() {
			pred = "M"
		} else if b.flags.Predicted() {
			pred = "P"
		}
		tx, abort := "-", "-"
		if b.flags.InTX() {
			tx = "X"
		}
		if b.flags.Abort() {
			abort = "A"
		}
		if sc.o.brstack {
			fmt.Fprintf(w, " 0x%x/0x%x/%s/%s/%s/%d", b.from.addr, b.to.addr, pred, tx, abort, b.flags.Cycles())
		}
		if sc.o.brstackSym {
			fmt.Fprintf(w, " %s/%s/%s/%s/%s/%d", sc.symOff(b.from), sc.symOff(b.to), pred, tx, abort, b.flags.Cycles())
		}
	}
}
