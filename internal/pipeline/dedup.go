package pipeline

import (
	"math/bits"
	"math/rand/v2"

	"github.com/hwprof/hwprof/ccmap"
)

// deduper is adaptive bursting's history table with re-enablement: a
// stack whose signature was seen before is folded with probability ratio
// and its weight compensated by 1/ratio.
type deduper struct {
	ratio float64
	seen  map[uint64]struct{}
	rng   *rand.Rand
	// compensate scales a re-enabled stack's weight: ccmap.Compensate
	// (tests put a biased rule here to show the bias test catches it).
	compensate func(weight uint64, ratio, u float64) uint64
}

// admit decides whether a stack is folded, and with which weight.
func (d *deduper) admit(frames []ccmap.Frame, weight uint64) (uint64, bool) {
	sig := signature(frames)
	if _, ok := d.seen[sig]; !ok {
		d.seen[sig] = struct{}{}
		return weight, true
	}
	if d.rng.Float64() >= d.ratio {
		return 0, false
	}
	return d.compensate(weight, d.ratio, d.rng.Float64()), true
}

// signature hashes a stack's functions and call sites (the paper's CRC
// over method and call-site addresses). A collision only makes a new
// stack count as seen, which keeps every weight unbiased.
func signature(frames []ccmap.Frame) uint64 {
	h := uint64(len(frames))
	for _, f := range frames {
		h = mix(h ^ uint64(f.Func))
		h = mix(h ^ f.Site)
	}
	return h
}

func mix(x uint64) uint64 {
	hi, lo := bits.Mul64(x^0x243f6a8885a308d3, 0x9e3779b97f4a7c15)
	return hi ^ lo
}
