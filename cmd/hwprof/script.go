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
	"strconv"
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
	input := fs.String("i", defaultInput, inputUsage)
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
	// Function names alone come from the symbol tables; DWARF is read
	// only for source lines.
	so := symbolize.Options{SymFS: *symfs, SymbolsOnly: !o.srcline}
	if *debugDir != "" {
		so.DebugDirs = []string{*debugDir}
	}
	r, err := openRecording(*input)
	if err != nil {
		return fail(stderr, err)
	}
	defer r.Close()
	sc := newScripter(r, o, so)
	defer sc.cleanup()
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
// are ranges of the scripter's shared slices. It holds no pointers, so a
// million of them cost the garbage collector nothing.
type scriptSample struct {
	pid, tid, cpu    uint32
	comm             int32 // index in scripter.commList, -1 when unknown
	event            int32
	time, period     uint64
	frames, framesTo uint32
	branch, branchTo uint32
	hasCPU           bool
	callchain        bool // the sample has a callchain (or stack) to print as one
}

// scriptAddr is one address to print: its object (an index in
// scripter.objs, -1 when unmapped) and, once symbolized, where its symbol
// is: the index of its object-relative address among its key's unique
// addresses. It holds no pointers.
type scriptAddr struct {
	addr uint64
	obj  int32
	idx  uint32 // index | backBit
}

// backBit in scriptAddr.idx marks a return address, looked up at the call
// (ra-1): the offset printed is still addr's own, as perf prints it.
const backBit = 1 << 31

func (a scriptAddr) index() int { return int(a.idx &^ backBit) }

func (a scriptAddr) back() uint64 { return uint64(a.idx >> 31) }

// scriptSym is the symbol of one unique address: its name ("" when
// unknown) and the address's offset in it.
type scriptSym struct {
	name string
	off  uint64
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
	// kernelLocal says whether the recorded kernel is the running one
	// (whose vdso is the recorded one); kernelSyms whether a kallsyms
	// names its addresses (symbolize.FindKallsyms), kernelWhy why not.
	kernelLocal bool
	kernelSyms  bool
	kernelWhy   string
	kernelAsked bool // some address resolved to the kernel
	// vdso is this kernel's vdso image when the recording was made on
	// it; vdsoFile holds it for symbolizing, written on first need.
	vdso     []byte
	vdsoFile string
	samples  []scriptSample
	frames   []scriptAddr
	branches []scriptBranch
	// the objects of the addresses, each with its printed name and its
	// key (-1: not symbolizable)
	objs     []*procmap.Object
	objNames []string
	objKey   []int32
	objIdx   map[*procmap.Object]int32
	lastObj  *procmap.Object // the object of the last address asked for
	lastIdx  int32           // and its index
	// unique addresses per key
	keys     []symbolize.ObjectKey
	keyIdx   map[symbolize.ObjectKey]int32
	addrs    [][]symbolize.Addr
	addrIdx  []map[symbolize.Addr]uint32
	results  []symbolize.Result
	syms     [][]scriptSym // per key, per unique address
	commList []string
	comms    map[string]int32 // index in commList
}

func newScripter(r *perfdata.Reader, o scriptOptions, so symbolize.Options) *scripter {
	buildIDs := map[string]string{}
	for _, b := range r.Features().BuildIDs {
		if id := symbolize.CleanBuildID(hex.EncodeToString(b.ID)); id != "" {
			buildIDs[b.Path] = id
		}
	}
	f := r.Features()
	kid := buildIDs[symbolize.KernelPath]
	local, _ := symbolize.KernelIsLocal(kid, f.OSRelease, f.Hostname)
	var why string
	so.Kallsyms, why = symbolize.FindKallsyms(so, kid, f.OSRelease, f.Hostname)
	sc := &scripter{
		r: r, o: o, symz: symbolize.New(so),
		buildIDs:    buildIDs,
		kernelLocal: local,
		kernelSyms:  so.Kallsyms != "",
		kernelWhy:   why,
		objIdx:      map[*procmap.Object]int32{},
		keyIdx:      map[symbolize.ObjectKey]int32{},
		comms:       map[string]int32{},
	}
	segs := procmap.NewSegments(so.SymFS)
	sc.files = &objectFiles{opts: so, segs: segs, found: map[string]string{}}
	sc.maps = procmap.New(segs)
	uo := unwind.Options{Open: sc.files.open}
	if sc.kernelLocal {
		if vdso, err := unwind.LocalVDSO(); err == nil {
			uo.VDSO = vdso // the recorded processes' vdso: same kernel
			sc.vdso = vdso
		}
	}
	sc.unwinder = unwind.New(uo)
	return sc
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
		pid: s.PID, tid: s.TID, cpu: s.CPU, hasCPU: s.Has(perf.SampleCPU), comm: -1,
		time: s.Time, period: s.Period, event: int32(ev), frames: uint32(len(sc.frames)),
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
		a := sc.want(uint64(f.Addr), f.Object, f.LookupAddr(), s.PID)
		if f.ObjAddr != f.LookupAddr() && a.obj >= 0 && sc.objKey[a.obj] >= 0 {
			a.idx |= backBit
		}
		sc.frames = append(sc.frames, a)
	}
	ss.framesTo = uint32(len(sc.frames))
	ss.branch = uint32(len(sc.branches))
	if sc.o.brstack || sc.o.brstackSym {
		for _, b := range s.Branches {
			sc.branches = append(sc.branches, scriptBranch{
				from: sc.wantRuntime(s, b.From), to: sc.wantRuntime(s, b.To), flags: b.Flags,
			})
		}
	}
	ss.branchTo = uint32(len(sc.branches))
	sc.samples = append(sc.samples, ss)
}

func (sc *scripter) intern(s string) int32 {
	if v, ok := sc.comms[s]; ok {
		return v
	}
	i := int32(len(sc.commList))
	sc.commList = append(sc.commList, s)
	sc.comms[s] = i
	return i
}

// wantRuntime resolves a runtime address (a branch end) of the sample's
// process and asks for it.
func (sc *scripter) wantRuntime(s *perf.Sample, a uint64) scriptAddr {
	m, oa, ok := sc.maps.Lookup(s.PID, s.TID, s.Time, procmap.Addr(a))
	if !ok {
		return scriptAddr{addr: a, obj: -1}
	}
	return sc.want(a, m.Object, oa, s.PID)
}

// want records that addr (in obj at objAddr) is to be symbolized, once
// per unique address of its key.
func (sc *scripter) want(addr uint64, obj *procmap.Object, objAddr procmap.ObjAddr, pid uint32) scriptAddr {
	sa := scriptAddr{addr: addr, obj: -1}
	if obj == nil {
		return sa
	}
	o := sc.lastIdx
	if obj != sc.lastObj {
		var ok bool
		if o, ok = sc.objIdx[obj]; !ok {
			o = sc.addObject(obj, pid)
		}
		sc.lastObj, sc.lastIdx = obj, o
	}
	sa.obj = o
	k := sc.objKey[o]
	if k < 0 {
		return sa
	}
	a := symbolize.Addr(objAddr)
	i, ok := sc.addrIdx[k][a]
	if !ok {
		i = uint32(len(sc.addrs[k]))
		sc.addrs[k] = append(sc.addrs[k], a)
		sc.addrIdx[k][a] = i
	}
	sa.idx = i
	return sa
}

// addObject numbers a new object and finds its key. Objects with one key
// (the kernel and its modules, a file seen under two inodes) share one
// list of addresses.
func (sc *scripter) addObject(obj *procmap.Object, pid uint32) int32 {
	o := int32(len(sc.objs))
	sc.objIdx[obj] = o
	sc.objs = append(sc.objs, obj)
	sc.objNames = append(sc.objNames, objName(obj))
	k := int32(-1)
	if key, ok := sc.objectKey(obj, pid); ok {
		if k, ok = sc.keyIdx[key]; !ok {
			k = int32(len(sc.keys))
			sc.keyIdx[key] = k
			sc.keys = append(sc.keys, key)
			sc.addrs = append(sc.addrs, nil)
			sc.addrIdx = append(sc.addrIdx, map[symbolize.Addr]uint32{})
		}
	}
	sc.objKey = append(sc.objKey, k)
	return o
}

// objectKey names the resolver of an object: the kernel's kallsyms, a
// JIT region's perf map, or a file with the build-id the recording gives.
func (sc *scripter) objectKey(obj *procmap.Object, pid uint32) (symbolize.ObjectKey, bool) {
	switch obj.Kind {
	case procmap.KindKernel, procmap.KindModule:
		sc.kernelAsked = true
		return symbolize.ObjectKey{Path: symbolize.KernelPath}, sc.kernelSyms
	case procmap.KindJIT:
		return symbolize.ObjectKey{Path: symbolize.PerfMapPath(int(pid))}, true
	case procmap.KindVDSO:
		return symbolize.ObjectKey{Path: sc.vdsoPath()}, sc.vdsoPath() != ""
	case procmap.KindFile:
		id := sc.buildIDs[obj.Path]
		if len(obj.BuildID) > 0 {
			id = symbolize.CleanBuildID(hex.EncodeToString(obj.BuildID))
		}
		return symbolize.ObjectKey{Path: obj.Path, BuildID: id}, true
	}
	return symbolize.ObjectKey{}, false
}

// vdsoPath returns a file holding the running kernel's vdso, for a
// recording made on this kernel, or "". The file is removed by cleanup.
func (sc *scripter) vdsoPath() string {
	if sc.vdsoFile != "" || sc.vdso == nil {
		return sc.vdsoFile
	}
	p, err := symbolize.TempObject(sc.vdso, "hwprof-vdso-*.so")
	if err != nil {
		sc.vdso = nil
		return ""
	}
	sc.vdsoFile = p
	return sc.vdsoFile
}

// cleanup removes the files the scripter wrote.
func (sc *scripter) cleanup() {
	if sc.vdsoFile != "" {
		os.Remove(sc.vdsoFile)
	}
}

// symbolize resolves every object's unique addresses at once; objects
// that cannot be read (missing, build-id mismatch) are reported once.
func (sc *scripter) symbolize(stderr io.Writer) {
	req := make(map[symbolize.ObjectKey][]symbolize.Addr, len(sc.keys))
	for k, key := range sc.keys {
		req[key] = sc.addrs[k]
	}
	if sc.kernelAsked && !sc.kernelSyms {
		fmt.Fprintf(stderr, "hwprof: warning: %s: kernel frames print as [unknown]\n", sc.kernelWhy)
	}
	res := sc.symz.SymbolizeAll(req)
	sc.results = make([]symbolize.Result, len(sc.keys))
	sc.syms = make([][]scriptSym, len(sc.keys))
	for k, key := range sc.keys {
		sc.results[k] = res[key]
		sc.syms[k] = make([]scriptSym, len(sc.addrs[k]))
		for i, loc := range res[key].Locations {
			if i < len(sc.syms[k]) && loc.Symbol != nil {
				off, _ := loc.Offset()
				sc.syms[k][i] = scriptSym{name: loc.Symbol.Name.Full, off: off}
			}
		}
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
	if a.obj < 0 || sc.objKey[a.obj] < 0 {
		return symbolize.Location{}, false
	}
	r := sc.results[sc.objKey[a.obj]]
	if r.Err != nil || a.index() >= len(r.Locations) {
		return symbolize.Location{}, false
	}
	return r.Locations[a.index()], true
}

// sym returns the symbol of a, or false.
func (sc *scripter) sym(a scriptAddr) (scriptSym, bool) {
	if a.obj < 0 || sc.objKey[a.obj] < 0 {
		return scriptSym{}, false
	}
	syms := sc.syms[sc.objKey[a.obj]]
	if a.index() >= len(syms) {
		return scriptSym{}, false
	}
	ss := syms[a.index()]
	return ss, ss.name != ""
}

// appendSymOff appends "function+0xoff" (the offset of a's own address)
// or "[unknown]".
func (sc *scripter) appendSymOff(b []byte, a scriptAddr) []byte {
	ss, ok := sc.sym(a)
	if !ok {
		return append(b, "[unknown]"...)
	}
	b = append(b, ss.name...)
	b = append(b, "+0x"...)
	return strconv.AppendUint(b, ss.off+a.back(), 16)
}

// appendSym appends the function's name or "[unknown]".
func (sc *scripter) appendSym(b []byte, a scriptAddr) []byte {
	ss, ok := sc.sym(a)
	if !ok {
		return append(b, "[unknown]"...)
	}
	return append(b, ss.name...)
}

// objName names an object as perf's dso name does: the recorded path,
// "[kernel.kallsyms]" for the kernel image (whose mapping is
// "[kernel.kallsyms]_text") and "[name]" for a module (kmod_path__parse:
// the file name without .ko and compression suffix, '-' made '_').
func objName(obj *procmap.Object) string {
	switch obj.Kind {
	case procmap.KindKernel:
		return symbolize.KernelPath
	case procmap.KindModule:
		if strings.HasPrefix(obj.Path, "[") {
			return obj.Path
		}
		name := filepath.Base(obj.Path)
		for _, ext := range []string{".gz", ".xz", ".zst", ".ko"} {
			name = strings.TrimSuffix(name, ext)
		}
		return "[" + strings.ReplaceAll(name, "-", "_") + "]"
	}
	return obj.Path
}

// objName is the name printed for a's object, "[unknown]" when unmapped.
func (sc *scripter) objName(a scriptAddr) string {
	if a.obj < 0 {
		return "[unknown]"
	}
	return sc.objNames[a.obj]
}

func (sc *scripter) print(w *bufio.Writer) {
	if sc.o.perfFields {
		sc.printFields(w)
		return
	}
	attrs := sc.r.Attrs()
	var b []byte
	for _, s := range sc.samples {
		b = appendPadLeft(b[:0], sc.commOf(s), 16)
		b = append(b, ' ')
		b = appendPadLeft(b, strconv.FormatUint(uint64(s.pid), 10), 6)
		b = append(b, '/')
		b = appendPadRight(b, strconv.FormatUint(uint64(s.tid), 10), 6)
		b = append(b, ' ')
		if s.hasCPU {
			b = append(b, '[')
			b = appendZeroPad(b, uint64(s.cpu), 3)
			b = append(b, "] "...)
		}
		b = appendTime(b, s.time)
		b = append(b, ": "...)
		b = appendPadLeft(b, strconv.FormatUint(s.period, 10), 10)
		b = append(b, ' ')
		b = append(b, eventName(attrs, int(s.event))...)
		b = append(b, ':')
		if s.branchTo > s.branch {
			b = sc.appendBranches(b, sc.branches[s.branch:s.branchTo], false)
		}
		b = append(b, '\n')
		w.Write(b)
		for _, f := range sc.frames[s.frames:s.framesTo] {
			b = append(b[:0], '\t')
			b = appendHexPad(b, f.addr, 16)
			b = append(b, ' ')
			b = sc.appendSymOff(b, f)
			b = append(b, " ("...)
			b = append(b, sc.objName(f)...)
			b = append(b, ")\n"...)
			w.Write(b)
			if sc.o.srcline {
				sc.printSrcline(w, f)
			}
		}
		w.WriteByte('\n')
	}
}

// appendPadLeft appends s right-aligned in width columns (%*s).
func appendPadLeft(b []byte, s string, width int) []byte {
	for range width - len(s) {
		b = append(b, ' ')
	}
	return append(b, s...)
}

// appendPadRight appends s left-aligned in width columns (%-*s).
func appendPadRight(b []byte, s string, width int) []byte {
	b = append(b, s...)
	for range width - len(s) {
		b = append(b, ' ')
	}
	return b
}

// appendHexPad appends v in hex right-aligned in width columns (%*x).
func appendHexPad(b []byte, v uint64, width int) []byte {
	return appendPadded(b, v, 16, width, ' ')
}

// appendZeroPad appends v in decimal with leading zeros to width (%0*d).
func appendZeroPad(b []byte, v uint64, width int) []byte {
	return appendPadded(b, v, 10, width, '0')
}

// appendPadded appends v in base, padded on the left with pad to width.
func appendPadded(b []byte, v uint64, base, width int, pad byte) []byte {
	var buf [20]byte
	d := strconv.AppendUint(buf[:0], v, base)
	for range width - len(d) {
		b = append(b, pad)
	}
	return append(b, d...)
}

// appendTime appends a perf clock time as seconds.microseconds.
func appendTime(b []byte, t uint64) []byte {
	b = strconv.AppendUint(b, t/1e9, 10)
	b = append(b, '.')
	return appendZeroPad(b, t%1e9/1e3, 6)
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
	if s.comm < 0 {
		return ":" + strconv.FormatUint(uint64(s.pid), 10)
	}
	return sc.commList[s.comm]
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
	var b []byte
	for _, s := range sc.samples {
		b = b[:0]
		if o.has(fieldComm) {
			if o.has(fieldIP) && s.callchain {
				b = append(b, sc.commOf(s)...)
			} else {
				b = appendPadLeft(b, sc.commOf(s), 16)
			}
			b = append(b, ' ')
		}
		pid, tid := strconv.FormatUint(uint64(s.pid), 10), strconv.FormatUint(uint64(s.tid), 10)
		switch {
		case o.has(fieldPID) && o.has(fieldTID):
			b = appendPadLeft(b, pid, 5)
			b = append(b, '/')
			b = appendPadRight(b, tid, 5)
			b = append(b, ' ')
		case o.has(fieldPID):
			b = append(appendPadLeft(b, pid, 5), ' ')
		case o.has(fieldTID):
			b = append(appendPadLeft(b, tid, 5), ' ')
		}
		if o.has(fieldCPU) && s.hasCPU {
			b = append(b, '[')
			b = appendZeroPad(b, uint64(s.cpu), 3)
			b = append(b, "] "...)
		}
		if o.has(fieldTime) {
			b = appendPadLeft(b, string(appendTime(nil, s.time)), 12)
			b = append(b, ": "...)
		}
		if o.has(fieldPeriod) {
			b = append(appendPadLeft(b, strconv.FormatUint(s.period, 10), 10), ' ')
		}
		if o.has(fieldEvent) {
			b = appendPadLeft(b, eventName(attrs, int(s.event)), width)
			b = append(b, ": "...)
		}
		if o.has(fieldIP) {
			frames := sc.frames[s.frames:s.framesTo]
			if s.callchain {
				b = append(b, '\n')
				for _, f := range frames {
					b = append(b, '\t')
					b = sc.appendFrame(b, f)
					b = append(b, '\n')
					if o.srcline {
						w.Write(b)
						b = b[:0]
						sc.printSrcline(w, f)
					}
				}
			} else if len(frames) > 0 {
				b = append(b, ' ')
				b = sc.appendFrame(b, frames[0])
				if o.srcline {
					b = append(b, '\n')
					w.Write(b)
					b = b[:0]
					sc.printSrcline(w, frames[0])
				}
			}
		}
		if s.branchTo > s.branch {
			b = sc.appendBranches(b, sc.branches[s.branch:s.branchTo], o.has(fieldDSO))
		}
		b = append(b, '\n')
		w.Write(b)
	}
}

// appendFrame appends one frame as perf's sample__fprintf_sym: the
// address, the symbol (with +0xoffset for symoff) and the object in
// parentheses.
func (sc *scripter) appendFrame(b []byte, f scriptAddr) []byte {
	o := sc.o
	b = appendHexPad(b, f.addr, 16)
	if o.has(fieldSym) || o.has(fieldSymOff) {
		b = append(b, ' ')
		if o.has(fieldSymOff) {
			b = sc.appendSymOff(b, f)
		} else {
			b = sc.appendSym(b, f)
		}
	}
	if o.has(fieldDSO) {
		b = append(b, " ("...)
		b = append(b, sc.objName(f)...)
		b = append(b, ')')
	}
	return b
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

// appendBranches appends the branch stack as perf's brstack and
// brstacksym fields do (perf_sample__fprintf_brstack*,
// print_bstack_flags): from/to/predicted-or-mispredicted/in_tx/abort/
// cycles/type, each end with its object in parentheses when dso is printed
// too. perf prints a brstacksym entry without a space before it.
func (sc *scripter) appendBranches(b []byte, bs []scriptBranch, dso bool) []byte {
	end := func(b []byte, a scriptAddr, sym bool) []byte {
		if sym {
			b = sc.appendSymOff(b, a)
		} else {
			b = append(b, "0x"...)
			b = strconv.AppendUint(b, a.addr, 16)
		}
		if dso {
			b = append(b, '(')
			b = append(b, sc.objName(a)...)
			b = append(b, ')')
		}
		return b
	}
	flags := func(b []byte, f perf.BranchFlags) []byte {
		switch {
		case f.Mispred():
			b = append(b, "/M/"...)
		case f.Predicted():
			b = append(b, "/P/"...)
		default:
			b = append(b, "/-/"...)
		}
		if f.InTX() {
			b = append(b, "X/"...)
		} else {
			b = append(b, "-/"...)
		}
		if f.Abort() {
			b = append(b, "A/"...)
		} else {
			b = append(b, "-/"...)
		}
		b = strconv.AppendUint(b, uint64(f.Cycles()), 10)
		b = append(b, '/')
		if t := f.FullType(); t != perf.BrUnknown {
			b = append(b, t.String()...)
		}
		return append(b, ' ')
	}
	for _, br := range bs {
		if sc.o.brstack {
			b = append(b, ' ')
			b = end(b, br.from, false)
			b = append(b, '/')
			b = end(b, br.to, false)
			b = flags(b, br.flags)
		}
		if sc.o.brstackSym && !(sc.o.perfFields && sc.o.brstack) { // perf prints only brstack then
			if !sc.o.perfFields {
				b = append(b, ' ')
			}
			b = end(b, br.from, true)
			b = append(b, '/')
			b = end(b, br.to, true)
			b = flags(b, br.flags)
		}
	}
	return b
}
