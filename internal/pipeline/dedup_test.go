package pipeline

import (
	"fmt"
	"math"
	"testing"

	"github.com/hwprof/hwprof/ccmap"
)

// quantities returns the weights the dedup must keep unbiased, by name:
// the sampled total, every function's and edge's Self and Total, every
// edge's Calls, and every whole stack's (context's) Self.
func quantities(m *ccmap.Map) map[string]float64 {
	q := map[string]float64{"samples": float64(m.Totals().Samples)}
	for _, f := range m.Functions(ccmap.Self) {
		q[fmt.Sprintf("func %d self", f.Func)] = float64(f.Self)
		q[fmt.Sprintf("func %d total", f.Func)] = float64(f.Total)
	}
	for _, e := range m.Edges(ccmap.Self) {
		k := fmt.Sprintf("edge %v→%d", e.Site, e.Callee)
		q[k+" self"] = float64(e.Self)
		q[k+" total"] = float64(e.Total)
		q[k+" calls"] = float64(e.Calls)
	}
	for _, c := range m.HotContexts(ccmap.Self, 0) {
		if c.Self > 0 {
			q[fmt.Sprintf("context %v self", m.Path(c.ID))] = float64(c.Self)
		}
	}
	return q
}

// bias folds evs with dedup ratio rr for seeds 1..n, and returns, for
// every quantity of the direct fold, how many standard errors the mean
// over seeds is from the truth (0 where the estimate never varies and is
// exact; +Inf where it never varies and is wrong), and the mean share of
// stacks skipped.
func bias(t *testing.T, evs []event, rr float64, n int, comp func(uint64, float64, float64) uint64) (map[string]float64, float64) {
	truth := quantities(direct(evs))
	sum := make(map[string]float64)
	sum2 := make(map[string]float64)
	var skipped float64
	for seed := range uint64(n) {
		p := newProducer(FoldOptions{PacketSize: 1 << 20, DedupRatio: rr, Seed: seed + 1})
		p.dedup.compensate = comp
		m := ccmap.New()
		p.send = func(pk *packet) { pk.fold(m, nil) }
		feed(p, evs)
		p.flush()
		st := p.Stats()
		skipped += float64(st.Skipped) / float64(st.Samples)
		q := quantities(m)
		for k := range truth {
			sum[k] += q[k]
			sum2[k] += q[k] * q[k]
		}
		for k := range q {
			if _, ok := truth[k]; !ok {
				t.Fatalf("seed %d: %s is not in the direct fold", seed+1, k)
			}
		}
	}
	z := make(map[string]float64)
	for k, want := range truth {
		mean := sum[k] / float64(n)
		v := (sum2[k]/float64(n) - mean*mean) * float64(n) / float64(n-1)
		se := math.Sqrt(max(v, 0) / float64(n))
		switch d := math.Abs(mean - want); {
		case d <= 1e-9*math.Max(want, 1):
			z[k] = 0
		case se == 0 || d/se > 1e6: // constant or numerically constant
			z[k] = math.Inf(1)
		default:
			z[k] = d / se
		}
	}
	return z, skipped / float64(n)
}

// worst returns the largest z and its quantity, and how many exceed lim.
func worst(z map[string]float64, lim float64) (string, float64, int) {
	var wk string
	w, over := -1.0, 0
	for k, v := range z {
		if v > w || (v == w && k < wk) {
			wk, w = k, v
		}
		if v > lim {
			over++
		}
	}
	return wk, w, over
}

// TestDedupUnbiased checks statistically that redundancy skipping keeps
// every weight unbiased: over many seeds, the mean of the sampled total
// and of every function's, edge's and stack's weight is within 5 standard
// errors of the direct fold's. The same test run with a biased rule (a
// re-enabled stack keeps its own weight) fails.
func TestDedupUnbiased(t *testing.T) {
	n := 200
	if testing.Short() {
		n = 60
	}
	evs := events(6, 3000)
	const rr, lim = 0.3, 5.0
	z, skipped := bias(t, evs, rr, n, ccmap.Compensate)
	k, w, over := worst(z, lim)
	t.Logf("%d seeds, RR %v: %.0f%% of stacks skipped; %d quantities, largest deviation %.2f standard errors (%s)", n, rr, 100*skipped, len(z), w, k)
	if over > 0 {
		t.Errorf("%d quantities biased by more than %v standard errors; worst %s: %.2f", over, lim, k, w)
	}
	if z["samples"] > 3 {
		t.Errorf("sampled total is %.2f standard errors off", z["samples"])
	}
	if skipped < 0.3 {
		t.Errorf("only %.0f%% of stacks skipped: the repeats are not being skipped", 100*skipped)
	}

	biased := func(w uint64, _, _ float64) uint64 { return w }
	zb, _ := bias(t, evs, rr, n, biased)
	kb, wb, overb := worst(zb, lim)
	t.Logf("without compensation: %d quantities beyond %v standard errors; sampled total %.1f off; worst %s: %.1f", overb, lim, zb["samples"], kb, wb)
	if zb["samples"] <= lim || overb < len(zb)/10 {
		t.Errorf("the bias test does not catch a dedup without compensation (%d of %d quantities off, total %.1f)", overb, len(zb), zb["samples"])
	}
}

// TestDedupDeterministic: the same seed gives the same map whatever the
// workers; first occurrences are always folded.
func TestDedupDeterministic(t *testing.T) {
	evs := events(7, 6000)
	var maps []*ccmap.Map
	for _, w := range []int{1, 3} {
		p := NewFolder(FoldOptions{Workers: w, PacketSize: 33, DedupRatio: 0.1, Seed: 42})
		feed(p, evs)
		maps = append(maps, p.Close())
		if p.Stats().Skipped == 0 {
			t.Fatal("nothing skipped")
		}
	}
	if !ccmap.Equal(maps[0], maps[1]) {
		t.Fatal("dedup result depends on the number of workers")
	}
	p := NewFolder(FoldOptions{Workers: 2, DedupRatio: 0.1, Seed: 43})
	feed(p, evs)
	other := p.Close()
	if ccmap.Equal(other, maps[0]) {
		t.Fatal("another seed gave the same draws")
	}
	// Every distinct stack is folded at least once: the contexts are the
	// same as without skipping.
	full := direct(evs)
	for _, m := range []*ccmap.Map{maps[0], other} {
		if m.Size() != full.Size() {
			t.Errorf("dedup map has %+v nodes, the direct fold %+v", m.Size(), full.Size())
		}
	}
}

func TestSignature(t *testing.T) {
	a := []ccmap.Frame{{Func: 1}, {Func: 2, Site: 0x10}}
	b := []ccmap.Frame{{Func: 1}, {Func: 2, Site: 0x20}}
	c := []ccmap.Frame{{Func: 2, Site: 0x10}, {Func: 1}}
	seen := map[uint64]bool{}
	for _, s := range [][]ccmap.Frame{a, b, c, a[:1], a[1:]} {
		h := signature(s)
		if seen[h] {
			t.Fatalf("signature collision on %v", s)
		}
		seen[h] = true
	}
	if signature(a) != signature(append([]ccmap.Frame(nil), a...)) {
		t.Fatal("signature depends on more than the frames")
	}
}
