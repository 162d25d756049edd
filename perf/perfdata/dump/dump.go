package dump

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/perfdata"
)

// Records prints every record r delivers (in time order unless
// r.SetFileOrder(true)), one line each: the file offset (with a 'z' when
// the record came out of a COMPRESSED record), the type, the time, then
// the record's fields by name; a sample's read values, callchain and branch
// stack follow on indented lines. A record that does not decode is printed
// with its size and the error, and printing goes on. Records writes one
// line per Write call, so w should be buffered; it returns the records
// that did not decode, by type, and the first write error. An error that
// stopped r is r's to report (r.Err).
func Records(w io.Writer, r *perfdata.Reader) (Undecodable, error) {
	d := dumper{w: w, r: r, bad: Undecodable{}}
	for r.Next() {
		d.record(r.Record())
		if d.werr != nil {
			break
		}
	}
	return d.bad, d.werr
}

// Undecodable counts the records that did not decode, by type.
type Undecodable map[perf.RecordType]uint64

// dumper formats records; appends into buf and writes one line at a time,
// so printing a million samples allocates nothing per sample.
type dumper struct {
	w      io.Writer
	r      *perfdata.Reader
	buf    []byte
	sample perf.Sample
	bad    Undecodable
	werr   error
}

func (d *dumper) flushLine() {
	d.buf = append(d.buf, '\n')
	if _, err := d.w.Write(d.buf); err != nil && d.werr == nil {
		d.werr = err
	}
	d.buf = d.buf[:0]
}

func (d *dumper) hex(v uint64) {
	d.buf = append(d.buf, "0x"...)
	d.buf = strconv.AppendUint(d.buf, v, 16)
}

func (d *dumper) dec(v uint64) { d.buf = strconv.AppendUint(d.buf, v, 10) }

func (d *dumper) str(s string) { d.buf = append(d.buf, s...) }

// field appends " name=" and leaves the value to the caller.
func (d *dumper) field(name string) {
	d.buf = append(d.buf, ' ')
	d.buf = append(d.buf, name...)
	d.buf = append(d.buf, '=')
}

// time appends perf time as seconds.nanoseconds, or "-".
func (d *dumper) time(t uint64, ok bool) {
	if !ok {
		d.buf = append(d.buf, '-')
		return
	}
	d.dec(t / 1e9)
	d.buf = append(d.buf, '.')
	ns := t % 1e9
	for div := uint64(1e8); div > 0; div /= 10 {
		d.buf = append(d.buf, byte('0'+ns/div%10))
	}
}

// prefix appends the columns every record line starts with: offset,
// type and time.
func (d *dumper) prefix(rec *perfdata.Record, t perf.RecordType) {
	d.hex(uint64(rec.Offset))
	if rec.Compressed {
		d.buf = append(d.buf, 'z')
	}
	d.buf = append(d.buf, ' ')
	d.str(t.String())
	d.buf = append(d.buf, ' ')
	d.time(rec.Time, rec.HasTime)
}

func (d *dumper) record(rec perfdata.Record) {
	t := rec.Type()
	d.prefix(&rec, t)
	if t == perf.RecordSample {
		d.sampleRecord(rec.Raw)
		return
	}
	m, err := d.r.Decode()
	if err != nil {
		d.bad[t]++
		d.str(" size=")
		d.dec(uint64(len(rec.Raw)))
		d.str(" undecodable: ")
		d.str(err.Error())
		d.flushLine()
		return
	}
	d.fields(m)
	d.flushLine()
}

// sampleRecord prints a sample's line and, indented under it, its read
// values, callchain and branch stack.
func (d *dumper) sampleRecord(raw []byte) {
	s := &d.sample
	if err := d.r.Format().DecodeSample(raw, s); err != nil {
		d.bad[perf.RecordSample]++
		d.str(" size=")
		d.dec(uint64(len(raw)))
		d.str(" undecodable: ")
		d.str(err.Error())
		d.flushLine()
		return
	}
	if s.Has(perf.SampleTID) {
		d.buf = append(d.buf, ' ')
		d.pidTID(s.PID, s.TID)
	}
	if s.Has(perf.SampleCPU) {
		d.field("cpu")
		d.dec(uint64(s.CPU))
	}
	d.field("event")
	if s.Attr >= 0 && s.Attr < len(d.r.Attrs()) {
		d.str(d.r.Attrs()[s.Attr].Name)
	} else {
		d.str("?")
	}
	d.cpumode(s.Misc)
	if s.Has(perf.SampleIP) {
		d.field("ip")
		d.hex(s.IP)
	}
	if s.Has(perf.SampleAddr) {
		d.field("addr")
		d.hex(s.Addr)
	}
	if s.Has(perf.SamplePeriod) {
		d.field("period")
		d.dec(s.Period)
	}
	if s.Has(perf.SampleID) {
		d.field("id")
		d.dec(s.ID)
	}
	if s.Has(perf.SampleIdentifier) && !s.Has(perf.SampleID) {
		d.field("id")
		d.dec(s.Identifier)
	}
	if s.Has(perf.SampleStreamID) {
		d.field("stream_id")
		d.dec(s.StreamID)
	}
	if s.Has(perf.SampleWeight) {
		d.field("weight")
		d.dec(s.Weight)
	}
	if s.Has(perf.SampleWeightStruct) {
		v1, v2, v3 := s.WeightStruct()
		d.field("weight")
		d.dec(uint64(v1))
		d.buf = append(d.buf, '/')
		d.dec(uint64(v2))
		d.buf = append(d.buf, '/')
		d.dec(uint64(v3))
	}
	for _, f := range []struct {
		bit  perf.SampleType
		name string
		v    uint64
	}{
		{perf.SampleDataSrc, "data_src", s.DataSrc},
		{perf.SampleTransaction, "transaction", s.Transaction},
		{perf.SamplePhysAddr, "phys_addr", s.PhysAddr},
		{perf.SampleCgroup, "cgroup", s.Cgroup},
		{perf.SampleDataPageSize, "data_page_size", s.DataPageSz},
		{perf.SampleCodePageSize, "code_page_size", s.CodePageSz},
	} {
		if s.Has(f.bit) {
			d.field(f.name)
			d.hex(f.v)
		}
	}
	if s.Has(perf.SampleRaw) {
		d.field("raw")
		d.dec(uint64(len(s.Raw)))
	}
	if s.Has(perf.SampleStackUser) {
		d.field("stack_user")
		d.dec(uint64(len(s.StackUser.Data)))
		d.buf = append(d.buf, '/')
		d.dec(s.StackUser.DynSize)
	}
	if s.Has(perf.SampleAux) {
		d.field("aux")
		d.dec(uint64(len(s.Aux)))
	}
	d.flushLine()
	if s.Has(perf.SampleRead) {
		d.readValues("read", &s.Read)
	}
	if s.Has(perf.SampleRegsUser) {
		d.regs("regs_user", &s.RegsUser)
	}
	if s.Has(perf.SampleRegsIntr) {
		d.regs("regs_intr", &s.RegsIntr)
	}
	if s.Has(perf.SampleCallchain) {
		d.callchain(s.Callchain)
	}
	if s.Has(perf.SampleBranchStack) {
		d.branches(&s.BranchStack)
	}
}

func (d *dumper) pidTID(pid, tid uint32) {
	d.buf = strconv.AppendInt(d.buf, int64(int32(pid)), 10)
	d.buf = append(d.buf, '/')
	d.buf = strconv.AppendInt(d.buf, int64(int32(tid)), 10)
}

var cpuModes = [...]string{"unknown", "kernel", "user", "hypervisor", "guest-kernel", "guest-user", "mode6", "mode7"}

func (d *dumper) cpumode(misc uint16) {
	d.field("mode")
	d.str(cpuModes[misc&perf.MiscCPUModeMask])
	if misc&perf.MiscExactIP != 0 {
		d.str(" exact")
	}
}

func (d *dumper) callchain(cc []uint64) {
	d.str("    callchain nr=")
	d.dec(uint64(len(cc)))
	d.flushLine()
	for _, ip := range cc {
		d.str("      ")
		if name := perf.CallchainContextName(ip); name != "" {
			d.str(name)
		} else {
			d.hex(ip)
		}
		d.flushLine()
	}
}

// branches prints the branch stack, newest first as recorded, one entry
// a line with perf script's brstack flags: M/P/- (mispredicted,
// predicted, neither), X (in transaction), A (abort), cycles, and the
// branch type, speculation and privilege when recorded.
func (d *dumper) branches(bs *perf.BranchStack) {
	d.str("    branch_stack nr=")
	d.dec(uint64(len(bs.Branches)))
	if bs.HasHWIndex {
		d.str(" hw_idx=")
		d.buf = strconv.AppendInt(d.buf, int64(bs.HWIndex), 10)
	}
	d.flushLine()
	for i, e := range bs.Branches {
		d.str("      ")
		d.hex(e.From)
		d.str(" -> ")
		d.hex(e.To)
		f := e.Flags
		switch {
		case f.Mispred():
			d.str(" M")
		case f.Predicted():
			d.str(" P")
		default:
			d.str(" -")
		}
		if f.InTX() {
			d.str(" X")
		}
		if f.Abort() {
			d.str(" A")
		}
		d.str(" cycles=")
		d.dec(uint64(f.Cycles()))
		if t := f.FullType(); t != perf.BrUnknown {
			d.field("type")
			d.str(t.String())
		}
		if sp := f.Spec(); sp != perf.BrSpecNA {
			d.field("spec")
			d.str(sp.String())
		}
		if p := f.Priv(); p != perf.BrPrivUnknown {
			d.field("priv")
			d.str(p.String())
		}
		if bs.HasCounters && i < len(bs.BranchCounters) {
			d.field("counters")
			d.hex(bs.BranchCounters[i])
		}
		d.flushLine()
	}
}

func (d *dumper) readValues(name string, rv *perf.ReadValues) {
	d.str("    ")
	d.str(name)
	if rv.Format&perf.FormatTotalTimeEnabled != 0 {
		d.field("time_enabled")
		d.dec(rv.TimeEnabled)
	}
	if rv.Format&perf.FormatTotalTimeRunning != 0 {
		d.field("time_running")
		d.dec(rv.TimeRunning)
	}
	for _, v := range rv.Values {
		d.field("value")
		d.dec(v.Value)
		if rv.Format&perf.FormatID != 0 {
			d.field("id")
			d.dec(v.ID)
		}
		if rv.Format&perf.FormatLost != 0 {
			d.field("lost")
			d.dec(v.Lost)
		}
	}
	d.flushLine()
}

func (d *dumper) regs(name string, r *perf.Regs) {
	d.str("    ")
	d.str(name)
	d.field("abi")
	d.dec(r.ABI)
	d.field("mask")
	d.hex(r.Mask)
	for i, v := range r.Values {
		if i == 0 {
			d.buf = append(d.buf, ' ')
		} else {
			d.buf = append(d.buf, ',')
		}
		d.hex(v)
	}
	d.flushLine()
}

// trailer prints the pid/tid and cpu of a sample_id trailer.
func (d *dumper) trailer(t *perf.Trailer) {
	if t.Present&perf.SampleTID != 0 {
		d.str(" sid=")
		d.pidTID(t.PID, t.TID)
	}
	if t.Present&perf.SampleCPU != 0 {
		d.field("cpu")
		d.dec(uint64(t.CPU))
	}
}

// fields prints the key fields of a record other than a sample.
func (d *dumper) fields(m perf.Record) {
	switch m := m.(type) {
	case *perf.Mmap:
		d.buf = append(d.buf, ' ')
		d.pidTID(m.PID, m.TID)
		d.trailer(&m.Trailer)
		d.mapping(m.Addr, m.Len, m.PgOff)
		d.str(" ")
		d.str(m.Filename)
	case *perf.Mmap2:
		d.buf = append(d.buf, ' ')
		d.pidTID(m.PID, m.TID)
		d.trailer(&m.Trailer)
		d.mapping(m.Addr, m.Len, m.PgOff)
		if m.HasBuildID() {
			d.str(" build_id=")
			d.buf = fmt.Appendf(d.buf, "%x", m.BuildID)
		} else {
			d.buf = fmt.Appendf(d.buf, " dev=%02x:%02x ino=%d gen=%d", m.Maj, m.Min, m.Ino, m.InoGeneration)
		}
		d.str(" prot=")
		d.str(protString(m.Prot))
		d.field("flags")
		d.hex(uint64(m.Flags))
		d.str(" ")
		d.str(m.Filename)
	case *perf.Comm:
		d.buf = append(d.buf, ' ')
		d.pidTID(m.PID, m.TID)
		d.trailer(&m.Trailer)
		if m.Exec() {
			d.str(" exec")
		}
		d.str(" comm=")
		d.str(m.Comm)
	case *perf.Fork:
		d.buf = fmt.Appendf(d.buf, " %d/%d parent %d/%d", int32(m.PID), int32(m.TID), int32(m.PPID), int32(m.PTID))
		d.trailer(&m.Trailer)
	case *perf.Lost:
		d.trailer(&m.Trailer)
		d.field("id")
		d.dec(m.ID)
		d.field("lost")
		d.dec(m.Lost)
	case *perf.LostSamples:
		d.trailer(&m.Trailer)
		d.field("lost")
		d.dec(m.Lost)
	case *perf.Throttle:
		d.trailer(&m.Trailer)
		d.field("id")
		d.dec(m.ID)
		d.field("stream_id")
		d.dec(m.StreamID)
	case *perf.Read:
		d.buf = append(d.buf, ' ')
		d.pidTID(m.PID, m.TID)
		d.trailer(&m.Trailer)
		for _, v := range m.Values.Values {
			d.field("value")
			d.dec(v.Value)
		}
	case *perf.Switch:
		d.trailer(&m.Trailer)
		d.str(inOut(m.Out()))
	case *perf.SwitchCPUWide:
		d.trailer(&m.Trailer)
		d.str(inOut(m.Out()))
		d.str(" next/prev=")
		d.pidTID(m.NextPrevPID, m.NextPrevTID)
	case *perf.Namespaces:
		d.buf = append(d.buf, ' ')
		d.pidTID(m.PID, m.TID)
		d.trailer(&m.Trailer)
		for _, l := range m.Links {
			d.buf = fmt.Appendf(d.buf, " %d/%#x", l.Dev, l.Ino)
		}
	case *perf.Ksymbol:
		d.trailer(&m.Trailer)
		d.buf = fmt.Appendf(d.buf, " addr=%#x len=%d ksym_type=%d flags=%#x %s", m.Addr, m.Len, m.KsymType, m.Flags, m.Name)
	case *perf.BPFEvent:
		d.trailer(&m.Trailer)
		d.buf = fmt.Appendf(d.buf, " type=%d flags=%#x id=%d tag=%x", m.EventType, m.Flags, m.ID, m.Tag)
	case *perf.Cgroup:
		d.trailer(&m.Trailer)
		d.buf = fmt.Appendf(d.buf, " id=%d %s", m.ID, m.Path)
	case *perf.TextPoke:
		d.trailer(&m.Trailer)
		d.buf = fmt.Appendf(d.buf, " addr=%#x old=%x new=%x", m.Addr, m.Old, m.New)
	case *perf.Aux:
		d.trailer(&m.Trailer)
		d.buf = fmt.Appendf(d.buf, " offset=%#x size=%#x flags=%#x", m.AuxOffset, m.AuxSize, m.Flags)
	case *perf.ItraceStart:
		d.buf = append(d.buf, ' ')
		d.pidTID(m.PID, m.TID)
		d.trailer(&m.Trailer)
	case *perf.AuxOutputHWID:
		d.trailer(&m.Trailer)
		d.field("hw_id")
		d.hex(m.HWID)
	default:
		d.userFields(m)
	}
}

// userFields prints the key fields of perf's own records.
func (d *dumper) userFields(m perf.Record) {
	switch m := m.(type) {
	case *perf.HeaderAttr:
		d.buf = fmt.Appendf(d.buf, " type=%v config=%#x sample_type=%v ids=%d", m.Attr.Type, m.Attr.Config, m.Attr.SampleType, len(m.IDs))
	case *perf.HeaderEventType:
		d.buf = fmt.Appendf(d.buf, " id=%d name=%s", m.EventID, m.Name)
	case *perf.HeaderTracingData:
		d.buf = fmt.Appendf(d.buf, " size=%d", m.Size)
	case *perf.HeaderBuildID:
		d.buf = fmt.Appendf(d.buf, " pid=%d build_id=%x %s", m.PID, m.BuildID, m.Filename)
	case *perf.IDIndex:
		d.buf = fmt.Appendf(d.buf, " nr=%d", len(m.Entries))
	case *perf.AuxtraceInfo:
		d.buf = fmt.Appendf(d.buf, " type=%d priv=%d", m.AuxType, len(m.Priv))
	case *perf.Auxtrace:
		d.buf = fmt.Appendf(d.buf, " size=%#x offset=%#x ref=%#x idx=%d tid=%d cpu=%d", m.Size, m.Offset, m.Reference, m.Idx, int32(m.TID), int32(m.CPU))
	case *perf.AuxtraceError:
		d.buf = fmt.Appendf(d.buf, " type=%d code=%d cpu=%d pid=%d tid=%d ip=%#x %s", m.ErrType, m.Code, int32(m.CPU), int32(m.PID), int32(m.TID), m.IP, m.Msg)
	case *perf.ThreadMap:
		d.buf = fmt.Appendf(d.buf, " nr=%d", len(m.Entries))
	case *perf.CPUMap:
		d.buf = fmt.Appendf(d.buf, " cpus=%d", len(m.CPUs))
	case *perf.StatConfig:
		d.buf = fmt.Appendf(d.buf, " nr=%d", len(m.Entries))
	case *perf.Stat:
		d.buf = fmt.Appendf(d.buf, " id=%d cpu=%d thread=%d val=%d ena=%d run=%d", m.ID, int32(m.CPU), int32(m.Thread), m.Val, m.Ena, m.Run)
	case *perf.StatRound:
		d.buf = fmt.Appendf(d.buf, " type=%d time=%d", m.RoundType, m.Time)
	case *perf.EventUpdate:
		d.buf = fmt.Appendf(d.buf, " type=%d id=%d", m.UpdateType, m.ID)
		switch m.UpdateType {
		case perf.EventUpdateName:
			d.str(" name=" + m.Name)
		case perf.EventUpdateUnit:
			d.str(" unit=" + m.Unit)
		case perf.EventUpdateScale:
			d.buf = fmt.Appendf(d.buf, " scale=%g", m.Scale)
		}
	case *perf.TimeConv:
		d.buf = fmt.Appendf(d.buf, " shift=%d mult=%d zero=%d", m.TimeShift, m.TimeMult, m.TimeZero)
	case *perf.HeaderFeature:
		d.buf = fmt.Appendf(d.buf, " feature=%v size=%d", perfdata.Feature(min(m.FeatID, perfdata.FeatBits)), len(m.Data))
	case *perf.Compressed:
		d.buf = fmt.Appendf(d.buf, " compressed=%d", len(m.Data))
	case *perf.Unknown:
		d.buf = fmt.Appendf(d.buf, " size=%d skipped", int(m.Size))
	}
}

func (d *dumper) mapping(addr, n, pgoff uint64) {
	d.str(" [")
	d.hex(addr)
	d.str("+")
	d.hex(n)
	d.str(" @")
	d.hex(pgoff)
	d.str("]")
}

func inOut(out bool) string {
	if out {
		return " out"
	}
	return " in"
}

// protString prints mmap protection bits as perf does: "r-xp" without the
// sharing letter.
func protString(p uint32) string {
	b := []byte("---")
	if p&1 != 0 {
		b[0] = 'r'
	}
	if p&2 != 0 {
		b[1] = 'w'
	}
	if p&4 != 0 {
		b[2] = 'x'
	}
	return string(b)
}

// Stats reads every record of r and prints the header facts (file or pipe
// mode, perf version, host, CPU, command line, sample times, features),
// each event's attr in brief and the number of records of each type; path
// is the name printed for the file. Set r.SetFileOrder(true) first when
// the order does not matter: counting needs none.
func Stats(w io.Writer, r *perfdata.Reader, path string) error {
	for r.Next() {
	}
	h := r.Header()
	f := r.Features()
	mode := "file mode"
	if h.Pipe {
		mode = "pipe mode"
	}
	fmt.Fprintf(w, "file %s (%s)\n", path, mode)
	line := func(name, v string) {
		if v != "" {
			fmt.Fprintf(w, "%-14s %s\n", name, v)
		}
	}
	line("perf version", f.Version)
	line("arch", f.Arch)
	line("hostname", f.Hostname)
	line("os release", f.OSRelease)
	cpu := f.CPUDesc
	if f.CPUID != "" {
		cpu = strings.TrimSpace(cpu + " (cpuid " + f.CPUID + ")")
	}
	line("cpu", cpu)
	if f.NrCPUsOnline != 0 || f.NrCPUsAvail != 0 {
		line("nr cpus", fmt.Sprintf("%d online, %d available", f.NrCPUsOnline, f.NrCPUsAvail))
	}
	if f.TotalMemKB != 0 {
		line("total memory", fmt.Sprintf("%d kB", f.TotalMemKB))
	}
	line("command line", strings.Join(f.Cmdline, " "))
	if f.SampleTimeFirst != 0 || f.SampleTimeLast != 0 {
		line("sample time", fmt.Sprintf("%d.%09d to %d.%09d", f.SampleTimeFirst/1e9, f.SampleTimeFirst%1e9, f.SampleTimeLast/1e9, f.SampleTimeLast%1e9))
	}
	if len(f.BuildIDs) > 0 {
		line("build-ids", strconv.Itoa(len(f.BuildIDs)))
	}
	if len(f.Present) > 0 {
		names := make([]string, len(f.Present))
		for i, p := range f.Present {
			names[i] = p.String()
		}
		line("features", strings.Join(names, " "))
	}
	fmt.Fprintf(w, "events %d\n", len(r.Attrs()))
	for i, a := range r.Attrs() {
		fmt.Fprintf(w, "  %d %s: type %v config %#x sample_type %v", i, a.Name, a.Attr.Type, a.Attr.Config, a.Attr.SampleType)
		if a.Attr.SampleType&perf.SampleBranchStack != 0 {
			fmt.Fprintf(w, " branch_sample_type %v", a.Attr.BranchSampleType)
		}
		if a.Attr.Freq() {
			fmt.Fprintf(w, " freq %d", a.Attr.SamplePeriod)
		} else if a.Attr.SamplePeriod != 0 {
			fmt.Fprintf(w, " period %d", a.Attr.SamplePeriod)
		}
		fmt.Fprintf(w, " ids %d\n", len(a.IDs))
	}
	counts := r.Counts()
	types := make([]perf.RecordType, 0, len(counts))
	for t := range counts {
		types = append(types, t)
	}
	slices.SortFunc(types, func(a, b perf.RecordType) int { return cmp.Compare(a, b) })
	fmt.Fprintln(w, "records by type")
	for _, t := range types {
		fmt.Fprintf(w, "  %-16s %d\n", t, counts[t])
	}
	fmt.Fprintf(w, "samples %d\n", r.Count(perf.RecordSample))
	fmt.Fprintf(w, "records %d\n", r.Total())
	if n := r.Unknown(); n > 0 {
		fmt.Fprintf(w, "unknown types %d (skipped by size)\n", n)
	}
	return nil // an error that stopped reading is r's to report (r.Err)
}
