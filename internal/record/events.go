package record

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/ring"
)

// SetMaxStack sets the depth of every event's call graph to n frames
// (attr.sample_max_stack; 0 leaves the kernel's limit), which the kernel
// refuses above its limit kernel.perf_event_max_stack (lim, or this
// machine's when nil).
func SetMaxStack(events []perf.Event, n uint, lim *perf.KernelLimits) error {
	if n == 0 {
		return nil
	}
	if lim == nil {
		l, err := perf.ReadKernelLimits()
		if err != nil {
			return fmt.Errorf("--max-stack: %w", err)
		}
		lim = &l
	}
	if lim.MaxStack != 0 && uint64(n) > lim.MaxStack {
		return fmt.Errorf("--max-stack %d: the kernel walks at most %d frames (kernel.perf_event_max_stack); "+
			"as root, raise the limit first: sysctl -w kernel.perf_event_max_stack=%d", n, lim.MaxStack, n)
	}
	if n > math.MaxUint16 {
		return fmt.Errorf("--max-stack %d: at most %d frames (attr.sample_max_stack is 16 bits)", n, math.MaxUint16)
	}
	set := false
	for i := range events {
		if events[i].Attr.SampleType&perf.SampleCallchain != 0 {
			events[i].Attr.SampleMaxStack = uint16(n)
			set = true
		}
	}
	if !set {
		return errors.New("--max-stack bounds call graphs, and no event records one: add -g")
	}
	return nil
}

// shareRing checks that the events can share a ring and makes each ring
// wake its reader every quarter ring (ring.DefaultWatermark) unless the
// caller chose a wake-up: the kernel takes the wake-up of the event that
// maps the ring, and the default of half a ring leaves a reader that is
// slow to be scheduled too little room when every hit is a sample.
func shareRing(events []perf.Event, dataBytes int) ([]perf.Event, error) {
	out := slices.Clone(events)
	for i := range out {
		a := &out[i].Attr
		if a.SampleType&(perf.SampleIdentifier|perf.SampleID) == 0 && len(out) > 1 {
			return nil, fmt.Errorf("record: %s: events sharing a ring need PERF_SAMPLE_IDENTIFIER or ID", out[i].Name)
		}
		if !a.Flags.Has(perf.FlagWatermark) && a.WakeupEvents == 0 {
			ring.SetWakeup(a, ring.DefaultWatermark(dataBytes))
		}
	}
	return out, nil
}
