package offcpu

import (
	"errors"

	"github.com/hwprof/hwprof/perf"
)

// EventName is the off-CPU event's name in a recording (perf's name of the
// software event it is).
const EventName = "context-switches"

// IsEvent reports whether an attr is an off-CPU event: the software
// context-switch event sampled at every switch (period 1). The samples of
// such an event are stacks a thread left the CPU with, not time.
func IsEvent(a *perf.Attr) bool {
	return a.Type == perf.TypeSoftware && a.Config == perf.SWContextSwitches && !a.Freq() && a.SamplePeriod == 1
}

// IsSwitchEvent reports whether an attr is the switch event of Events:
// the software dummy event asking for switch records, which samples
// nothing.
func IsSwitchEvent(a *perf.Attr) bool {
	return a.Type == perf.TypeSoftware && a.Config == perf.SWDummy && HasSwitches(a)
}

// HasSwitches reports whether an attr asks for switch records
// (attr.context_switch: PERF_RECORD_SWITCH, or SWITCH_CPU_WIDE for an
// event of a CPU).
func HasSwitches(a *perf.Attr) bool { return a.Flags.Has(perf.FlagContextSwitch) }

// tracking are the attr flags of the event that tracks the processes
// (mmap, comm, task, switches...): one event of a recording has them.
const tracking = perf.FlagMmap | perf.FlagComm | perf.FlagTask | perf.FlagMmapData | perf.FlagMmap2 |
	perf.FlagCommExec | perf.FlagContextSwitch | perf.FlagKsymbol | perf.FlagBPFEvent | perf.FlagNamespaces |
	perf.FlagCgroup | perf.FlagTextPoke | perf.FlagBuildID

// kept are the sample fields the off-CPU event takes from the recording's
// first event: who, when, where, and the call graph with its stack copy.
const kept = perf.SampleIP | perf.SampleTID | perf.SampleTime | perf.SampleCPU | perf.SamplePeriod |
	perf.SampleCallchain | perf.SampleRegsUser | perf.SampleStackUser

// SwitchEventName is the name of the event that carries the switch
// records (perf's name of the software dummy event it is).
const SwitchEventName = "dummy"

// Events returns the events of a recording that measures off-CPU time:
// evs; when kernel is true, the off-CPU event: the software
// context-switch event with period 1, sampling the stack of every switch
// out (the kernel's part says why the thread left: a futex, a read, a
// sleep) with the first event's call graph; and the switch event: the
// software dummy event, which samples nothing and asks for switch
// records, so that they have a ring of their own, which samples never
// fill (a switch whose stack sample was lost keeps its interval). Every
// event then carries PERF_SAMPLE_IDENTIFIER, as perf gives several
// events of different sample types.
//
// kernel must say whether this process may sample the kernel
// (perf_event_paranoid ≤ 1, or CAP_PERFMON): the kernel takes the
// context-switch sample in kernel mode and drops it for an event that
// excludes the kernel, so without it the recording has the switch records
// alone: each interval off the CPU, exact, without the stack.
func Events(evs []perf.Event, kernel bool) ([]perf.Event, error) {
	if len(evs) == 0 {
		return nil, errors.New("off-cpu: no event to add to")
	}
	out := make([]perf.Event, len(evs), len(evs)+2)
	copy(out, evs)
	first := out[0].Attr
	sw := perf.Attr{
		Type:         perf.TypeSoftware,
		Size:         first.Size,
		Config:       perf.SWDummy,
		SamplePeriod: 1,
		SampleType:   first.SampleType&(perf.SampleTID|perf.SampleTime|perf.SampleCPU) | perf.SampleIP | perf.SampleTID | perf.SampleTime,
		ReadFormat:   first.ReadFormat,
		Flags:        first.Flags&^(tracking|perf.FlagFreq) | perf.FlagContextSwitch | perf.FlagSampleIDAll,
		ClockID:      first.ClockID,
	}
	if !kernel {
		out = append(out, perf.Event{Name: SwitchEventName, Attr: sw})
		setSampleIDs(out)
		return out, nil
	}
	a := perf.Attr{
		Type:            perf.TypeSoftware,
		Size:            first.Size,
		Config:          perf.SWContextSwitches,
		SamplePeriod:    1,
		SampleType:      first.SampleType & kept,
		ReadFormat:      first.ReadFormat,
		Flags:           first.Flags &^ (tracking | perf.FlagFreq | perf.FlagExcludeKernel | perf.FlagExcludeCallchainKernel),
		SampleRegsUser:  first.SampleRegsUser,
		SampleStackUser: first.SampleStackUser,
		SampleMaxStack:  first.SampleMaxStack,
		ClockID:         first.ClockID,
	}
	a.SampleType |= perf.SampleIP | perf.SampleTID | perf.SampleTime
	if a.SampleType&perf.SampleStackUser == 0 {
		a.SampleRegsUser, a.SampleStackUser = 0, 0
	}
	if a.SampleType&perf.SampleCallchain == 0 {
		a.SampleMaxStack = 0
	}
	out = append(out, perf.Event{Name: EventName, Attr: a}, perf.Event{Name: SwitchEventName, Attr: sw})
	setSampleIDs(out)
	return out, nil
}

// setSampleIDs gives every event a sample id as perf does for several
// events: PERF_SAMPLE_IDENTIFIER when their sample types differ (so that a
// reader finds the id before knowing the event), PERF_SAMPLE_ID otherwise.
func setSampleIDs(evs []perf.Event) {
	const ids = perf.SampleID | perf.SampleIdentifier
	identifier := false
	for _, ev := range evs[1:] {
		if ev.Attr.SampleType&^ids != evs[0].Attr.SampleType&^ids {
			identifier = true
		}
	}
	for i := range evs {
		a := &evs[i].Attr
		if identifier {
			a.SampleType = a.SampleType&^perf.SampleID | perf.SampleIdentifier
		} else if a.SampleType&perf.SampleIdentifier == 0 {
			a.SampleType |= perf.SampleID
		}
		a.ReadFormat |= perf.FormatID
	}
}
