package script

import (
	"fmt"
	"slices"
	"strings"
)

// field is one of perf script's -F fields that hwprof prints.
type field uint8

const (
	fieldComm field = iota
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
	numFields
)

var fieldNames = [numFields]string{
	"comm", "tid", "pid", "cpu", "time", "period", "event", "ip", "sym",
	"symoff", "dso", "srcline", "brstack", "brstacksym",
}

// FieldNames returns the -F fields hwprof script knows, in perf's order.
func FieldNames() []string { return slices.Clone(fieldNames[:]) }

// ParseFields reads -F, a comma-separated list of FieldNames. Only brstack and brstacksym (hwprof's first
// use of -F) keep the default output and add the branch stack; any other
// field selects perf's field mode: exactly the fields named, laid out as
// perf script 6.1 prints them.
func ParseFields(list string) (Options, error) {
	var o Options
	for f := range strings.SplitSeq(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		i := slices.Index(fieldNames[:], f)
		if i < 0 {
			return o, fmt.Errorf("unknown field %q in -F (known: %s)", f, strings.Join(fieldNames[:], ", "))
		}
		o.fields |= 1 << i
	}
	o.brstack = o.has(fieldBrstack)
	o.brstackSym = o.has(fieldBrstackSym)
	o.Srcline = o.has(fieldSrcline)
	o.perfFields = o.fields&^(1<<fieldBrstack|1<<fieldBrstackSym) != 0
	return o, nil
}

// Options say what is printed. The zero Options print perf script's
// default output; ParseFields reads the others from -F.
type Options struct {
	// Srcline prints the source file and line of every frame, inlined
	// frames included (-F srcline, or --srcline beside any -F).
	Srcline bool

	brstack, brstackSym bool
	perfFields          bool   // -F named perf fields: print only those
	fields              uint32 // bit i: field i
}

func (o Options) has(f field) bool { return o.fields&(1<<f) != 0 }
