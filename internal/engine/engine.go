package engine

import (
	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/internal/diag"
	"github.com/hwprof/hwprof/internal/procmap"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/perfdata"
	"github.com/hwprof/hwprof/unwind"
)

// Engine is the analysis of one recording: its objects (Objects), the
// process model the side-band records build (Maps), the unwinder of its
// samples and the addresses to symbolize (Symbols).
type Engine struct {
	r        *perfdata.Reader
	Objects  *Objects
	Maps     *procmap.Map
	Unwinder *unwind.Unwinder
	Symbols  *Symbols
	// Skips counts the records read that did not decode (Analyzed
	// types only) and were skipped.
	Skips diag.Skips
}

// New returns the engine of the recording r reads, finding its objects as
// o says. Close removes the files it wrote.
func New(r *perfdata.Reader, o Options) *Engine {
	objs := NewObjects(r.Features(), o)
	return &Engine{
		r:        r,
		Objects:  objs,
		Maps:     procmap.New(objs.Segments()),
		Unwinder: unwind.New(unwind.Options{Open: objs.Open, VDSO: objs.VDSO()}),
		Symbols:  NewSymbols(objs),
	}
}

// Close waits for the kernel's preloading and removes the files the
// engine wrote.
func (e *Engine) Close() error {
	e.Symbols.Wait()
	return e.Objects.Close()
}

// SideBand says whether records of type t change the process model
// (MMAP, MMAP2, COMM, FORK, EXIT): Apply them, in order with the samples.
func SideBand(t perf.RecordType) bool {
	switch t {
	case perf.RecordMmap, perf.RecordMmap2, perf.RecordComm, perf.RecordFork, perf.RecordExit:
		return true
	}
	return false
}

// Analyzed says whether the analysis reads the contents of records of
// type t: samples, the side-band records, and the LOST and LOST_SAMPLES
// records it counts. One of them that does not decode is skipped and
// counted in Skips; every command that reads a recording counts the same
// (hwprof dump too), so that they warn alike.
func Analyzed(t perf.RecordType) bool {
	return t == perf.RecordSample || SideBand(t) || t == perf.RecordLost || t == perf.RecordLostSamples
}

// Diagnose adds to log what reading the recording found wrong: the
// reader's warnings and the error that stopped it, the records skipped
// (Skips), then the files a lookup refused so far (Objects.Refused: notes,
// as a missing file is).
func (e *Engine) Diagnose(log *diag.Log) {
	log.Reader(e.r)
	log.Skipped(e.Skips)
	for _, err := range e.Objects.Refused() {
		log.Note(err.Error())
	}
	for _, w := range e.Objects.JITDumpWarnings() {
		log.Note(w)
	}
	if d := e.Objects.o.Debuginfod; d != nil {
		for _, w := range d.Warnings() {
			log.Note(w)
		}
	}
}

// Apply applies a side-band record to the process model, after finding
// the file of the object an MMAP or MMAP2 record maps.
func (e *Engine) Apply(d perf.Record) {
	e.Objects.Mapped(d)
	e.Maps.Apply(d)
	e.mappedJITDump(d)
}

// Frames appends the frames of s, innermost first, unwound as it was
// recorded (frame-pointer callchain, DWARF stack copy or LBR call stack),
// each with its object and object address; the sample's IP alone when it
// has no stack.
func (e *Engine) Frames(dst []unwind.Frame, s *perf.Sample) []unwind.Frame {
	return e.FramesWith(dst, s, nil)
}

// FramesWith is Frames keeping in sc (when not nil) what unwinding the
// next stacks needs again (unwind.Scratch: one per goroutine).
func (e *Engine) FramesWith(dst []unwind.Frame, s *perf.Sample, sc *unwind.Scratch) []unwind.Frame {
	n := len(dst)
	dst, _ = e.Unwinder.AppendWith(dst, s, e.Maps, sc)
	if len(dst) > n || !s.Has(perf.SampleIP) {
		return dst
	}
	return e.IPFrame(dst, s)
}

// IPFrame appends the frame of s's IP alone.
func (e *Engine) IPFrame(dst []unwind.Frame, s *perf.Sample) []unwind.Frame {
	if !s.Has(perf.SampleIP) {
		return dst
	}
	f := unwind.Frame{Addr: addrspace.Addr(s.IP), Kind: unwind.FrameIP}
	if m, oa, ok := e.Maps.Lookup(s.PID, s.TID, s.Time, f.Addr); ok && m.Object != nil {
		f.Object, f.ObjAddr = m.Object, oa
	}
	return append(dst, f)
}

// Lookup returns the object and object address of a runtime address of
// s's process at s's time (a branch end), or nil.
func (e *Engine) Lookup(s *perf.Sample, a uint64) (*addrspace.Object, addrspace.ObjAddr) {
	at := addrspace.Addr(a)
	m, oa, ok := e.Maps.Lookup(s.PID, s.TID, s.Time, at)
	if !ok {
		return nil, addrspace.Unmapped(at)
	}
	return m.Object, oa
}

// A Visitor is given each sample of a recording in time order: the
// decoded sample (ev the index of its event, -1 when unknown) and its
// frames (Frames). Both are reused after it returns.
type Visitor func(s *perf.Sample, ev int, frames []unwind.Frame)

// Visit reads every record in order: it applies the side-band records
// and hands every sample that decodes to visit; the records that do not
// decode are counted in Skips. It returns the reader's error (the samples
// before it were visited); Diagnose tells what went wrong.
func (e *Engine) Visit(visit Visitor) error {
	var s perf.Sample
	var frames []unwind.Frame
	settled := false
	for e.r.Next() {
		rec := e.r.Record()
		t := rec.Type()
		if !settled && Analyzed(t) {
			e.Objects.SettleKernel() // the header's records, if any, are read
			settled = true
		}
		switch {
		case t == perf.RecordSample:
			if err := e.r.DecodeSample(&s); err != nil {
				e.Skips.Samples++
				continue
			}
			ev, _ := e.r.Format().EventOf(rec.Raw)
			frames = e.Frames(frames[:0], &s)
			visit(&s, ev, frames)
		case Analyzed(t):
			d, err := e.r.Decode()
			switch {
			case err != nil:
				e.Skips.Records++
			case SideBand(t):
				e.Apply(d)
			}
		}
	}
	return e.r.Err()
}
