package record

import (
	"fmt"
	"slices"

	"github.com/hwprof/hwprof/internal/source"
	"github.com/hwprof/hwprof/offcpu"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/event"
	"github.com/hwprof/hwprof/tuning"
)

// KindOf is the tuning kind of an event: time-based for the software
// clocks (periods in nanoseconds), count-based otherwise.
func KindOf(a *perf.Attr) tuning.Kind {
	if a.Type == perf.TypeSoftware && (a.Config == perf.SWCPUClock || a.Config == perf.SWTaskClock) {
		return tuning.Time
	}
	return tuning.Count
}

// Adapt makes o's events tune their period under policy p while recording
// (prepareAdaptive; planned when the events run at a hardware source's
// planned period) and sets o.Adaptive and o.Tuned; when no event can be
// tuned it leaves o as it was.
func (o *Options) Adapt(p tuning.Policy, planned bool) error {
	tuned, err := prepareAdaptive(o.Events, p, planned)
	if err != nil {
		return err
	}
	if slices.Contains(tuned, true) {
		o.Tuned, o.Adaptive = tuned, &p
	}
	return nil
}

// OffCPU makes o's recording measure the time threads spend off the CPU
// too (offcpu.Events: switch records and, with kernel, the off-CPU event
// sampling each switch out's stack), after Adapt: the off-CPU event, of
// period 1, is never tuned.
func (o *Options) OffCPU(kernel bool) error {
	evs, err := offcpu.Events(o.Events, kernel)
	if err != nil {
		return err
	}
	if o.Tuned != nil {
		o.Tuned = append(o.Tuned, make([]bool, len(evs)-len(o.Tuned))...)
	}
	for i := range evs {
		// the activation key's scratch registers are the tuned event's
		if a := &evs[i].Attr; offcpu.IsEvent(a) && a.SampleRegsUser == source.LeafRegsUser|ScratchRegsUser {
			a.SampleRegsUser = source.LeafRegsUser
		}
	}
	o.Events = evs
	return nil
}

// prepareAdaptive turns the attrs that sample at perf's default frequency
// (no period or frequency given for them) into ones the controller can
// tune: a fixed starting period (the policy's, for the event's kind)
// instead of a frequency, and PERF_SAMPLE_PERIOD in every sample, so the
// period history is in the recording and weights stay unbiased (as
// `perf record -c P --sample-period` would build them). It returns which
// events are to be tuned. planned also tunes the events with a fixed
// period that hwprof chose (a sample source's prime period, not the
// user's -c), starting from that period. Events sampling every occurrence
// (period 1: uprobes) are never tuned.
func prepareAdaptive(events []perf.Event, p tuning.Policy, planned bool) ([]bool, error) {
	tuned := make([]bool, len(events))
	for i := range events {
		a := &events[i].Attr
		var start uint64
		switch {
		case a.Freq() && a.SamplePeriod == event.DefaultFreq:
			// perf's default frequency: no period was asked for
		case planned && !a.Freq() && a.SamplePeriod > 1:
			start = a.SamplePeriod
		default:
			continue // the user chose this event's period or frequency
		}
		c, err := tuning.New(p, KindOf(a), start)
		if err != nil {
			return nil, fmt.Errorf("adaptive period: %w", err)
		}
		a.Flags &^= perf.FlagFreq
		a.SamplePeriod = c.Period()
		a.SampleType |= perf.SamplePeriod
		if a.SampleType&perf.SampleRegsUser != 0 && a.SampleRegsUser&source.LeafRegsUser == source.LeafRegsUser {
			// the leaf repair's registers are the activation key's
			// but for the caller-saved ones
			a.SampleRegsUser |= ScratchRegsUser
		}
		if KindOf(a) == tuning.Time {
			// The kernel does not update a clock event's PERIOD field
			// after a change (see adaptive); STREAM_ID tells the samples
			// of the events hwprof changed from inherited copies.
			a.SampleType |= perf.SampleStreamID
		}
		tuned[i] = true
	}
	return tuned, nil
}

// ScratchRegsUser are the caller-saved registers rax, rcx, rdx, rsi, rdi
// and r8-r11, which prepareAdaptive adds to a tuned event that samples
// source.LeafRegsUser: 72 bytes more per sample, for
// tuning.Frame.Scratch.
const ScratchRegsUser uint64 = 1<<perf.RegAX | 1<<perf.RegCX | 1<<perf.RegDX | 1<<perf.RegSI | 1<<perf.RegDI |
	1<<perf.RegR8 | 1<<(perf.RegR8+1) | 1<<(perf.RegR8+2) | 1<<(perf.RegR8+3)
