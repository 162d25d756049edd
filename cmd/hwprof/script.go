package main

import (
	"bufio"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

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
// branch stack. -F with perf's field names (comm, tid, time, ip, sym, dso,
// brstack, ...) prints those fields in perf script's layout instead. It
// reads the file in one pass (process model, unwinding), symbolizes each
// unique address of each object once, objects in parallel, and then prints.
func cmdScript(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("script", "[-i FILE] [--srcline] [-F FIELDS] [--symfs DIR] [--debug-dir DIR]", stderr)
	input := fs.String("i", "hwprof.data", "read the recording from `FILE`")
	srcline := fs.Bool("srcline", false, "print the source file and line of every frame, inlined frames included")
	fields := fs.String("F", "", "`FIELDS`: brstack and/or brstacksym add the branch stack to the default output; "+
		"any of "+strings.Join(scriptFieldNames[:], ",")+" print only those, in perf script's layout")
	symfs := fs.String("symfs", "", "look for every object under `DIR`, as perf's --symfs")
	debugDir := fs.String("debug-dir", "", "a `DIR` of binaries and debug files named by build-id")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	o, err := parseScriptFields(*fields)
	if err != nil {
		fmt.Fprintf(stderr, "hwprof script: %v\n", err)
		return exitUsage
	}
	o.srcline = o.srcline || *srcline
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

// scriptField is one of perf script's -F fields that hwprof prints.
type scriptField uint8

const (
	fieldComm scriptField = iota
	fieldTID
	fieldPID
	fieldCPU
	fieldTime
	fieldPeriod
	fieldEvent
	fieldIP
	fieldSym
	fieldSymOff
	fieldDSO
	fieldSrcline
	fieldBrstack
	fieldBrstackSym
	numScriptFields
)

var scriptFieldNames = [numScriptFields]string{
	"comm", "tid", "pid", "cpu", "time", "period", "event", "ip", "sym",
	"symoff", "dso", "srcline", "brstack", "brstacksym",
}

// parseScriptFields reads -F. Only brstack and brstacksym (hwprof's first
// use of -F) keep the default output and add the branch stack; any other
// field selects perf's field mode: exactly the fields named, laid out as
// perf script 6.1 prints them.
func parseScriptFields(list string) (scriptOptions, error) {
	var o scriptOptions
	for f := range strings.SplitSeq(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		i := slices.Index(scriptFieldNames[:], f)
		if i < 0 {
			return o, fmt.Errorf("unknown field %q in -F (known: %s)", f, strings.Join(scriptFieldNames[:], ", "))
		}
		o.fields |= 1 << i
	}
	o.brstack = o.has(fieldBrstack)
	o.brstackSym = o.has(fieldBrstackSym)
	o.srcline = o.has(fieldSrcline)
	o.perfFields = o.fields&^(1<<fieldBrstack|1<<fieldBrstackSym) != 0
	return o, nil
}

type scriptOptions struct {
	srcline, brstack, brstackSym bool
	perfFields                   bool   // -F named perf fields: print only those
	fields                       uint32 // bit i: scriptField i
}

func (o scriptOptions) has(f scriptField) bool { return o.fields&(1<<f) != 0 }

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
	callchain        bool // the sample has a callchain (or stack) to print as one
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
	files    *objectFiles
	unwinder *unwind.Unwinder
	buildIDs map[string]string // path -> build-id hex, from the recording
	// kernelLocal says whether the recorded kernel is the running one,
	// whose /proc/kallsyms then names kernel addresses; kernelWhy says
	// why not.
	kernelLocal bool
	kernelWhy   string
	kernelAsked bool // some address resolved to the kernel
	samples     []scriptSample
	frames      []scriptAddr
	branches    []scriptBranch
	// unique addresses per object
	keys    []symbolize.ObjectKey
	keyOf   map[*procmap.Object]int
	addrs   [][]symbolize.Addr
	addrIdx []map[symbolize.Addr]int
	results []symbolize.Result
	comms   map[string]string // interned command names
}

func newScripter(r *perfdata.Reader, o scriptOptions, so symbolize.Options) *scripter {
	sc := &scripter{
		r: r, o: o, symz: symbolize.New(so),
		buildIDs: map[string]string{},
		keyOf:    map[*procmap.Object]int{},
		comms:    map[string]string{},
	}
	for _, b := range r.Features().BuildIDs {
		if id := symbolize.CleanBuildID(hex.EncodeToString(b.ID)); id != "" {
			sc.buildIDs[b.Path] = id
		}
	}
	sc.kernelLocal, sc.kernelWhy = recordedKernelIsLocal(r.Features(), sc.buildIDs[symbolize.KernelPath])
	segs := procmap.NewSegments(so.SymFS)
	sc.files = &objectFiles{opts: so, segs: segs, found: map[string]string{}}
	sc.maps = procmap.New(segs)
	uo := unwind.Options{Open: sc.files.open}
	if sc.kernelLocal {
		if vdso, err := unwind.LocalVDSO(); err == nil {
			uo.VDSO = vdso // the recorded processes' vdso: same kernel
		}
	}
	sc.unwinder = unwind.New(uo)
	return sc
}

// recordedKernelIsLocal reports whether the recording was made on the
// running kernel: its [kernel.kallsyms] build-id is the running kernel's,
// or, when it names none, its OS release is the running one's (or it does
// not say). perf uses /proc/kallsyms on the same build-id test.
func recordedKernelIsLocal(f *perfdata.FileFeatures, recorded string) (bool, string) {
	if recorded != "" {
		local, err := symbolize.KernelBuildID()
		if err != nil {
			return false, fmt.Sprintf("the recording's kernel has build-id %s and the running kernel's is unknown (%v)", recorded, err)
		}
		if !symbolize.SameBuildID(recorded, local) {
			return false, fmt.Sprintf("the recording's kernel has build-id %s, the running kernel %s", recorded, local)
		}
		return true, ""
	}
	if f.OSRelease == "" {
		return true, ""
	}
	rel, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil || strings.TrimSpace(string(rel)) != f.OSRelease {
		return false, fmt.Sprintf("the recording was made on kernel %s, this is %s", f.OSRelease, strings.TrimSpace(string(rel)))
	}
	return true, ""
}

// objectFiles finds the file of each recorded object once: its recorded
// path (under --symfs) when the build-id matches, else a file named by
// its build-id under --debug-dir (symbolize.Options.Find). The process
// model then reads that file's PT_LOAD segments and the unwinder its CFI,
// so a binary found by build-id gets the same address arithmetic as one at
// its recorded path.
type objectFiles struct {
	opts  symbolize.Options
	segs  *procmap.Segments
	mu    sync.Mutex
	found map[string]string // recorded path -> file read ("" when none)
}

// locate finds the file for path (recorded with build-id id, or "") and
// gives its segments to the process model.
func (f *objectFiles) locate(path, id string) {
	if path == "" || strings.HasPrefix(path, "[") || strings.HasPrefix(path, "//") {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.found[path]; ok {
		return
	}
	file, _, err := f.opts.Find(symbolize.ObjectKey{Path: path, BuildID: id})
	f.found[path] = file
	if err != nil {
		return
	}
	if segs, err := procmap.ReadSegments(file); err == nil {
		f.segs.Set(path, segs)
	}
}

// open opens the file found for path (the unwinder's Options.Open).
func (f *objectFiles) open(path string) (*elf.File, error) {
	f.mu.Lock()
	file, ok := f.found[path]
	f.mu.Unlock()
	if !ok {
		file = path
		if f.opts.SymFS != "" {
			file = filepath.Join(f.opts.SymFS, path)
		}
	}
	if file == "" {
		return nil, fmt.Errorf("open %s: no file with the recorded build-id: %w", path, fs.ErrNotExist)
	}
	return elf.Open(file)
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
			if err != nil {
				continue
			}
			switch m := d.(type) {
			case *perf.Mmap:
				sc.files.locate(m.Filename, sc.buildIDs[m.Filename])
			case *perf.Mmap2:
				id := sc.buildIDs[m.Filename]
				if m.HasBuildID() {
					id = symbolize.CleanBuildID(hex.EncodeToString(m.BuildID))
				}
				sc.files.locate(m.Filename, id)
			}
			sc.maps.Apply(d)
		}
	}
	return sc.r.Err()
}

func (sc *scripter) addSample(s *perf.Sample, frames []unwind.Frame) {
	ev, _ := sc.r.Format().EventOf(sc.r.Record().Raw)
	ss := scriptSample{
		pid: s.PID, tid: s.TID, cpu: s.CPU, hasCPU: s.Has(perf.SampleCPU),
		time: s.Time, period: s.Period, event: ev, frames: len(sc.frames),
		callchain: s.Has(perf.SampleCallchain) || len(frames) > 1,
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
		sc.kernelAsked = true
		return symbolize.ObjectKey{Path: symbolize.KernelPath}, sc.kernelLocal
	case procmap.KindJIT:
		return symbolize.ObjectKey{Path: symbolize.PerfMapPath(int(pid))}, true
	case procmap.KindFile:
		id := sc.buildIDs[obj.Path]
		if len(obj.BuildID) > 0 {
			id = symbolize.CleanBuildID(hex.EncodeToString(obj.BuildID))
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
	if sc.kernelAsked && !sc.kernelLocal {
		fmt.Fprintf(stderr, "hwprof: warning: %s: kernel frames print as [unknown]\n", sc.kernelWhy)
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

// symName is the function's name or "[unknown]".
func (sc *scripter) symName(a scriptAddr) string {
	loc, ok := sc.location(a)
	if !ok || loc.Symbol == nil {
		return "[unknown]"
	}
	return loc.Symbol.Name.Full
}

// objName names an address's object as perf's dso name does: the
// recorded path, "[kernel.kallsyms]" for the kernel image (whose mapping
// is "[kernel.kallsyms]_text") and "[name]" for a module (kmod_path__parse:
// the file name without .ko and compression suffix, '-' made '_').
func objName(a scriptAddr) string {
	if a.obj == nil {
		return "[unknown]"
	}
	switch a.obj.Kind {
	case procmap.KindKernel:
		return symbolize.KernelPath
	case procmap.KindModule:
		if strings.HasPrefix(a.obj.Path, "[") {
			return a.obj.Path
		}
		name := filepath.Base(a.obj.Path)
		for _, ext := range []string{".gz", ".xz", ".zst", ".ko"} {
			name = strings.TrimSuffix(name, ext)
		}
		return "[" + strings.ReplaceAll(name, "-", "_") + "]"
	}
	return a.obj.Path
}

func (sc *scripter) print(w *bufio.Writer) {
	if sc.o.perfFields {
		sc.printFields(w)
		return
	}
	attrs := sc.r.Attrs()
	for _, s := range sc.samples {
		fmt.Fprintf(w, "%16s %6d/%-6d ", sc.commOf(s), s.pid, s.tid)
		if s.hasCPU {
			fmt.Fprintf(w, "[%03d] ", s.cpu)
		}
		fmt.Fprintf(w, "%d.%06d: %10d %s:", s.time/1e9, s.time%1e9/1e3, s.period, eventName(attrs, s.event))
		if s.branchTo > s.branch {
			sc.printBranches(w, sc.branches[s.branch:s.branchTo], false)
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

func eventName(attrs []perfdata.EventAttr, ev int) string {
	switch {
	case ev >= 0 && ev < len(attrs):
		return attrs[ev].Name
	case len(attrs) == 1:
		return attrs[0].Name
	}
	return "[unknown]"
}

func (sc *scripter) commOf(s scriptSample) string {
	if s.comm == "" {
		return ":" + fmt.Sprint(s.pid)
	}
	return s.comm
}

// printFields prints the -F fields of every sample in perf script 6.1's
// layout (perf_sample__fprintf_start, process_event, sample__fprintf_sym
// and perf_sample__fprintf_brstack* in tools/perf/builtin-script.c): the
// fields in perf's order whatever the order given, the event name padded
// to the longest, the frames of a callchain one per line, else the IP,
// symbol and object on the sample's line, then the branch stack.
func (sc *scripter) printFields(w *bufio.Writer) {
	o := sc.o
	attrs := sc.r.Attrs()
	width := 0
	for _, a := range attrs {
		width = max(width, len(a.Name))
	}
	for _, s := range sc.samples {
		if o.has(fieldComm) {
			if o.has(fieldIP) && s.callchain {
				fmt.Fprintf(w, "%s ", sc.commOf(s))
			} else {
				fmt.Fprintf(w, "%16s ", sc.commOf(s))
			}
		}
		switch {
		case o.has(fieldPID) && o.has(fieldTID):
			fmt.Fprintf(w, "%5d/%-5d ", s.pid, s.tid)
		case o.has(fieldPID):
			fmt.Fprintf(w, "%5d ", s.pid)
		case o.has(fieldTID):
			fmt.Fprintf(w, "%5d ", s.tid)
		}
		if o.has(fieldCPU) && s.hasCPU {
			fmt.Fprintf(w, "[%03d] ", s.cpu)
		}
		if o.has(fieldTime) {
			fmt.Fprintf(w, "%12s: ", fmt.Sprintf("%d.%06d", s.time/1e9, s.time%1e9/1e3))
		}
		if o.has(fieldPeriod) {
			fmt.Fprintf(w, "%10d ", s.period)
		}
		if o.has(fieldEvent) {
			fmt.Fprintf(w, "%*s: ", width, eventName(attrs, s.event))
		}
		if o.has(fieldIP) {
			frames := sc.frames[s.frames:s.framesTo]
			if s.callchain {
				w.WriteByte('\n')
				for _, f := range frames {
					w.WriteByte('\t')
					sc.printFrame(w, f)
					w.WriteByte('\n')
				}
			} else if len(frames) > 0 {
				w.WriteByte(' ')
				sc.printFrame(w, frames[0])
			}
		}
		if s.branchTo > s.branch {
			sc.printBranches(w, sc.branches[s.branch:s.branchTo], o.has(fieldDSO))
		}
		w.WriteByte('\n')
	}
}

// printFrame prints one frame as perf's sample__fprintf_sym: the address,
// the symbol (with +0xoffset for symoff), the object in parentheses, and
// with srcline the source lines.
func (sc *scripter) printFrame(w *bufio.Writer, f scriptAddr) {
	o := sc.o
	fmt.Fprintf(w, "%16x", f.addr)
	if o.has(fieldSym) || o.has(fieldSymOff) {
		w.WriteByte(' ')
		if o.has(fieldSymOff) {
			w.WriteString(sc.symOff(f))
		} else {
			w.WriteString(sc.symName(f))
		}
	}
	if o.has(fieldDSO) {
		fmt.Fprintf(w, " (%s)", objName(f))
	}
	if o.srcline {
		w.WriteByte('\n')
		sc.printSrcline(w, f)
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
// fields do (perf_sample__fprintf_brstack*, print_bstack_flags):
// from/to/predicted-or-mispredicted/in_tx/abort/cycles/type, each end with
// its object in parentheses when dso is printed too. perf prints a
// brstacksym entry without a space before it.
func (sc *scripter) printBranches(w *bufio.Writer, bs []scriptBranch, dso bool) {
	end := func(a scriptAddr, sym bool) {
		if sym {
			w.WriteString(sc.symOff(a))
		} else {
			fmt.Fprintf(w, "0x%x", a.addr)
		}
		if dso {
			fmt.Fprintf(w, "(%s)", objName(a))
		}
	}
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
		typ := ""
		if t := b.flags.FullType(); t != perf.BrUnknown {
			typ = t.String()
		}
		flags := fmt.Sprintf("/%s/%s/%s/%d/%s ", pred, tx, abort, b.flags.Cycles(), typ)
		if sc.o.brstack {
			w.WriteByte(' ')
			end(b.from, false)
			w.WriteByte('/')
			end(b.to, false)
			w.WriteString(flags)
		}
		if sc.o.brstackSym && !(sc.o.perfFields && sc.o.brstack) { // perf prints only brstack then
			if !sc.o.perfFields {
				w.WriteByte(' ')
			}
			end(b.from, true)
			w.WriteByte('/')
			end(b.to, true)
			w.WriteString(flags)
		}
	}
}
