package record

import (
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

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

// StopNote says what ended a recording that ended as asked (Stop.OnPurpose)
// and what became of its targets: "recording stopped after --duration
// 2s; the program was sent SIGTERM", "interrupted (SIGINT): recording
// stopped; the processes go on". It is "" for any other end.
func StopNote(o Options, st Stats) string {
	var why string
	switch st.Stop {
	case StopDuration:
		why = "recording stopped after --duration " + o.Duration.String()
	case StopLimit:
		why = "recording stopped: " + st.Limit
	case StopSignal:
		why = "recording stopped by a signal"
		if sig, ok := st.Signal.(syscall.Signal); ok {
			switch sig {
			case syscall.SIGINT:
				why = "interrupted (SIGINT): recording stopped"
			case syscall.SIGTERM:
				why = "terminated (SIGTERM): recording stopped"
			default:
				why = unix.SignalName(sig) + ": recording stopped"
			}
		}
	default:
		return ""
	}
	switch {
	case len(o.Argv) == 0:
		return why + "; the processes go on"
	case st.ExitCode == 128+int(syscall.SIGKILL):
		return why + "; the program was sent SIGTERM, then killed (a second interrupt)"
	}
	return why + "; the program was sent SIGTERM"
}
