package otlp

import (
	"fmt"

	"github.com/google/pprof/profile"
)

// Delta returns what cur, a cumulative profile of a recording, holds that
// prev, an earlier cumulative profile of the same recording, did not:
// every value of cur minus the same sample's in prev (pprof's merge key:
// the stack's locations and the labels), samples left with nothing
// removed. Its time is prev's end and its duration cur's less prev's. A nil
// prev gives a copy of cur.
//
// A value that would be negative is 0: sampled weights only grow while a
// recording is read again, but an estimate rounded anew (an LBR recording's
// call counts) can shrink by a little; what is then left out was sent
// before.
//
// prev may lack sample types cur has (a weight that had no samples yet);
// a type prev has and cur lacks is an error.
func Delta(prev, cur *profile.Profile) (*profile.Profile, error) {
	if prev == nil {
		return cur.Copy(), nil
	}
	neg, err := aligned(prev, cur)
	if err != nil {
		return nil, fmt.Errorf("otlp: delta: %w", err)
	}
	neg.Scale(-1)
	d, err := profile.Merge([]*profile.Profile{cur, neg})
	if err != nil {
		return nil, fmt.Errorf("otlp: delta: %w", err)
	}
	for _, s := range d.Sample {
		for i, v := range s.Value {
			s.Value[i] = max(v, 0)
		}
	}
	d = d.Compact() // drops the samples now zero
	d.Comments = cur.Comments
	d.TimeNanos = cur.TimeNanos + prev.DurationNanos
	d.DurationNanos = max(cur.DurationNanos-prev.DurationNanos, 0)
	return d, nil
}

// aligned returns a copy of prev with cur's sample types, in cur's order
// (a type prev lacks is 0), and cur's header, so that pprof's merge takes
// them together.
func aligned(prev, cur *profile.Profile) (*profile.Profile, error) {
	idx := make([]int, len(cur.SampleType))
	for i, st := range cur.SampleType {
		idx[i] = -1
		for j, pt := range prev.SampleType {
			if pt.Type == st.Type && pt.Unit == st.Unit {
				idx[i] = j
			}
		}
	}
	for _, pt := range prev.SampleType {
		if !hasType(cur, pt) {
			return nil, fmt.Errorf("the later profile lacks sample type %s/%s", pt.Type, pt.Unit)
		}
	}
	p := prev.Copy()
	p.SampleType = cur.SampleType
	p.DefaultSampleType = cur.DefaultSampleType
	p.PeriodType, p.Period = cur.PeriodType, cur.Period
	p.Comments = cur.Comments
	for _, s := range p.Sample {
		v := make([]int64, len(idx))
		for i, j := range idx {
			if j >= 0 {
				v[i] = s.Value[j]
			}
		}
		s.Value = v
	}
	return p, nil
}

// hasType reports whether p has sample type t.
func hasType(p *profile.Profile, t *profile.ValueType) bool {
	for _, st := range p.SampleType {
		if st.Type == t.Type && st.Unit == t.Unit {
			return true
		}
	}
	return false
}
