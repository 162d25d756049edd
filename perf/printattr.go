package perf

import (
	"bufio"
	"io"
	"strconv"
	"strings"
)

// FprintAttr writes a in the layout `perf record -vv` (perf 6.1) uses for
// its "perf_event_attr:" blocks, without the dashed rules around them:
// the header line, then one "  %-32s %s" line per non-zero field, in
// perf's order and spelling (tools/perf/util/perf_event_attr_fprintf.c).
//
// Like perf 6.1 it prints only the bits it has names for: the TRANSACTION
// sample bit and unnamed high bits of sample_type, read_format,
// branch_sample_type and the flag word do not appear. Fields perf 6.1 does
// not know are printed the way later perf versions print them: config3 and
// the aux_action bits (aux_start_paused, aux_pause, aux_resume) after
// sig_data, and the COUNTERS branch bit.
func FprintAttr(w io.Writer, a *Attr) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("perf_event_attr:\n")
	for _, l := range attrLines(a) {
		bw.WriteString("  ")
		bw.WriteString(l.name)
		for i := len(l.name); i < 32; i++ {
			bw.WriteByte(' ')
		}
		bw.WriteByte(' ')
		bw.WriteString(l.value)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

type attrLine struct{ name, value string }

// attrLines lists the non-zero fields of a in perf's order.
func attrLines(a *Attr) []attrLine {
	var ls []attrLine
	add := func(name string, v uint64, format func(uint64) string) {
		if v != 0 {
			ls = append(ls, attrLine{name, format(v)})
		}
	}
	add("type", uint64(a.Type), pUnsigned)
	add("size", uint64(a.Size), pUnsigned)
	add("config", a.Config, pHex)
	add("{ sample_period, sample_freq }", a.SamplePeriod, pUnsigned)
	add("sample_type", uint64(a.SampleType), perfSampleTypeString)
	add("read_format", uint64(a.ReadFormat), perfReadFormatString)
	for i, name := range attrFlagNames {
		if name == "" { // precise_ip occupies bits 15-16, printed after watermark
			if i == preciseShift {
				add("precise_ip", uint64(a.PreciseIP&3), pUnsigned)
			}
			continue
		}
		add(name, uint64(a.Flags>>i&1), pUnsigned)
	}
	add("{ wakeup_events, wakeup_watermark }", uint64(a.WakeupEvents), pUnsigned)
	add("bp_type", uint64(a.BPType), pUnsigned)
	add("{ bp_addr, config1 }", a.Config1, pHex)
	add("{ bp_len, config2 }", a.Config2, pHex)
	add("branch_sample_type", uint64(a.BranchSampleType), perfBranchSampleTypeString)
	add("sample_regs_user", a.SampleRegsUser, pHex)
	add("sample_stack_user", uint64(a.SampleStackUser), pUnsigned)
	add("clockid", uint64(int64(a.ClockID)), pSigned)
	add("sample_regs_intr", a.SampleRegsIntr, pHex)
	add("aux_watermark", uint64(a.AuxWatermark), pUnsigned)
	add("sample_max_stack", uint64(a.SampleMaxStack), pUnsigned)
	add("aux_sample_size", uint64(a.AuxSampleSize), pUnsigned)
	add("sig_data", a.SigData, pUnsigned)
	add("config3", a.Config3, pHex)
	add("aux_start_paused", uint64(a.AuxAction&1), pUnsigned)
	add("aux_pause", uint64(a.AuxAction>>1&1), pUnsigned)
	add("aux_resume", uint64(a.AuxAction>>2&1), pUnsigned)
	return ls
}

func pUnsigned(v uint64) string { return strconv.FormatUint(v, 10) }
func pSigned(v uint64) string   { return strconv.FormatInt(int64(v), 10) }
func pHex(v uint64) string      { return "0x" + strconv.FormatUint(v, 16) }

type bitName struct {
	bit  uint64
	name string
}

// perfSampleTypeNames is perf's own order for sample_type, which is not
// bit order (IDENTIFIER and REGS_INTR come before DATA_SRC and WEIGHT) and
// leaves out TRANSACTION.
var perfSampleTypeNames = []bitName{
	{uint64(SampleIP), "IP"}, {uint64(SampleTID), "TID"}, {uint64(SampleTime), "TIME"},
	{uint64(SampleAddr), "ADDR"}, {uint64(SampleRead), "READ"},
	{uint64(SampleCallchain), "CALLCHAIN"}, {uint64(SampleID), "ID"},
	{uint64(SampleCPU), "CPU"}, {uint64(SamplePeriod), "PERIOD"},
	{uint64(SampleStreamID), "STREAM_ID"}, {uint64(SampleRaw), "RAW"},
	{uint64(SampleBranchStack), "BRANCH_STACK"}, {uint64(SampleRegsUser), "REGS_USER"},
	{uint64(SampleStackUser), "STACK_USER"}, {uint64(SampleIdentifier), "IDENTIFIER"},
	{uint64(SampleRegsIntr), "REGS_INTR"}, {uint64(SampleDataSrc), "DATA_SRC"},
	{uint64(SampleWeight), "WEIGHT"}, {uint64(SamplePhysAddr), "PHYS_ADDR"},
	{uint64(SampleAux), "AUX"}, {uint64(SampleCgroup), "CGROUP"},
	{uint64(SampleDataPageSize), "DATA_PAGE_SIZE"},
	{uint64(SampleCodePageSize), "CODE_PAGE_SIZE"},
	{uint64(SampleWeightStruct), "WEIGHT_STRUCT"},
}

var perfReadFormatNames = []bitName{
	{uint64(FormatTotalTimeEnabled), "TOTAL_TIME_ENABLED"},
	{uint64(FormatTotalTimeRunning), "TOTAL_TIME_RUNNING"},
	{uint64(FormatID), "ID"}, {uint64(FormatGroup), "GROUP"}, {uint64(FormatLost), "LOST"},
}

// perfBranchNames is bit order; perf 6.1 stops at PRIV_SAVE, later perf
// adds COUNTERS.
var perfBranchNames = func() []bitName {
	ns := make([]bitName, 0, len(branchSampleNames))
	for i, n := range branchSampleNames {
		ns = append(ns, bitName{1 << i, n})
	}
	return ns
}()

func perfSampleTypeString(v uint64) string       { return perfBits(v, perfSampleTypeNames) }
func perfReadFormatString(v uint64) string       { return perfBits(v, perfReadFormatNames) }
func perfBranchSampleTypeString(v uint64) string { return perfBits(v, perfBranchNames) }

// perfBits mirrors __p_bits: the names of the set bits, in table order.
func perfBits(v uint64, names []bitName) string {
	var b strings.Builder
	for _, n := range names {
		if v&n.bit == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('|')
		}
		b.WriteString(n.name)
	}
	return b.String()
}
