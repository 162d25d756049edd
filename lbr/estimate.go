package lbr

// Mode chooses which entries of a window an Estimator counts.
type Mode uint8

const (
	// EveryEntry counts every entry of every window with weight P/D
	// (Horvitz–Thompson: each branch is in D/P windows on average).
	EveryEntry Mode = iota
	// NewestPeriod counts, when P <= D, only the newest P entries of each
	// window with weight 1 (they are exactly the branches since the
	// previous sample, so overlapping windows are not counted twice), and
	// when P > D every entry with weight P/D.
	NewestPeriod
)

func (m Mode) String() string {
	switch m {
	case EveryEntry:
		return "every-entry"
	case NewestPeriod:
		return "newest-period"
	}
	return "mode(?)"
}

// Estimator turns the appearances of call edges in branch-stack windows
// into call counts; docs/lbr.md derives it and states its assumptions. Depth is
// the hardware window depth D in entries (the LBR size: the attr's or PMU's
// branch-stack depth, or the largest window observed), not the number of
// entries a particular sample happens to hold.
type Estimator struct {
	Depth int
	Mode  Mode
}

// Weight is the number of calls one appearance stands for: an entry at
// index (0 the newest) of the window of a sample taken with period (in the
// units of the event, which must count the branches the window records).
// A zero Depth or period gives weight 1 (appearances are then only
// counted).
func (e Estimator) Weight(period uint64, index int) float64 {
	if e.Depth <= 0 || period == 0 {
		return 1
	}
	d := uint64(e.Depth)
	if e.Mode == NewestPeriod && period <= d {
		if uint64(index) < period {
			return 1
		}
		return 0
	}
	if index >= e.Depth {
		return 0 // beyond the stated depth: not part of the design
	}
	return float64(period) / float64(d)
}
