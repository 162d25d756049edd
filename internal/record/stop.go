package record

import "fmt"

// Stop is why a recording ended.
type Stop uint8

const (
	// StopTargets: the program, every process attached to or the timer
	// command ended.
	StopTargets Stop = iota
	// StopDuration: Options.Duration passed.
	StopDuration
	// StopSignal: an interrupt arrived (Options.Interrupt, Stats.Signal).
	StopSignal
	// StopWrite: the output could not be written (WriteError).
	StopWrite
	// StopLimit: Options.Watch asked to stop (Stats.Limit says why).
	StopLimit
	numStops
)

var stopNames = [numStops]string{"targets ended", "duration", "signal", "write failed", "limit"}

func (s Stop) String() string {
	if s < numStops {
		return stopNames[s]
	}
	return fmt.Sprintf("stop(%d)", uint8(s))
}

// OnPurpose reports whether the recording ended as the user asked (its
// duration, an interrupt, a limit) rather than with its targets or by a
// failure.
func (s Stop) OnPurpose() bool { return s == StopDuration || s == StopSignal || s == StopLimit }
