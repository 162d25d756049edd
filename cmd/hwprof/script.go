package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/hwprof/hwprof/internal/diag"
	"github.com/hwprof/hwprof/internal/engine"
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
// Warnings and the exit status follow package diag's rule, as in every
// reading command: every sample that could be read is printed, and the
// status is 1 when records were lost.
func cmdScript(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("script", "[-i FILE] [--srcline] [-F FIELDS] [--symfs DIR] [--debug-dir DIR]", stderr)
	input := fs.String("i", defaultInput, inputUsage)
	srcline := fs.Bool("srcline", false, "print the source file and line of every frame, inlined frames included")
	fields := fs.String("F", "", "`FIELDS`: brstack and/or brstacksym add the branch stack to the default output; "+
		"any of "+strings.Join(scriptFieldNames[:], ",")+" print only those, in perf script's layout")
	symfs := fs.String("symfs", "", "look for every object under `DIR`, as perf's --symfs")
	debugDir := fs.String("debug-dir", "", "a `DIR` of binaries and debug files named by build-id")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	o, err := parseScriptFields(*fields)
	if err != nil {
		fmt.Fprintf(stderr, "hwprof script: %v\n", err)
		return exitUsage
	}
	o.srcline = o.srcline || *srcline
	// Function names alone come from the symbol tables; DWARF is read
	// only for source lines.
	eo := engine.Options{SymFS: *symfs}
	if *debugDir != "" {
		eo.DebugDirs = []string{*debugDir}
	}
	r, err := openRecording(*input)
	if err != nil {
		return fail(stderr, err)
	}
	defer r.Close()
	sc := newScripter(r, o, eo)
	defer sc.cleanup()
	var log diag.Log
	sc.read() // an error that stops reading is in the log: the samples before it are printed
	sc.eng.Diagnose(&log)
	sc.symbolize(&log)
	w := bufio.NewWriterSize(stdout, 1<<16)
	sc.print(w)
	if err := w.Flush(); err != nil {
		log.Print(stderr)
		return fail(stderr, err)
	}
	return log.Print(stderr)
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
// scripter.objs, -1 when unmapped) and the handle of its symbol in the
// engine's Symbols. back marks a return address, looked up at the call
// (ra-1): the offset printed is still addr's own, as perf prints it. It
// holds no pointers.
type scriptAddr struct {
	addr uint64
	obj  int32
	h    engine.Handle
	back bool
}

type scriptBranch struct {
	from, to scriptAddr
	flags    perf.BranchFlags
}

// scripter prints what the analysis engine (internal/engine) reads: it
// keeps each sample's printed fields and frames while the engine visits
// them, asks the engine's Symbols for every address, and prints once they
// are resolved.
type scripter struct {
	r        *perfdata.Reader
	o        scriptOptions
	eng      *engine.Engine
	samples  []scriptSample
	frames   []scriptAddr
	branches []scriptBranch
	// the objects of the addresses, each with its printed name
	objs     []*procmap.Object
	objNames []string
	objIdx   map[*procmap.Object]int32
	lastObj  *procmap.Object // the object of the last address asked for
	lastIdx  int32           // and its index
	commList []string
	comms    map[string]int32 // index in commList
}

func newScripter(r *perfdata.Reader, o scriptOptions, eo engine.Options) *scripter {
	return &scripter{
		r: r, o: o, eng: engine.New(r, eo),
		objIdx: map[*procmap.Object]int32{},
		comms:  map[string]int32{},
	}
}

// read applies every record to the process model and unwinds every
// sample (the engine's Visit), collecting the unique addresses of each
// object. It returns the error that stopped reading (the engine's
// Diagnose reports it).
func (sc *scripter) read() error {
	return sc.eng.Visit(sc.addSample)
}

func (sc *scripter) addSample(s *perf.Sample, ev int, frames []unwind.Frame) {
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
	if p, ok := sc.eng.Maps.Process(s.PID); ok {
		ss.comm = sc.intern(p.Comm)
	}
	for _, f := range frames {
		a := sc.want(uint64(f.Addr), engine.FrameObject(&f), procmap.ObjAddr(f.LookupAddr()), s.PID)
		a.back = f.ObjAddr != f.LookupAddr() && a.h.Valid()
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
	obj, oa := sc.eng.Lookup(s, a)
	return sc.want(a, obj, oa, s.PID)
}

// want records that addr (in obj at objAddr) is to be symbolized, once
// per unique address of its object (the engine's Symbols).
func (sc *scripter) want(addr uint64, obj *procmap.Object, objAddr procmap.ObjAddr, pid uint32) scriptAddr {
	sa := scriptAddr{addr: addr, obj: -1, h: engine.NoHandle}
	if obj == nil {
		return sa
	}
	o := sc.lastIdx
	if obj != sc.lastObj {
		var ok bool
		if o, ok = sc.objIdx[obj]; !ok {
			o = int32(len(sc.objs))
			sc.objIdx[obj] = o
			sc.objs = append(sc.objs, obj)
			sc.objNames = append(sc.objNames, objName(obj))
		}
		sc.lastObj, sc.lastIdx = obj, o
	}
	sa.obj = o
	sa.h = sc.eng.Symbols.Add(obj, pid, objAddr)
	return sa
}

// cleanup removes the files the engine wrote.
func (sc *scripter) cleanup() { sc.eng.Close() }

// symbolize resolves every object's unique addresses at once; objects
// that cannot be read (missing, build-id mismatch) are noted in log.
func (sc *scripter) symbolize(log *diag.Log) {
	if _, why := sc.eng.Objects.Kernel(); why != "" && sc.eng.Symbols.KernelAsked() {
		log.Note(fmt.Sprintf("%s: kernel frames print as [unknown]", why))
	}
	for _, ke := range sc.eng.Symbols.Resolve(sc.o.srcline) {
		if ke.Key.Path == symbolize.KernelPath || engine.IsPerfMap(ke.Key.Path) {
			continue
		}
		var mm *symbolize.BuildIDMismatchError
		if errors.As(ke.Err, &mm) {
			log.Note(fmt.Sprintf("%v: its frames print as [unknown]", ke.Err))
		} else {
			log.Note(fmt.Sprintf("cannot symbolize %s: %v", ke.Key.Path, ke.Err))
		}
	}
}

func (sc *scripter) location(a scriptAddr) (symbolize.Location, bool) {
	return sc.eng.Symbols.Location(a.h)
}

// sym returns the name of a's symbol and a's offset in it, or false.
func (sc *scripter) sym(a scriptAddr) (string, uint64, bool) {
	loc, ok := sc.eng.Symbols.Location(a.h)
	if !ok || loc.Symbol == nil || loc.Symbol.Name.Full == "" {
		return "", 0, false
	}
	off, _ := loc.Offset()
	return loc.Symbol.Name.Full, off, true
}

// appendSymOff appends "function+0xoff" (the offset of a's own address)
// or "[unknown]".
func (sc *scripter) appendSymOff(b []byte, a scriptAddr) []byte {
	name, off, ok := sc.sym(a)
	if !ok {
		return append(b, "[unknown]"...)
	}
	b = append(b, name...)
	b = append(b, "+0x"...)
	if a.back {
		off++
	}
	return strconv.AppendUint(b, off, 16)
}

// appendSym appends the function's name or "[unknown]".
func (sc *scripter) appendSym(b []byte, a scriptAddr) []byte {
	name, _, ok := sc.sym(a)
	if !ok {
		return append(b, "[unknown]"...)
	}
	return append(b, name...)
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
