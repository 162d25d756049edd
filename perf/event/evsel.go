package event

import "github.com/hwprof/hwprof/perf"

// This file mirrors evsel__config and the helpers it calls
// (tools/perf/util/evsel.c, perf 6.1): it adds the record options to the
// attr each event got from its specification.

func (e *evsel) set(s perf.SampleType)   { e.attr.SampleType |= s }
func (e *evsel) reset(s perf.SampleType) { e.attr.SampleType &^= s }

func (e *evsel) flag(f perf.AttrFlags, on bool) {
	if on {
		e.attr.Flags |= f
	} else {
		e.attr.Flags &^= f
	}
}

// config mirrors evsel__config for a `perf record` without groups.
func (e *evsel) config(o recordOpts) error {
	a := &e.attr
	track := e.tracking
	e.flag(perf.FlagSampleIDAll, true)
	e.flag(perf.FlagInherit, !o.noInherit)
	e.flag(perf.FlagWriteBackward, false)
	a.ReadFormat = perf.FormatID | perf.FormatLost // perf record always reads ids (and lost counts on 6.0+)
	e.set(perf.SampleIP | perf.SampleTID)
	if e.sampleRead {
		e.set(perf.SampleRead)
		e.setSampleID(false)
	}
	// The default frequency or period is a weak setting: it fills an empty
	// sample_period and yields to -c/-F given by the user.
	if a.SamplePeriod == 0 || o.userFreq || o.userInterval {
		if o.freq != 0 {
			e.flag(perf.FlagFreq, true)
			a.SamplePeriod = o.freq
		} else {
			a.SamplePeriod = o.interval
		}
	}
	if a.Flags.Has(perf.FlagFreq) {
		e.set(perf.SamplePeriod)
	}
	if o.sampleAddress {
		e.set(perf.SampleAddr)
		e.flag(perf.FlagMmapData, track)
	}
	if o.callchain.enabled {
		e.configCallchain(o, o.callchain)
	}
	if o.target == TargetCPUs {
		e.set(perf.SampleCPU)
	}
	e.set(perf.SampleTime)
	if o.sampleAddress {
		e.set(perf.SampleDataSrc)
	}
	if o.branchStack != 0 {
		e.set(perf.SampleBranchStack)
		a.BranchSampleType = o.branchStack
	}
	e.flag(perf.FlagTask, track)
	e.flag(perf.FlagMmap, track)
	e.flag(perf.FlagMmap2, track)
	e.flag(perf.FlagComm, track)
	e.flag(perf.FlagCommExec, track) // evlist__config, where the kernel has comm_exec
	e.flag(perf.FlagKsymbol, track)
	e.flag(perf.FlagBPFEvent, track)
	e.flag(perf.FlagDisabled, true) // every event leads its own group
	e.flag(perf.FlagEnableOnExec, o.target == TargetCommand)
	if e.immediate {
		e.flag(perf.FlagDisabled, false)
		e.flag(perf.FlagEnableOnExec, false)
	}
	if e.preciseMax {
		a.PreciseIP = 3
	}
	if err := e.applyConfigTerms(o); err != nil {
		return err
	}
	if e.isDummy() {
		e.reset(perf.SampleBranchStack) // a dummy never counts, so it has no branch stack
	}
	return nil
}

// configCallchain mirrors __evsel__config_callchain.
func (e *evsel) configCallchain(o recordOpts, p callchainParam) {
	a := &e.attr
	e.set(perf.SampleCallchain)
	a.SampleMaxStack = p.maxStack
	switch p.mode {
	case callchainLBR:
		// With -j, or for an event that excludes user space, perf warns
		// and falls back to frame pointers.
		if o.branchStack == 0 && !a.Flags.Has(perf.FlagExcludeUser) {
			e.set(perf.SampleBranchStack)
			a.BranchSampleType = perf.BranchUser | perf.BranchCallStack | perf.BranchNoCycles | perf.BranchNoFlags | perf.BranchHWIndex
		}
	case callchainDWARF:
		e.set(perf.SampleRegsUser | perf.SampleStackUser)
		a.SampleRegsUser |= perf.RegsUserX86_64
		a.SampleStackUser = p.dumpSize
		e.flag(perf.FlagExcludeCallchainUser, true)
	}
}

// resetCallchain mirrors evsel__reset_callgraph: it takes back what the
// global call graph added, as far as perf does.
func (e *evsel) resetCallchain(p callchainParam) {
	e.reset(perf.SampleCallchain)
	switch p.mode {
	case callchainLBR:
		e.reset(perf.SampleBranchStack)
		e.attr.BranchSampleType &^= perf.BranchUser | perf.BranchCallStack | perf.BranchHWIndex
	case callchainDWARF:
		e.reset(perf.SampleRegsUser | perf.SampleStackUser)
	}
}

// applyConfigTerms mirrors evsel__apply_config_terms: the event's own
// terms override the record options.
func (e *evsel) applyConfigTerms(o recordOpts) error {
	a := &e.attr
	var callGraph string
	var dumpSize, maxStack uint64
	for _, t := range e.terms {
		switch t.key {
		case "period":
			a.SamplePeriod = t.num
			e.flag(perf.FlagFreq, false)
			e.reset(perf.SamplePeriod)
		case "freq":
			a.SamplePeriod = t.num
			e.flag(perf.FlagFreq, true)
			e.set(perf.SamplePeriod)
		case "time":
			if t.num != 0 {
				e.set(perf.SampleTime)
			} else {
				e.reset(perf.SampleTime)
			}
		case "call-graph":
			callGraph = t.str
		case "branch_type":
			if t.str != "no" {
				e.set(perf.SampleBranchStack)
				b, err := orBranchFilter(a.BranchSampleType, t.str)
				if err != nil {
					return err
				}
				a.BranchSampleType = b
			} else {
				e.reset(perf.SampleBranchStack)
			}
		case "stack-size":
			dumpSize = t.num
		case "max-stack":
			maxStack = t.num
		case "inherit":
			e.flag(perf.FlagInherit, t.num != 0)
		case "overwrite":
			e.flag(perf.FlagWriteBackward, t.num != 0)
		}
	}
	if callGraph == "" && dumpSize == 0 && maxStack == 0 {
		return nil
	}
	// The event sets its own call graph: undo the global one, then apply.
	p := callchainParam{mode: o.callchain.mode}
	if maxStack != 0 {
		p.maxStack = uint16(maxStack)
		if callGraph == "" {
			callGraph = "fp"
		}
	}
	sampleAddress := false
	if callGraph != "" {
		tp, err := termCallGraph(callGraph)
		if err != nil {
			return err
		}
		p.enabled = tp.enabled
		if tp.enabled {
			p.mode, p.dumpSize = tp.mode, tp.dumpSize
		} else {
			p.mode = callchainNone
		}
		sampleAddress = p.mode == callchainDWARF
	}
	if dumpSize > 0 {
		p.dumpSize = uint32((dumpSize + 7) &^ 7)
	}
	if o.callchain.enabled {
		e.resetCallchain(o.callchain)
	}
	if p.enabled {
		if sampleAddress {
			e.set(perf.SampleAddr | perf.SampleDataSrc)
			e.flag(perf.FlagMmapData, e.tracking)
		}
		e.configCallchain(o, p)
	}
	return nil
}

// setSampleID mirrors evsel__set_sample_id.
func (e *evsel) setSampleID(identifier bool) {
	if identifier {
		e.reset(perf.SampleID)
		e.set(perf.SampleIdentifier)
	} else {
		e.set(perf.SampleID)
	}
	e.attr.ReadFormat |= perf.FormatID
}
