package profile

import "fmt"

// Source is a sample source: how a recording's samples measure calls.
// It names the sources of hwprof record (--source) and what a recording
// was made with (Recording.Source).
type Source uint8

const (
	// Timer: sampled stacks weighted by period (cpu-clock, task-clock,
	// and any other sampling event without call semantics); no call
	// counts.
	Timer Source = iota
	// LBR: a hardware calls event with a branch stack of recent branches:
	// call edges estimated from it, plus the sampled stack.
	LBR
	// Calls: a hardware calls-retired event without a branch stack; each
	// sample stands for its period's calls.
	Calls
	// Exact: uprobes at function entries: every sample is one call.
	Exact
	// Mixed: a recording whose events have more than one source.
	Mixed
	numSources
)

var sourceNames = [numSources]string{"timer", "lbr", "calls", "exact", "mixed"}

// String is the source's name as hwprof's flags and reports spell it:
// "timer", "lbr", "calls", "exact" or "mixed".
func (s Source) String() string {
	if s < numSources {
		return sourceNames[s]
	}
	return fmt.Sprintf("source(%d)", uint8(s))
}

// CountsCalls says whether the source counts calls (lbr, calls, exact):
// then a profile's edge weights are calls.
func (s Source) CountsCalls() bool { return s == LBR || s == Calls || s == Exact }

// ParseSource returns the source named s (one of String's names).
func ParseSource(s string) (Source, error) {
	for i, n := range sourceNames {
		if n == s {
			return Source(i), nil
		}
	}
	return 0, fmt.Errorf("parse source: unknown source %q (want timer, lbr, calls, exact or mixed)", s)
}

// MarshalText writes the source's name.
func (s Source) MarshalText() ([]byte, error) {
	if s >= numSources {
		return nil, fmt.Errorf("marshal source: %v is not a source", s)
	}
	return []byte(s.String()), nil
}

// UnmarshalText reads a source's name.
func (s *Source) UnmarshalText(b []byte) error {
	v, err := ParseSource(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}
