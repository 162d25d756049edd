package tuning

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// The simulation behind ActivationKey: a program is run on a virtual clock
// as a tree of activations, a sampler takes its top frame every period
// (with jitter), and three rules judge whether a sample repeats the one
// before on the same thread:
//
//   - truth: the same activation record on top (the paper's marked frame);
//   - function: the same function on top (the rule hwprof used before);
//   - key: ActivationKey of what a native sample holds: the call path's
//     return addresses, the stack depth, the word at the top of the stack
//     and the callee-saved registers.

type simFunc struct {
	name string
	// a leaf runs for dur (exponentially distributed around it when exp);
	// a caller runs loops iterations of: self work for self, then its calls
	dur       time.Duration
	exp       bool
	loops     int
	self      time.Duration
	calls     []*simFunc
	framed    bool // has its frame: the top word is a local it updates
	savesRegs bool // writes callee-saved registers as it runs (its own loop state)
}

type simState struct {
	act, fn, depth uint64
	path           []uint64 // call sites, outermost first
	saved          uint64   // the callee-saved registers' contents (as one value)
	top            uint64   // the word at the top of the stack
}

type simSampler struct {
	rng      *rand.Rand
	period   time.Duration
	next     time.Duration
	end      time.Duration
	now      time.Duration
	acts     uint64
	loopSeq  uint64
	prev     *simState
	samples  int
	repeats  [3]int // truth, function, key
	prevKeys [3]uint64
}

func (s *simSampler) run(st simState, d time.Duration) {
	for s.next < s.now+d && s.next < s.end {
		f := &Frame{SP: 0x7ff000 - 64*st.depth, Saved: [6]uint64{st.saved}, TopWord: st.top, Returns: st.path}
		keys := [3]uint64{st.act, st.fn, ActivationKey(f)}
		if s.samples > 0 {
			for i := range keys {
				if keys[i] == s.prevKeys[i] {
					s.repeats[i]++
				}
			}
		}
		s.prevKeys = keys
		s.samples++
		jitter := time.Duration(s.rng.Int64N(int64(s.period)/10+1)) - s.period/20
		s.next += s.period + jitter
	}
	s.now += d
}

// exec runs fn called from site in the caller's state.
func (s *simSampler) exec(fn *simFunc, fnID, site uint64, caller simState, ids map[*simFunc]uint64) {
	if s.now >= s.end {
		return
	}
	s.acts++
	st := simState{act: s.acts, fn: fnID, depth: caller.depth + 1, path: append(append([]uint64{}, caller.path...), site), saved: caller.saved}
	if len(fn.calls) == 0 && fn.loops == 0 {
		st.top = site // a frameless leaf: its return address on top
		if fn.framed {
			st.top = s.acts
		}
		d := fn.dur
		if fn.exp {
			d = time.Duration(s.rng.ExpFloat64() * float64(fn.dur))
		}
		if fn.savesRegs { // its own loop state in rbx: changes as it runs
			for rest := d; rest > 0; rest -= time.Microsecond {
				s.loopSeq++
				st.saved = s.loopSeq
				s.run(st, min(rest, time.Microsecond))
			}
			return
		}
		s.run(st, d)
		return
	}
	for i := 0; (fn.loops == 0 || i < fn.loops) && s.now < s.end; i++ {
		if fn.savesRegs {
			s.loopSeq++
			st.saved = s.loopSeq
		}
		if fn.framed {
			st.top = s.loopSeq<<8 | uint64(i)
		}
		s.run(st, fn.self)
		for ci, c := range fn.calls {
			s.exec(c, ids[c], fnID<<16|uint64(ci), st, ids)
		}
	}
}

// simulateActivations runs main (a loop forever, its counter in a callee-saved
// register) for dur at period and returns the repeat shares by rule.
func simulateActivations(main *simFunc, period, dur time.Duration, seed uint64) [3]float64 {
	ids := map[*simFunc]uint64{}
	var walk func(f *simFunc)
	walk = func(f *simFunc) {
		if _, ok := ids[f]; ok {
			return
		}
		ids[f] = uint64(len(ids) + 1)
		for _, c := range f.calls {
			walk(c)
		}
	}
	walk(main)
	s := &simSampler{rng: rand.New(rand.NewPCG(seed, 7)), period: period, next: period / 2, end: dur}
	s.exec(main, ids[main], 0, simState{}, ids)
	var shares [3]float64
	for i := range shares {
		shares[i] = float64(s.repeats[i]) / float64(max(s.samples-1, 1))
	}
	return shares
}

func simPrograms() []struct {
	name string
	main *simFunc
	// the key may undercount (one activation read as several) but must
	// not overcount: the rate it leads to is never coarser than the
	// truth's
	undercounts bool
} {
	us := time.Microsecond
	leaf := func(name string, d time.Duration) *simFunc { return &simFunc{name: name, dur: d, exp: true} }
	a, b, c := leaf("a", 2*us), leaf("b", 1*us), leaf("c", 5*us)
	mid1 := &simFunc{name: "mid1", loops: 1, self: 100 * time.Nanosecond, calls: []*simFunc{a, b}, framed: true}
	mid2 := &simFunc{name: "mid2", loops: 1, self: 100 * time.Nanosecond, calls: []*simFunc{b, c}, framed: true}
	rec := &simFunc{name: "rec0", loops: 1, self: 50 * time.Nanosecond, calls: []*simFunc{c}, framed: true}
	for i := 1; i <= 4; i++ {
		rec = &simFunc{name: fmt.Sprintf("rec%d", i), loops: 1, self: 50 * time.Nanosecond, calls: []*simFunc{rec, a}, framed: true}
	}
	long1, long2 := leaf("long1", 3*time.Millisecond), leaf("long2", time.Millisecond)
	mixed := []*simFunc{leaf("short", 20*us), leaf("medium", 300*us), leaf("long", 5*time.Millisecond)}
	work := &simFunc{name: "work", loops: 2000, self: us, calls: []*simFunc{a}, framed: true, savesRegs: true}
	regLeaf := &simFunc{name: "regleaf", dur: 2 * time.Millisecond, savesRegs: true}
	loop := func(calls ...*simFunc) *simFunc {
		return &simFunc{name: "main", self: 50 * time.Nanosecond, calls: calls, framed: true, savesRegs: true}
	}
	return []struct {
		name        string
		main        *simFunc
		undercounts bool
	}{
		{"one hot leaf in a loop", loop(a), false},
		{"call tree: two mids, a recursion", loop(mid1, mid2, rec), false},
		{"long leaves (3ms, 1ms)", loop(long1, long2), false},
		{"mixed durations 20us-5ms", loop(mixed...), false},
		{"a caller's own loop (2ms) calling a leaf", loop(work), true},
		{"a leaf writing callee-saved registers (2ms)", loop(regLeaf, b), true},
	}
}

// TestActivationKeyTracksTruth: over programs of activations from 1µs to
// 5ms and periods from 10µs to 8ms (the Time bounds), the key's repeat
// share stays within 5 points of the true activation repetition wherever
// the running code leaves the callee-saved registers and its top word
// alone, and below it (never above) where it does not; the same-function
// rule reads far above the truth on every program with a hot function.
func TestActivationKeyTracksTruth(t *testing.T) {
	periods := []time.Duration{10 * time.Microsecond, 100 * time.Microsecond, 250 * time.Microsecond, time.Millisecond, 8 * time.Millisecond}
	var table strings.Builder
	fmt.Fprintf(&table, "%-44s %8s %7s %7s %7s\n", "program", "period", "truth", "func", "key")
	worstFunc := 0.0
	for _, p := range simPrograms() {
		for _, period := range periods {
			dur := max(2*time.Second, 2000*period) // at least 2000 samples
			sh := simulateActivations(p.main, period, dur, uint64(period))
			truth, fn, key := sh[0], sh[1], sh[2]
			fmt.Fprintf(&table, "%-44s %8v %6.1f%% %6.1f%% %6.1f%%\n", p.name, period, 100*truth, 100*fn, 100*key)
			worstFunc = max(worstFunc, fn-truth)
			switch {
			case key > truth+0.05:
				t.Errorf("%s at %v: key %.1f%% > truth %.1f%% + 5: it would sample too coarsely", p.name, period, 100*key, 100*truth)
			case !p.undercounts && math.Abs(key-truth) > 0.05:
				t.Errorf("%s at %v: key %.1f%%, truth %.1f%%: more than 5 points apart", p.name, period, 100*key, 100*truth)
			}
		}
	}
	t.Logf("repeat shares by rule:\n%s", table.String())
	if worstFunc < 0.5 {
		t.Errorf("the same-function rule is never more than %.0f points above the truth: the simulation no longer shows why it was replaced", 100*worstFunc)
	}
}
