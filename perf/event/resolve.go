package event

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hwprof/hwprof/perf"
)

// This file turns a parsed Spec into perf's initial attr for it, the way
// parse_events does, before evsel__config adds the record options.

// evsel mirrors the parts of perf's struct evsel that decide its attr.
type evsel struct {
	name       string
	attr       perf.Attr
	terms      []configTerm // record-time terms, applied last (evsel__apply_config_terms)
	preciseMax bool
	sampleRead bool
	tracking   bool // the event that records mmap, comm, task...
	immediate  bool // enabled at once (the -a tracking dummy)
}

func (e *evsel) isDummy() bool {
	return e.attr.Type == perf.TypeSoftware && e.attr.Config == perf.SWDummy
}

// configTerm is one of the terms perf keeps on the evsel and applies
// after the record options (enum evsel_term_type).
type configTerm struct {
	key string // "period", "freq", "time", "call-graph", "branch_type", "stack-size", "max-stack", "inherit", "overwrite"
	num uint64
	str string
}

// termKind says how a generic term's value is read.
type termKind int

const (
	termNumber termKind = iota // decimal or 0x hex
	termString                 // a word
	termFlag                   // bare; a value is read as a number
)

// genericTerms are the terms perf accepts on any event
// (config_term_common and its callers); the others name format bits or
// aliases of a PMU.
var genericTerms = map[string]termKind{
	"config": termNumber, "config1": termNumber, "config2": termNumber,
	"name": termString, "period": termNumber, "freq": termNumber,
	"branch_type": termString, "time": termNumber, "call-graph": termString,
	"stack-size": termNumber, "max-stack": termNumber,
	"inherit": termFlag, "no-inherit": termFlag,
	"overwrite": termFlag, "no-overwrite": termFlag,
}

// unsupportedTerms are perf terms hwprof does not implement.
var unsupportedTerms = map[string]bool{
	"nr": true, "driver-config": true, "percore": true, "aux-output": true,
	"aux-sample-size": true, "metric-id": true,
}

type resolver struct {
	pmus       map[string]*PMU
	discovered bool
}

// pmu looks a PMU up, discovering sysfs on first use when no map was given.
func (r *resolver) pmu(name string) (*PMU, error) {
	if r.pmus == nil && !r.discovered {
		r.discovered = true
		pmus, err := DiscoverPMUs(SysfsPMURoot)
		if err != nil && name != "cpu" {
			return nil, fmt.Errorf("%w (%v)", ErrNoPMU, err)
		}
		r.pmus = pmus
	}
	return lookupPMU(r.pmus, name)
}

// resolve parses text and builds its initial evsel.
func (r *resolver) resolve(text string) (*evsel, error) {
	sp, err := Parse(text)
	if err != nil {
		return nil, err
	}
	e := &evsel{name: text}
	e.attr.Size = perf.AttrSizeVer7
	var pmu *PMU
	switch sp.Kind {
	case SpecSymbolic:
		s := symbolicEvents[sp.Name]
		e.attr.Type, e.attr.Config = s.typ, s.config
	case SpecRaw:
		e.attr.Type, e.attr.Config = perf.TypeRaw, sp.Raw
	case SpecPMU:
		if pmu, err = r.pmu(sp.Name); err != nil {
			return nil, &resolveError{text, err}
		}
		e.attr.Type = pmu.Type
	}
	if err := e.applyTerms(sp, pmu); err != nil {
		return nil, &resolveError{text, err}
	}
	if e.attr.Type == perf.TypeSoftware && e.attr.Config == perf.SWBPFOutput && e.attr.SampleType == 0 {
		// evsel__new_idx: a bpf-output event samples raw data once per event.
		e.attr.SampleType = perf.SampleRaw | perf.SampleTime | perf.SampleCPU | perf.SamplePeriod
		e.attr.SamplePeriod = 1
	}
	e.applyModifiers(sp)
	return e, nil
}

// resolveError is a specification that parses but does not resolve; it
// wraps the cause (ErrNoPMU for a missing PMU).
type resolveError struct {
	spec string
	err  error
}

func (e *resolveError) Error() string { return fmt.Sprintf("event %q: %v", e.spec, e.err) }
func (e *resolveError) Unwrap() error { return e.err }

// applyTerms mirrors parse_events_add_pmu / config_attr: generic terms
// first (config= sets), then the PMU's aliases and format terms, which OR
// their bits in.
func (e *evsel) applyTerms(sp Spec, pmu *PMU) error {
	terms, err := expandAliases(sp.Terms, pmu)
	if err != nil {
		return err
	}
	var formatTerms []Term
	for _, t := range terms {
		kind, generic := genericTerms[t.Key]
		if !generic {
			if unsupportedTerms[t.Key] {
				return fmt.Errorf("term %q is not supported", t.Key)
			}
			formatTerms = append(formatTerms, t)
			continue
		}
		if err := e.applyGenericTerm(t, kind); err != nil {
			return err
		}
	}
	for _, t := range formatTerms {
		if err := applyFormatTerm(&e.attr, t, pmu); err != nil {
			return err
		}
	}
	return nil
}

// expandAliases replaces terms that name one of the PMU's events/ aliases
// by the alias's own terms.
func expandAliases(terms []Term, pmu *PMU) ([]Term, error) {
	if pmu == nil {
		return terms, nil
	}
	var out []Term
	for _, t := range terms {
		alias, ok := pmu.Events[t.Key]
		if !ok || !t.Bare {
			out = append(out, t)
			continue
		}
		at, err := parseTerms(alias)
		if err != nil {
			return nil, fmt.Errorf("alias %s/%s/ (%q): %v", pmu.Name, t.Key, alias, err)
		}
		out = append(out, at...)
	}
	return out, nil
}

func applyFormatTerm(a *perf.Attr, t Term, pmu *PMU) error {
	if pmu == nil {
		return fmt.Errorf("unknown term %q (valid terms: %s)", t.Key, validGenericTerms)
	}
	f, ok := pmu.Formats[t.Key]
	if !ok {
		return fmt.Errorf("unknown term %q for PMU %s (formats: %s; or %s)", t.Key, pmu.Name, formatNames(pmu), validGenericTerms)
	}
	v := uint64(1)
	if !t.Bare {
		n, err := parseTermNumber(t.Value)
		if err != nil {
			return fmt.Errorf("term %s=%s: expected a number", t.Key, t.Value)
		}
		v = n
	}
	if err := f.Apply(a, v); err != nil {
		return fmt.Errorf("term %s=%s: %v", t.Key, t.Value, err)
	}
	return nil
}

const validGenericTerms = "config, config1, config2, name, period, freq, branch_type, time, call-graph, stack-size, max-stack, inherit, no-inherit, overwrite, no-overwrite"

func formatNames(p *PMU) string {
	names := make([]string, 0, len(p.Formats))
	for n := range p.Formats {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// applyGenericTerm mirrors config_term_common: config* and branch_type
// reach the attr at once; the rest wait for evsel__apply_config_terms.
func (e *evsel) applyGenericTerm(t Term, kind termKind) error {
	var num uint64
	switch kind {
	case termNumber:
		if t.Bare {
			return fmt.Errorf("term %s needs a value", t.Key)
		}
		n, err := parseTermNumber(t.Value)
		if err != nil {
			return fmt.Errorf("term %s=%s: expected a number", t.Key, t.Value)
		}
		num = n
	case termString:
		if t.Bare {
			return fmt.Errorf("term %s needs a value", t.Key)
		}
		if _, err := parseTermNumber(t.Value); err == nil && t.Key != "name" {
			return fmt.Errorf("term %s=%s: expected a word", t.Key, t.Value)
		}
	case termFlag:
		num = 1
		if !t.Bare {
			n, err := parseTermNumber(t.Value)
			if err != nil {
				return fmt.Errorf("term %s=%s: expected a number", t.Key, t.Value)
			}
			num = n
		}
	}
	switch t.Key {
	case "config":
		e.attr.Config = num
	case "config1":
		e.attr.Config1 = num
	case "config2":
		e.attr.Config2 = num
	case "name":
		e.name = t.Value
	case "branch_type":
		if t.Value != "no" {
			b, err := orBranchFilter(e.attr.BranchSampleType, t.Value)
			if err != nil {
				return err
			}
			e.attr.BranchSampleType = b
		}
		e.terms = append(e.terms, configTerm{key: t.Key, str: t.Value})
	case "call-graph":
		if _, err := termCallGraph(t.Value); err != nil {
			return err
		}
		e.terms = append(e.terms, configTerm{key: t.Key, str: t.Value})
	case "time":
		if num > 1 {
			return fmt.Errorf("term time=%s: want 0 or 1", t.Value)
		}
		e.terms = append(e.terms, configTerm{key: t.Key, num: num})
	case "period", "freq", "stack-size", "max-stack":
		e.terms = append(e.terms, configTerm{key: t.Key, num: num})
	case "inherit", "no-inherit":
		on := num != 0
		if t.Key == "no-inherit" {
			on = !on
		}
		e.terms = append(e.terms, configTerm{key: "inherit", num: b2u(on)})
	case "overwrite", "no-overwrite":
		on := num != 0
		if t.Key == "no-overwrite" {
			on = !on
		}
		e.terms = append(e.terms, configTerm{key: "overwrite", num: b2u(on)})
	}
	return nil
}

// termCallGraph reads a call-graph= term: fp, dwarf, lbr or no.
func termCallGraph(v string) (callchainParam, error) {
	switch v {
	case "no":
		return callchainParam{}, nil
	case "fp":
		return callchainParam{enabled: true, mode: callchainFP}, nil
	case "dwarf":
		return callchainParam{enabled: true, mode: callchainDWARF, dumpSize: defaultStackDump}, nil
	case "lbr":
		return callchainParam{enabled: true, mode: callchainLBR}, nil
	}
	return callchainParam{}, fmt.Errorf("term call-graph=%s: want fp, dwarf, lbr or no", v)
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// applyModifiers mirrors parse_events__modifier_event. Without modifiers
// perf's default is exclude_guest (event_attr_init).
func (e *evsel) applyModifiers(sp Spec) {
	if !sp.HasMods {
		e.attr.Flags |= perf.FlagExcludeGuest
		return
	}
	m := sp.Mods
	set := func(f perf.AttrFlags, on bool) {
		if on {
			e.attr.Flags |= f
		} else {
			e.attr.Flags &^= f
		}
	}
	set(perf.FlagExcludeUser, m.ExcludeUser)
	set(perf.FlagExcludeKernel, m.ExcludeKernel)
	set(perf.FlagExcludeHV, m.ExcludeHV)
	set(perf.FlagExcludeHost, m.ExcludeHost)
	set(perf.FlagExcludeGuest, m.ExcludeGuest)
	set(perf.FlagExcludeIdle, m.ExcludeIdle)
	set(perf.FlagPinned, m.Pinned)
	set(perf.FlagExclusive, m.Exclusive)
	e.attr.PreciseIP = m.Precise
	e.preciseMax = m.PreciseMax
	e.sampleRead = m.SampleRead
}

// systemWideDummy is the event perf record adds for -a to track mmaps,
// comms and tasks (evlist__add_dummy): no exclude bits, period 1.
func systemWideDummy() *evsel {
	return &evsel{name: "dummy:HG", attr: perf.Attr{
		Type: perf.TypeSoftware, Config: perf.SWDummy, Size: perf.AttrSizeVer7, SamplePeriod: 1,
	}}
}
