package script

import (
	"bufio"
	"fmt"
	"strconv"

	"github.com/hwprof/hwprof/perf"
)

// printDefault prints the window's samples in perf script's default
// layout (command, pid/tid, cpu, time, period and event, then one line per
// frame: address, function+offset, object), with the source lines of each
// frame for Srcline and the branch stack for -F brstack/brstacksym.
func (p *Printer) printDefault(w *bufio.Writer) {
	attrs := p.r.Attrs()
	var b []byte
	for _, s := range p.samples {
		b = appendPadLeft(b[:0], p.commOf(s), 16)
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
			b = p.appendBranches(b, p.branches[s.branch:s.branchTo], false)
		}
		b = append(b, '\n')
		w.Write(b)
		for _, f := range p.frames[s.frames:s.framesTo] {
			b = append(b[:0], '\t')
			b = appendHexPad(b, f.addr, 16)
			b = append(b, ' ')
			b = p.appendSymOff(b, f)
			b = append(b, " ("...)
			b = append(b, p.objName(f)...)
			b = append(b, ")\n"...)
			w.Write(b)
			if p.o.Srcline {
				p.printSrcline(w, f)
			}
		}
		w.WriteByte('\n')
	}
}

// printFields prints the -F fields of the window's samples in perf script 6.1's
// layout (perf_sample__fprintf_start, process_event, sample__fprintf_sym
// and perf_sample__fprintf_brstack* in tools/perf/builtin-script.c): the
// fields in perf's order whatever the order given, the event name padded
// to the longest, the frames of a callchain one per line, else the IP,
// symbol and object on the sample's line, then the branch stack.
func (p *Printer) printFields(w *bufio.Writer) {
	o := p.o
	attrs := p.r.Attrs()
	width := 0
	for _, a := range attrs {
		width = max(width, len(a.Name))
	}
	var b []byte
	for _, s := range p.samples {
		b = b[:0]
		if o.has(fieldComm) {
			if o.has(fieldIP) && s.callchain {
				b = append(b, p.commOf(s)...)
			} else {
				b = appendPadLeft(b, p.commOf(s), 16)
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
			frames := p.frames[s.frames:s.framesTo]
			if s.callchain {
				b = append(b, '\n')
				for _, f := range frames {
					b = append(b, '\t')
					b = p.appendFrame(b, f)
					b = append(b, '\n')
					if o.Srcline {
						w.Write(b)
						b = b[:0]
						p.printSrcline(w, f)
					}
				}
			} else if len(frames) > 0 {
				b = append(b, ' ')
				b = p.appendFrame(b, frames[0])
				if o.Srcline {
					b = append(b, '\n')
					w.Write(b)
					b = b[:0]
					p.printSrcline(w, frames[0])
				}
			}
		}
		if s.branchTo > s.branch {
			b = p.appendBranches(b, p.branches[s.branch:s.branchTo], o.has(fieldDSO))
		}
		b = append(b, '\n')
		w.Write(b)
	}
}

// appendFrame appends one frame as perf's sample__fprintf_sym: the
// address, the symbol (with +0xoffset for symoff) and the object in
// parentheses.
func (p *Printer) appendFrame(b []byte, f scriptAddr) []byte {
	o := p.o
	b = appendHexPad(b, f.addr, 16)
	if o.has(fieldSym) || o.has(fieldSymOff) {
		b = append(b, ' ')
		if o.has(fieldSymOff) {
			b = p.appendSymOff(b, f)
		} else {
			b = p.appendSym(b, f)
		}
	}
	if o.has(fieldDSO) {
		b = append(b, " ("...)
		b = append(b, p.objName(f)...)
		b = append(b, ')')
	}
	return b
}

// printSrcline prints the source frames of an address, innermost first;
// inlined frames say into which function they were inlined.
func (p *Printer) printSrcline(w *bufio.Writer, a scriptAddr) {
	loc, ok := p.location(a)
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
func (p *Printer) appendBranches(b []byte, bs []scriptBranch, dso bool) []byte {
	end := func(b []byte, a scriptAddr, sym bool) []byte {
		if sym {
			b = p.appendSymOff(b, a)
		} else {
			b = append(b, "0x"...)
			b = strconv.AppendUint(b, a.addr, 16)
		}
		if dso {
			b = append(b, '(')
			b = append(b, p.objName(a)...)
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
		if p.o.brstack {
			b = append(b, ' ')
			b = end(b, br.from, false)
			b = append(b, '/')
			b = end(b, br.to, false)
			b = flags(b, br.flags)
		}
		if p.o.brstackSym && !(p.o.perfFields && p.o.brstack) { // perf prints only brstack then
			if !p.o.perfFields {
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
