package report

import (
	"errors"
	"fmt"

	"github.com/hwprof/hwprof/ccmap"
	"github.com/hwprof/hwprof/profile"
)

// Weighted returns p measured by m: p itself for profile.Sampled; for
// OffCPUTime, a profile whose Map is p's time off the CPU; for WallTime,
// one whose Map is the sum of p's samples and its time off the CPU, which
// needs samples of a clock event (weights in nanoseconds). Neither of the
// two counts calls. An error says why p cannot be measured so.
func Weighted(p *profile.Profile, m profile.Measure) (*profile.Profile, error) {
	if m == profile.Sampled || p.Measure == m {
		return p, nil
	}
	if p.OffCPU == nil || !p.Recording.OffCPU.Recorded {
		return nil, errors.New("the recording has no time off the CPU: record it with hwprof record --off-cpu")
	}
	q := *p
	q.Measure, q.HasCalls, q.Leaves = m, false, nil
	switch m {
	case profile.OffCPUTime:
		q.Map = p.OffCPU
	case profile.WallTime:
		if !p.Recording.OffCPU.OnCPUTime {
			return nil, fmt.Errorf("wall time adds the time on the CPU to the time off it, and the recording's samples do not measure time: " +
				"record with the timer source or -e cpu-clock")
		}
		q.Map = ccmap.Merge(p.Map, p.OffCPU)
	default:
		return nil, fmt.Errorf("report: unknown measure %d", m)
	}
	return &q, nil
}
