package script

import (
	"errors"
	"fmt"
	"path/filepath"
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

// scriptSample is what is printed of one sample; its frames and branches
// are ranges of the Printer's shared slices. It holds no pointers, so a
// million of them cost the garbage collector nothing.
type scriptSample struct {
	pid, tid, cpu    uint32
	comm             int32 // index in Printer.commList, -1 when unknown
	event            int32
	time, period     uint64
	frames, framesTo uint32
	branch, branchTo uint32
	hasCPU           bool
	callchain        bool // the sample has a callchain (or stack) to print as one
}

// scriptAddr is one address to print: its object (an index in
// Printer.objs, -1 when unmapped) and the handle of its symbol in the
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

// Printer prints what the analysis engine (internal/engine) reads: it
// keeps each sample's printed fields and frames while the engine visits
// them (Add), asks the engine's Symbols for every address, and prints once
// they are resolved (Symbolize, then Print).
type Printer struct {
	r        *perfdata.Reader
	o        Options
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

// New returns the printer of the recording r reads, whose samples eng
// (the engine of r) visits.
func New(r *perfdata.Reader, eng *engine.Engine, o Options) *Printer {
	return &Printer{
		r: r, o: o, eng: eng,
		objIdx: map[*procmap.Object]int32{},
		comms:  map[string]int32{},
	}
}

// Add keeps what is printed of one sample the engine's Visit hands it,
// with its unwound frames, and asks the engine's Symbols for the unique
// addresses of each object. Pass it to Visit.
func (p *Printer) Add(s *perf.Sample, ev int, frames []unwind.Frame) {
	ss := scriptSample{
		pid: s.PID, tid: s.TID, cpu: s.CPU, hasCPU: s.Has(perf.SampleCPU), comm: -1,
		time: s.Time, period: s.Period, event: int32(ev), frames: uint32(len(p.frames)),
		callchain: s.Has(perf.SampleCallchain) || len(frames) > 1,
	}
	if !s.Has(perf.SamplePeriod) && ev >= 0 && ev < p.r.Format().Len() {
		if a := p.r.Format().Attr(ev); !a.Freq() {
			ss.period = a.SamplePeriod // a fixed period (-c) is not in the samples
		}
	}
	if proc, ok := p.eng.Maps.Process(s.PID); ok {
		ss.comm = p.intern(proc.Comm)
	}
	for _, f := range frames {
		a := p.want(uint64(f.Addr), engine.FrameObject(&f), procmap.ObjAddr(f.LookupAddr()), s.PID)
		a.back = f.ObjAddr != f.LookupAddr() && a.h.Valid()
		p.frames = append(p.frames, a)
	}
	ss.framesTo = uint32(len(p.frames))
	ss.branch = uint32(len(p.branches))
	if p.o.brstack || p.o.brstackSym {
		for _, b := range s.Branches {
			p.branches = append(p.branches, scriptBranch{
				from: p.wantRuntime(s, b.From), to: p.wantRuntime(s, b.To), flags: b.Flags,
			})
		}
	}
	ss.branchTo = uint32(len(p.branches))
	p.samples = append(p.samples, ss)
}

func (p *Printer) intern(s string) int32 {
	if v, ok := p.comms[s]; ok {
		return v
	}
	i := int32(len(p.commList))
	p.commList = append(p.commList, s)
	p.comms[s] = i
	return i
}

// wantRuntime resolves a runtime address (a branch end) of the sample's
// process and asks for it.
func (p *Printer) wantRuntime(s *perf.Sample, a uint64) scriptAddr {
	obj, oa := p.eng.Lookup(s, a)
	return p.want(a, obj, oa, s.PID)
}

// want records that addr (in obj at objAddr) is to be symbolized, once
// per unique address of its object (the engine's Symbols).
func (p *Printer) want(addr uint64, obj *procmap.Object, objAddr procmap.ObjAddr, pid uint32) scriptAddr {
	sa := scriptAddr{addr: addr, obj: -1, h: engine.NoHandle}
	if obj == nil {
		return sa
	}
	o := p.lastIdx
	if obj != p.lastObj {
		var ok bool
		if o, ok = p.objIdx[obj]; !ok {
			o = int32(len(p.objs))
			p.objIdx[obj] = o
			p.objs = append(p.objs, obj)
			p.objNames = append(p.objNames, objName(obj))
		}
		p.lastObj, p.lastIdx = obj, o
	}
	sa.obj = o
	sa.h = p.eng.Symbols.Add(obj, pid, objAddr)
	return sa
}

// Symbolize resolves every object's unique addresses at once; objects
// that cannot be read (missing, build-id mismatch) are noted in log.
func (p *Printer) Symbolize(log *diag.Log) {
	if _, why := p.eng.Objects.Kernel(); why != "" && p.eng.Symbols.KernelAsked() {
		log.Note(fmt.Sprintf("%s: kernel frames print as [unknown]", why))
	}
	for _, ke := range p.eng.Symbols.Resolve(p.o.Srcline) {
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

func (p *Printer) location(a scriptAddr) (symbolize.Location, bool) {
	return p.eng.Symbols.Location(a.h)
}

// sym returns the name of a's symbol and a's offset in it, or false.
func (p *Printer) sym(a scriptAddr) (string, uint64, bool) {
	loc, ok := p.eng.Symbols.Location(a.h)
	if !ok || loc.Symbol == nil || loc.Symbol.Name.Full == "" {
		return "", 0, false
	}
	off, _ := loc.Offset()
	return loc.Symbol.Name.Full, off, true
}

// appendSymOff appends "function+0xoff" (the offset of a's own address)
// or "[unknown]".
func (p *Printer) appendSymOff(b []byte, a scriptAddr) []byte {
	name, off, ok := p.sym(a)
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
func (p *Printer) appendSym(b []byte, a scriptAddr) []byte {
	name, _, ok := p.sym(a)
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
func (p *Printer) objName(a scriptAddr) string {
	if a.obj < 0 {
		return "[unknown]"
	}
	return p.objNames[a.obj]
}
