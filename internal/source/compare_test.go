package source

import (
	"reflect"
	"strings"
	"testing"
)

// Exact is recorded alone (its traps would slow the program under the
// others); every other source shares one run.
func TestRuns(t *testing.T) {
	S := func(ss ...Source) []Source { return ss }
	for _, c := range []struct {
		in   []Source
		want [][]Source
	}{
		{S(Exact, Timer), [][]Source{S(Exact), S(Timer)}},
		{S(Exact, LBR, Timer), [][]Source{S(Exact), S(LBR, Timer)}},
		{S(LBR, Calls, Timer), [][]Source{S(LBR, Calls, Timer)}},
	} {
		if got := Runs(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Runs(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

// Compared puts the reference first, adds timer beside the default
// source, drops repeats, and refuses a source that does not work here.
func TestCompared(t *testing.T) {
	S := func(ss ...Source) []Source { return ss }
	works := func(ok map[Source]bool) []Verdict {
		var vs []Verdict
		for _, s := range All {
			vs = append(vs, Verdict{Source: s, OK: ok[s], Why: "why " + s.String(), Instead: "use timer"})
		}
		return vs
	}
	lbrHere := works(map[Source]bool{LBR: true, Calls: true, Timer: true, Exact: true})
	timerHere := works(map[Source]bool{Timer: true, Exact: true})
	for _, c := range []struct {
		name     string
		verdicts []Verdict
		ref      Source
		others   []Source
		want     []Source
		err      string
	}{
		{"default with lbr", lbrHere, Exact, nil, S(Exact, LBR, Timer), ""},
		{"default is timer", timerHere, Exact, nil, S(Exact, Timer), ""},
		{"given, repeats dropped", lbrHere, Exact, S(Calls, Exact, Calls), S(Exact, Calls), ""},
		{"only the reference", lbrHere, Exact, S(Exact), nil, "nothing to compare"},
		{"source not here", timerHere, Exact, S(LBR), nil, "source lbr does not work here: why lbr; use timer"},
		{"reference not here", timerHere, Calls, S(Timer), nil, "source calls does not work here"},
		{"no verdict", nil, Exact, S(Timer), nil, "source exact: no verdict"},
	} {
		got, err := Compared(c.verdicts, c.ref, c.others)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: Compared = %v, %v; want an error with %q", c.name, got, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: Compared = %v, %v; want %v", c.name, got, err, c.want)
		}
	}
}
