package source

import (
	"errors"
	"fmt"
	"slices"

	"github.com/hwprof/hwprof/perf/event"
)

// Request is what a `hwprof record` command line asks about the sample
// source: the source named (if any) and which of perf's event options
// were given beside it. Each flag field holds the flag as the user wrote
// it ("-e", "--call-graph"), "" when absent, so errors can name it.
type Request struct {
	Source     string // --source: lbr, calls, timer, exact; "" = the default source, or -e
	Events     string // -e/--event: perf's events instead of a source
	Period     string // -c/-F: replaces the source's period
	Graph      string // -g/--call-graph: replaces the source's call graph
	Branch     string // -j/-b: replaces the lbr source's branch filter
	SystemWide bool   // -a: every process (exact cannot)
	// Lenient: a named source that does not work here is a note, not an
	// error (--print-attr prints what would be opened; hwprof check tries
	// it all the same).
	Lenient bool
}

// Decision is what to record.
type Decision struct {
	// PerfEvents: record the events of -e as perf would; nothing else in
	// the Decision is set.
	PerfEvents bool
	Source     Source
	// Setup is the planned recording of lbr, calls and timer (zero for
	// exact, which internal/uprobe sets up).
	Setup Setup
	// Note says which source was chosen and the event planned: for the
	// default, in one short line that points to hwprof check ("source
	// timer, event cpu-clock (the default here; ...)"); for a named source,
	// why it works and why its event ("source lbr: LBR with 32 entries
	// ...; event ..."); "" with PerfEvents.
	Note string
}

// Decide applies the source policy to a request, on the machine gather
// describes (called only when a source is to be chosen, not for -e).
//
// The policy: -e and --source exclude each other; -e alone records perf's
// events. Without either, the default source is lbr where it works, else
// calls, else timer (Choose), and the note says which (hwprof check
// says why). A named source that
// does not work here is an error naming what is missing and the sources
// that work (a note when Lenient). With a source, -c/-F, -g and -j/-b
// replace its period, call graph and branch filter (Config applies them);
// -j/-b with calls or timer is an error (they would add a branch stack
// those sources do not have), and exact takes none of them, nor -a.
func Decide(req Request, gather func() (Facts, error)) (Decision, error) {
	if req.Source == "" && req.Events != "" {
		return Decision{PerfEvents: true}, nil
	}
	if req.Source != "" && req.Events != "" {
		return Decision{}, fmt.Errorf("--source %s and %s both choose the events: give one of them", req.Source, req.Events)
	}
	facts, err := gather()
	if err != nil {
		return Decision{}, err
	}
	verdicts := Assess(facts)
	var d Decision
	chosen := req.Source == ""
	if chosen {
		d.Source, _ = Choose(verdicts)
	} else {
		if d.Source, err = Parse(req.Source); err != nil {
			return Decision{}, err
		}
		v := verdicts[slices.IndexFunc(verdicts, func(v Verdict) bool { return v.Source == d.Source })]
		if !v.OK {
			msg := fmt.Sprintf("source %s does not work here: %s; %s (hwprof check lists what this machine offers)", d.Source, v.Why, v.Instead)
			if !req.Lenient {
				return Decision{}, errors.New(msg)
			}
			d.Note = "note: " + msg
		} else {
			d.Note = fmt.Sprintf("source %s: %s", d.Source, v.Why)
		}
	}
	if err := req.checkOverrides(d.Source); err != nil {
		return Decision{}, err
	}
	if d.Source == Exact {
		return d, nil
	}
	if d.Setup, err = Plan(d.Source, facts); err != nil {
		return Decision{}, err
	}
	switch {
	case chosen:
		// One short line before every recording; hwprof check gives
		// the reason in full (Choose).
		d.Note = fmt.Sprintf("source %s, event %s (the default here; hwprof check says why)", d.Source, d.Setup.Name)
	case d.Setup.Event != "":
		d.Note += "; event " + d.Setup.Event
	}
	return d, nil
}

// checkOverrides refuses the options that do not apply to source s.
func (req *Request) checkOverrides(s Source) error {
	if s == Exact {
		if req.SystemWide {
			return errors.New("--source exact probes the functions of a program: give a command or -p PID, not -a")
		}
		for _, fl := range []string{req.Period, req.Graph, req.Branch} {
			if fl != "" {
				return fmt.Errorf("--source exact counts every call with uprobes: %s does not apply to it", fl)
			}
		}
		return nil
	}
	if req.Branch != "" && s != LBR {
		return fmt.Errorf("%s adds a branch stack, which the %s source does not have: use --source lbr, or -e EVENT with %s", req.Branch, s, req.Branch)
	}
	return nil
}

// Config returns the perf record options of the decided source with the
// request's overrides taken from given (the command line's perf options):
// its period (-c/-F), call graph and branch filter where the request says
// they were given, and always its inherit choice and kernel limits.
func (d *Decision) Config(req Request, given event.RecordConfig) event.RecordConfig {
	cfg := d.Setup.Config
	if req.Period != "" {
		cfg.Period, cfg.Freq = given.Period, given.Freq
	}
	if req.Graph != "" {
		cfg.CallGraph = given.CallGraph
	}
	if req.Branch != "" {
		cfg.BranchFilter = given.BranchFilter
	}
	cfg.NoInherit, cfg.Limits = given.NoInherit, given.Limits
	return cfg
}

// Planned reports whether the decided events run at a hardware source's
// planned (prime) period rather than the user's: lbr and calls.
func (d *Decision) Planned() bool {
	return !d.PerfEvents && (d.Source == LBR || d.Source == Calls)
}
