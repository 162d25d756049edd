package source

import (
	"fmt"
	"slices"
)

// Compared returns the sources `hwprof compare` records, the reference
// first: ref, then others (nil: the default source of Choose, and timer
// beside it), each once. It is an error when fewer than two remain, or
// when one of them does not work here by verdicts (Assess).
func Compared(verdicts []Verdict, ref Source, others []Source) ([]Source, error) {
	if others == nil {
		def, _ := Choose(verdicts)
		others = []Source{def}
		if def != Timer {
			others = append(others, Timer)
		}
	}
	all := []Source{ref}
	for _, s := range others {
		if !slices.Contains(all, s) {
			all = append(all, s)
		}
	}
	if len(all) < 2 {
		return nil, fmt.Errorf("nothing to compare: give --sources other than the reference %s", ref)
	}
	for _, s := range all {
		i := slices.IndexFunc(verdicts, func(v Verdict) bool { return v.Source == s })
		if i < 0 {
			return nil, fmt.Errorf("source %s: no verdict", s)
		}
		if v := verdicts[i]; !v.OK {
			return nil, fmt.Errorf("source %s does not work here: %s; %s", s, v.Why, v.Instead)
		}
	}
	return all, nil
}

// Runs says which sources are recorded in one run of the program: exact
// alone (every call traps, which would slow the program under the
// others), all the others together, so that they see the same execution
// and the machine's load cannot tell them apart.
func Runs(sources []Source) [][]Source {
	var runs [][]Source
	var shared []Source
	for _, s := range sources {
		if s == Exact {
			runs = append(runs, []Source{s})
		} else {
			shared = append(shared, s)
		}
	}
	if len(shared) > 0 {
		runs = append(runs, shared)
	}
	return runs
}
