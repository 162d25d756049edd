package record

import (
	"slices"
	"testing"

	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/event"
	"github.com/hwprof/hwprof/tuning"
)

func TestPrepareAdaptivePlanned(t *testing.T) {
	mk := func(typ perf.EventType, config, period uint64, freq bool) perf.Event {
		e := perf.Event{Attr: perf.Attr{Type: typ, Config: config, SamplePeriod: period}}
		if freq {
			e.Attr.Flags |= perf.FlagFreq
		}
		return e
	}
	events := func() []perf.Event {
		return []perf.Event{
			mk(perf.TypeSoftware, perf.SWCPUClock, event.DefaultFreq, true), // no period asked for
			mk(perf.TypeRaw, 0x20c4, 100003, false),                         // a source's prime period
			mk(perf.TypeSoftware, perf.SWCPUClock, 999, true),               // the user's -F 999
			mk(8, 0, 1, false), // a uprobe: every hit
		}
	}
	p := tuning.DefaultPolicy()
	ev := events()
	tuned, err := prepareAdaptive(ev, p, false)
	if err != nil {
		t.Fatal(err)
	}
	if want := []bool{true, false, false, false}; !slices.Equal(tuned, want) {
		t.Errorf("prepareAdaptive tuned %v, want %v", tuned, want)
	}
	ev = events()
	tuned, err = prepareAdaptive(ev, p, true)
	if err != nil {
		t.Fatal(err)
	}
	if want := []bool{true, true, false, false}; !slices.Equal(tuned, want) {
		t.Errorf("prepareAdaptive planned tuned %v, want %v", tuned, want)
	}
	if a := ev[1].Attr; a.Freq() || a.SamplePeriod != 100003 || a.SampleType&perf.SamplePeriod == 0 {
		t.Errorf("planned event: freq %v period %d sample_type %#x; want a fixed 100003 with PERIOD", a.Freq(), a.SamplePeriod, a.SampleType)
	}
	if a := ev[0].Attr; a.Freq() || a.SampleType&(perf.SamplePeriod|perf.SampleStreamID) != perf.SamplePeriod|perf.SampleStreamID {
		t.Errorf("clock event: freq %v sample_type %#x; want a fixed period with PERIOD and STREAM_ID", a.Freq(), a.SampleType)
	}
	if ev[3].Attr.SamplePeriod != 1 || ev[2].Attr.SamplePeriod != 999 {
		t.Errorf("untuned events changed: %+v %+v", ev[2].Attr, ev[3].Attr)
	}
}

// TestNoteWindow checks the live LBR overlap the controller gets: the
// same window twice overlaps fully, a disjoint one not at all, and each
// thread is compared with its own previous window.
func TestNoteWindow(t *testing.T) {
	w := func(base uint64) []perf.BranchEntry {
		var e []perf.BranchEntry
		for i := range uint64(8) {
			e = append(e, perf.BranchEntry{From: base + 16*i, To: base + 16*i + 8})
		}
		return e
	}
	var tu tuner
	tu.noteWindow(1, w(0x1000)) // first window of thread 1: nothing to compare
	tu.noteWindow(2, w(0x9000)) // thread 2's own first window
	tu.noteWindow(1, w(0x1000)) // the same again: overlap 1
	tu.noteWindow(1, w(0x5000)) // disjoint: overlap 0
	tu.noteWindow(2, w(0x9000)) // thread 2 repeats its own: overlap 1
	if tu.lbrPairs != 3 || tu.lbrOverlap != 2 {
		t.Errorf("pairs %d overlap sum %v, want 3 and 2", tu.lbrPairs, tu.lbrOverlap)
	}
	if got := meanOverlap(tu.lbrOverlap, tu.lbrPairs); got < 0.66 || got > 0.67 {
		t.Errorf("mean overlap %v, want 2/3", got)
	}
}

// TestPruneMarks: a ring's period marks keep the last one at or before the
// read position (the records from there on need it) and every later one.
func TestPruneMarks(t *testing.T) {
	m := func(pos ...uint64) []periodMark {
		var out []periodMark
		for i, p := range pos {
			out = append(out, periodMark{Pos: p, Period: uint64(1000 * (i + 1))})
		}
		return out
	}
	for _, c := range []struct {
		marks []periodMark
		tail  uint64
		want  []periodMark
	}{
		{nil, 100, nil},
		{m(50), 100, m(50)},
		{m(50, 80, 120), 100, []periodMark{{80, 2000}, {120, 3000}}},
		{m(50, 80, 120), 80, []periodMark{{80, 2000}, {120, 3000}}},
		{m(50, 80, 120), 10, m(50, 80, 120)},
		{m(50, 80, 120), 500, []periodMark{{120, 3000}}},
	} {
		in := slices.Clone(c.marks)
		if got := pruneMarks(in, c.tail); !slices.Equal(got, c.want) {
			t.Errorf("pruneMarks(%v, %d) = %v, want %v", c.marks, c.tail, got, c.want)
		}
	}
	// Pruned marks still give each record the period in force where it sits.
	marks := m(50, 80, 120)
	pruned := pruneMarks(slices.Clone(marks), 100)
	inForce := func(ms []periodMark, pos uint64) uint64 {
		var p uint64
		for _, mk := range ms {
			if mk.Pos <= pos {
				p = mk.Period
			}
		}
		return p
	}
	for pos := uint64(100); pos < 200; pos++ {
		if a, b := inForce(marks, pos), inForce(pruned, pos); a != b {
			t.Fatalf("record at %d: period %d after pruning, %d before", pos, b, a)
		}
	}
}
