package tuning

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// The simulation behind ActivationKey: a program is run on a virtual clock
// as a tree of activations, a sampler takes its top frame every period
// (with jitter), and four rules judge whether a sample repeats the one
// before on the same thread:
//
//   - truth: the same activation record on top (the paper's marked frame);
//   - function: the same function on top (the rule hwprof used before);
//   - callee-saved: ActivationKey without the caller-saved registers
//     (Frame.Kept 0): the call path's return addresses, the stack depth,
//     the word at the top of the stack and the callee-saved registers;
//   - key: ActivationKey of what a native sample holds, with the
//     caller-saved registers the rest of the activation cannot write.
//
// The caller-saved registers a function does not write hold, for its
// whole activation, what its caller left there: the simulation takes
// that as a value of the call site (the same arguments at every call,
// the worst case for the key) unless the caller keeps its loop's state
// there (ipaRA, gcc's interprocedural register allocation).

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
	ipaRA     bool // keeps its loop's state in caller-saved registers its callees do not write
	opaque    bool // its code cannot be read through (an indirect jump): Frame.Kept is 0
}

type simState struct {
	act, fn, depth uint64
	path           []uint64 // call sites, outermost first
	saved          uint64   // the callee-saved registers' contents (as one value)
	top            uint64   // the word at the top of the stack
	kept           uint64   // the caller-saved registers it does not write (as one value)
	ipa            uint64   // its loop's state in caller-saved registers (ipaRA)
	opaque         bool
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
	repeats  [4]int // truth, function, callee-saved, key
	prevKeys [4]uint64
	stack    []uint64 // the call sites of the running activations, outermost first
}

func (s *simSampler) run(st simState, d time.Duration) {
	for s.next < s.now+d && s.next < s.end {
		f := &Frame{SP: 0x7ff000 - 64*st.depth, Saved: [6]uint64{st.saved}, TopWord: st.top, Returns: st.path}
		calleeSaved := ActivationKey(f)
		if !st.opaque {
			f.Scratch[1], f.Kept = st.kept, 1<<1
		}
		keys := [4]uint64{st.act, st.fn, calleeSaved, ActivationKey(f)}
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
	// The call path is caller.path and site: kept in s.stack, which
	// calls made later at this depth overwrite only past caller.path.
	s.stack = append(s.stack[:caller.depth], site)
	st := simState{act: s.acts, fn: fnID, depth: caller.depth + 1, path: s.stack[:caller.depth+1], saved: caller.saved, kept: site, opaque: fn.opaque}
	if caller.ipa != 0 {
		st.kept = caller.ipa
	}
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
		if fn.ipaRA {
			s.loopSeq++
			st.ipa = s.loopSeq
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
func simulateActivations(main *simFunc, period, dur time.Duration, seed uint64) [4]float64 {
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
	var shares [4]float64
	for i := range shares {
		shares[i] = float64(s.repeats[i]) / float64(max(s.samples-1, 1))
	}
	return shares
}

// simProgram is a program of the simulation and what the key may do on
// it: undercount (one activation read as several), which leads to a
// finer rate than the truth's, or, where fallback, read as the
// callee-saved key does (the running code cannot be read through).
type simProgram struct {
	name        string
	main        *simFunc
	undercounts bool
	fallback    bool
}

func simPrograms() []simProgram {
	us, ns := time.Microsecond, time.Nanosecond
	leaf := func(name string, d time.Duration) *simFunc { return &simFunc{name: name, dur: d, exp: true} }
	a, b, c := leaf("a", 2*us), leaf("b", 1*us), leaf("c", 5*us)
	mid1 := &simFunc{name: "mid1", loops: 1, self: 100 * ns, calls: []*simFunc{a, b}, framed: true}
	mid2 := &simFunc{name: "mid2", loops: 1, self: 100 * ns, calls: []*simFunc{b, c}, framed: true}
	rec := &simFunc{name: "rec0", loops: 1, self: 50 * ns, calls: []*simFunc{c}, framed: true}
	for i := 1; i <= 4; i++ {
		rec = &simFunc{name: fmt.Sprintf("rec%d", i), loops: 1, self: 50 * ns, calls: []*simFunc{rec, a}, framed: true}
	}
	long1, long2 := leaf("long1", 3*time.Millisecond), leaf("long2", time.Millisecond)
	mixed := []*simFunc{leaf("short", 20*us), leaf("medium", 300*us), leaf("long", 5*time.Millisecond)}
	work := &simFunc{name: "work", loops: 2000, self: us, calls: []*simFunc{a}, framed: true, savesRegs: true}
	regLeaf := &simFunc{name: "regleaf", dur: 2 * time.Millisecond, savesRegs: true}
	loop := func(calls ...*simFunc) *simFunc {
		return &simFunc{name: "main", self: 50 * ns, calls: calls, framed: true, savesRegs: true}
	}
	// scripts/bench-adaptive.sh's phased, its call phase: calls() loops
	// over fc(i) + fa(s), fc(x) is fa(x) + fb(x), and gcc -O2 keeps the
	// loop's counter and sum (and fc its x) in caller-saved registers
	// that fa and fb do not write
	ipa := func(opaque bool) *simFunc {
		fa, fb := leaf("fa", us), leaf("fb", 1500*ns)
		fa.opaque = opaque
		fc := &simFunc{name: "fc", loops: 1, self: 500 * ns, calls: []*simFunc{fa, fb}, ipaRA: true}
		return &simFunc{name: "calls", loops: 500, self: 250 * ns, calls: []*simFunc{fc, fa}, ipaRA: true}
	}
	return []simProgram{
		{name: "one hot leaf in a loop", main: loop(a)},
		{name: "call tree: two mids, a recursion", main: loop(mid1, mid2, rec)},
		{name: "long leaves (3ms, 1ms)", main: loop(long1, long2)},
		{name: "mixed durations 20us-5ms", main: loop(mixed...)},
		{name: "a caller's own loop (2ms) calling a leaf", main: loop(work), undercounts: true},
		{name: "a leaf writing callee-saved registers (2ms)", main: loop(regLeaf, b), undercounts: true},
		{name: "loop state in caller-saved registers (ipa-ra)", main: loop(ipa(false))},
		{name: "ipa-ra, a leaf that cannot be read through", main: loop(ipa(true)), fallback: true},
	}
}

// TestActivationKeyTracksTruth: over programs of activations from 1µs
// to 5ms and periods from 10µs to 8ms (the Time bounds), the key's repeat
// share stays within 5 points of the true activation repetition wherever
// the running code leaves the callee-saved registers and its top word
// alone, and below it (never above) where it does not, gcc's
// interprocedural register allocation included; only where the running
// code cannot be read through (Kept 0) do its samples read as with the
// callee-saved key, which reads high under that allocation. The same-function rule reads far
// above the truth on every program with a hot function.
func TestActivationKeyTracksTruth(t *testing.T) {
	periods := []time.Duration{10 * time.Microsecond, 100 * time.Microsecond, 250 * time.Microsecond, time.Millisecond, 8 * time.Millisecond}
	var table strings.Builder
	fmt.Fprintf(&table, "%-46s %8s %7s %7s %7s %7s\n", "program", "period", "truth", "func", "callee", "key")
	worstFunc, worstCallee := 0.0, 0.0
	progs := simPrograms()
	// The simulations are independent (each has its own sampler and
	// seed; the programs are only read): they run on every CPU, and are
	// checked below in order.
	shares := make([][4]float64, len(progs)*len(periods))
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range next {
				p, period := progs[i/len(periods)], periods[i%len(periods)]
				dur := max(2*time.Second, 2000*period) // at least 2000 samples
				shares[i] = simulateActivations(p.main, period, dur, uint64(period))
			}
		})
	}
	for i := range shares {
		next <- i
	}
	close(next)
	wg.Wait()
	for pi, p := range progs {
		for qi, period := range periods {
			sh := shares[pi*len(periods)+qi]
			truth, fn, callee, key := sh[0], sh[1], sh[2], sh[3]
			fmt.Fprintf(&table, "%-46s %8v %6.1f%% %6.1f%% %6.1f%% %6.1f%%\n", p.name, period, 100*truth, 100*fn, 100*callee, 100*key)
			worstFunc = max(worstFunc, fn-truth)
			worstCallee = max(worstCallee, callee-truth)
			switch {
			case key > callee:
				t.Errorf("%s at %v: key %.1f%% > %.1f%% without the caller-saved registers: they can only tell more activations apart", p.name, period, 100*key, 100*callee)
			case !p.fallback && key > truth+0.05:
				t.Errorf("%s at %v: key %.1f%% > truth %.1f%% + 5: it would sample too coarsely", p.name, period, 100*key, 100*truth)
			case !p.fallback && !p.undercounts && math.Abs(key-truth) > 0.05:
				t.Errorf("%s at %v: key %.1f%%, truth %.1f%%: more than 5 points apart", p.name, period, 100*key, 100*truth)
			}
		}
	}
	t.Logf("repeat shares by rule:\n%s", table.String())
	if worstFunc < 0.5 {
		t.Errorf("the same-function rule is never more than %.0f points above the truth: the simulation no longer shows why it was replaced", 100*worstFunc)
	}
	if worstCallee < 0.1 {
		t.Errorf("the callee-saved key is never more than %.0f points above the truth: the simulation no longer shows why the caller-saved registers are in the key", 100*worstCallee)
	}
}
