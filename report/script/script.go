package script

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/perfdata"
	"github.com/hwprof/hwprof/symbolize"
	"github.com/hwprof/hwprof/unwind"
)

// Analysis is what a Printer needs of the analysis of a recording, in
// public types (hwprof's engine provides it: internal/engine's
// ScriptView): the processes' commands, the objects of addresses and
// their names, and the symbols of addresses. The printer asks for the
// symbols of a window of samples (Want), has them resolved (Resolve),
// then prints the window and forgets it; the analysis keeps each object
// read and each address resolved, so memory grows with the addresses, not
// with the samples.
type Analysis interface {
	// Comm returns the command of process pid, false when unknown.
	Comm(pid uint32) (string, bool)
	// Lookup returns the object mapped at runtime address a of s's
	// process at s's time and a's address in it; a nil object when none.
	Lookup(s *perf.Sample, a uint64) (*addrspace.Object, addrspace.ObjAddr)
	// ObjectName is the name printed for an object (perf's dso name).
	ObjectName(obj *addrspace.Object) string
	// Want asks for the symbol at address a of obj (a return address's
	// call, ra-1) in process pid, and returns the id Location takes;
	// false when nothing names obj.
	Want(obj *addrspace.Object, pid uint32, a addrspace.ObjAddr) (id uint64, ok bool)
	// Resolve looks up every address asked for since the last call,
	// with source lines and inlined frames when srcline is set; last
	// says nothing will be asked for after it.
	Resolve(srcline, last bool)
	// Location returns the location of the address id names once
	// resolved; false when its object could not be read.
	Location(id uint64) (symbolize.Location, bool)
	// Unread returns, after the last Resolve, why kernel addresses have
	// no names ("" when they have, or none was asked for), and the other
	// objects whose symbols could not be read, with why; an error
	// matching symbolize.ErrRefused is a file skipped (its message says
	// which and why), printed as it is.
	Unread() (kernel string, objs []string, errs []error)
}

// A window of samples is printed once it holds windowSamples samples or
// windowFrames addresses (frames and branch ends): a few megabytes, and
// few enough turns that the symbols of each are resolved in one batch.
// (Variables for the test that prints with small windows.)
var (
	windowSamples = 1 << 13
	windowFrames  = 1 << 17
)

// scriptSample is what is printed of one sample; its frames and branches
// are ranges of the Printer's shared slices. It holds no pointers.
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
// Printer.objNames, -1 when unmapped) and the id of its symbol in the
// Analysis (when named). back marks a return address, looked up at the
// call (ra-1): the offset printed is still addr's own, as perf prints it.
// It holds no pointers.
type scriptAddr struct {
	addr  uint64
	id    uint64
	obj   int32
	named bool
	back  bool
}

type scriptBranch struct {
	from, to scriptAddr
	flags    perf.BranchFlags
}

// Printer prints what the analysis of a recording reads, as it reads it:
// it keeps a window of samples with their printed fields and frames (Add),
// has the window's addresses resolved, prints it and forgets it; Finish
// prints the last window.
type Printer struct {
	r        *perfdata.Reader
	o        Options
	a        Analysis
	w        *bufio.Writer
	samples  []scriptSample
	frames   []scriptAddr
	branches []scriptBranch
	// the printed names of the addresses' objects
	objNames []string
	objIdx   map[*addrspace.Object]int32
	lastObj  *addrspace.Object // the object of the last address asked for
	lastIdx  int32             // and its index
	commList []string
	comms    map[string]int32 // index in commList
}

// New returns the printer of the recording r reads, whose samples the
// analysis a of r hands it (Add), printing to w.
func New(r *perfdata.Reader, a Analysis, o Options, w io.Writer) *Printer {
	return &Printer{
		r: r, o: o, a: a, w: bufio.NewWriterSize(w, 1<<16),
		objIdx: map[*addrspace.Object]int32{},
		comms:  map[string]int32{},
	}
}

// Add keeps what is printed of one sample, with its unwound frames (s
// and frames may be reused after it returns), and asks the Analysis for
// the symbols of its addresses; it prints the window of samples once it is
// full. An error of writing is kept: Finish returns it.
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
	if comm, ok := p.a.Comm(s.PID); ok {
		ss.comm = p.intern(comm)
	}
	for _, f := range frames {
		a := p.want(uint64(f.Addr), f.Object, f.LookupAddr(), s.PID)
		a.back = f.ObjAddr != f.LookupAddr() && a.named
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
	if len(p.samples) >= windowSamples || len(p.frames)+2*len(p.branches) >= windowFrames {
		p.printWindow(false)
	}
}

// Finish prints the samples not printed yet and returns the error of
// writing, with what kept frames unnamed: one note for the kernel
// (without kallsyms), one for each file skipped (not a regular file
// within its root) and one for each object whose symbols could not be
// read (missing, build-id mismatch). Nothing may be added after it.
func (p *Printer) Finish() (notes []string, err error) {
	p.printWindow(true)
	kernel, objs, errs := p.a.Unread()
	if kernel != "" {
		notes = append(notes, fmt.Sprintf("%s: kernel frames print as [unknown]", kernel))
	}
	for i, err := range errs {
		var mm *symbolize.BuildIDMismatchError
		switch {
		case errors.Is(err, symbolize.ErrRefused): // names the file skipped, and why
			notes = append(notes, err.Error())
		case errors.As(err, &mm):
			notes = append(notes, fmt.Sprintf("%v: its frames print as [unknown]", err))
		default:
			notes = append(notes, fmt.Sprintf("cannot symbolize %s: %v", objs[i], err))
		}
	}
	return notes, p.w.Flush()
}

// printWindow resolves the window's addresses, prints its samples and
// empties it.
func (p *Printer) printWindow(last bool) {
	p.a.Resolve(p.o.Srcline, last)
	if p.o.perfFields {
		p.printFields(p.w)
	} else {
		p.printDefault(p.w)
	}
	p.samples, p.frames, p.branches = p.samples[:0], p.frames[:0], p.branches[:0]
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
	obj, oa := p.a.Lookup(s, a)
	return p.want(a, obj, oa, s.PID)
}

// want asks the Analysis for the symbol of addr (in obj at objAddr).
func (p *Printer) want(addr uint64, obj *addrspace.Object, objAddr addrspace.ObjAddr, pid uint32) scriptAddr {
	sa := scriptAddr{addr: addr, obj: -1}
	if obj == nil {
		return sa
	}
	o := p.lastIdx
	if obj != p.lastObj {
		var ok bool
		if o, ok = p.objIdx[obj]; !ok {
			o = int32(len(p.objNames))
			p.objIdx[obj] = o
			p.objNames = append(p.objNames, p.a.ObjectName(obj))
		}
		p.lastObj, p.lastIdx = obj, o
	}
	sa.obj = o
	sa.id, sa.named = p.a.Want(obj, pid, objAddr)
	return sa
}

func (p *Printer) location(a scriptAddr) (symbolize.Location, bool) {
	if !a.named {
		return symbolize.Location{}, false
	}
	return p.a.Location(a.id)
}

// sym returns the name of a's symbol and a's offset in it, or false.
func (p *Printer) sym(a scriptAddr) (string, uint64, bool) {
	loc, ok := p.location(a)
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

// objName is the name printed for a's object, "[unknown]" when unmapped.
func (p *Printer) objName(a scriptAddr) string {
	if a.obj < 0 {
		return "[unknown]"
	}
	return p.objNames[a.obj]
}
