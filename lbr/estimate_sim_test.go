package lbr_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/lbr"
)

// The simulation proves the estimator unbiased (doc.go derives it): many
// synthetic branch streams with known call counts per edge, sampled the way
// the hardware samples — an event counter that counts every branch the
// window records overflows after P of them (then reloads), and the sample's
// window is the last D branches at that moment, newest first — then the
// estimates are compared with the truth edge by edge.

const (
	simEdges   = 24 // call edges of the random distributions
	simMeasure = 12000
	simRuns    = 120
	nonCall    = -1
)

// simDist generates the branch stream of one run: call edge ids, nonCall
// for other branches.
type simDist struct {
	name string
	gen  func(rng *rand.Rand, period int) []int32
}

func weighted(rng *rand.Rand, w []float64) int32 {
	var sum float64
	for _, x := range w {
		sum += x
	}
	u := rng.Float64() * sum
	for i, x := range w {
		if u < x {
			return int32(i)
		}
		u -= x
	}
	return int32(len(w) - 1)
}

// withNonCalls draws a call with probability 3/4, else a non-call branch
// (the window of -j any holds those too, and they take window slots).
func withNonCalls(rng *rand.Rand, call func() int32) int32 {
	if rng.IntN(4) == 0 {
		return nonCall
	}
	return call()
}

var simDists = []simDist{
	{"uniform", func(rng *rand.Rand, _ int) []int32 {
		s := make([]int32, simMeasure)
		for i := range s {
			s[i] = withNonCalls(rng, func() int32 { return int32(rng.IntN(simEdges)) })
		}
		return s
	}},
	{"skewed (zipf 1.5)", func(rng *rand.Rand, _ int) []int32 {
		w := make([]float64, simEdges)
		for i := range w {
			w[i] = 1 / math.Pow(float64(i+1), 1.5)
		}
		s := make([]int32, simMeasure)
		for i := range s {
			s[i] = withNonCalls(rng, func() int32 { return weighted(rng, w) })
		}
		return s
	}},
	{"bursty phases", func(rng *rand.Rand, _ int) []int32 {
		// phases of 200-3000 branches, each calling mostly 3 edges of its own
		s := make([]int32, 0, simMeasure)
		for len(s) < simMeasure {
			n := 200 + rng.IntN(2800)
			hot := [3]int32{int32(rng.IntN(simEdges)), int32(rng.IntN(simEdges)), int32(rng.IntN(simEdges))}
			for range n {
				s = append(s, withNonCalls(rng, func() int32 {
					if rng.IntN(10) == 0 {
						return int32(rng.IntN(simEdges))
					}
					return hot[rng.IntN(3)]
				}))
			}
		}
		return s[:simMeasure]
	}},
	{"periodic, pattern length = P", func(_ *rand.Rand, period int) []int32 {
		// a loop whose branch pattern repeats exactly every P branches: the
		// worst case for a fixed period (every sample sees the same phase)
		s := make([]int32, simMeasure)
		for i := range s {
			switch j := i % period; {
			case j == 0:
				s[i] = 0
			case j%5 == 1:
				s[i] = 1
			case j%3 == 2:
				s[i] = 2
			default:
				s[i] = nonCall
			}
		}
		return s
	}},
}

// simPeriods are the ways the counter is reloaded: each run makes a new
// reload function (it may keep state), independent of the program.
type simPeriod struct {
	name string
	// start returns the reload function of one run.
	start func(rng *rand.Rand, p int) func() int
}

var simPeriods = []simPeriod{
	{"fixed", func(_ *rand.Rand, p int) func() int { return func() int { return p } }},
	{"jittered ±P/4", func(rng *rand.Rand, p int) func() int {
		return func() int { return p - p/4 + rng.IntN(2*(p/4)+1) }
	}},
	{"tuner: P, 3P", func(rng *rand.Rand, p int) func() int {
		// a controller stepping the period between P and 3P every 7
		// samples, as IOC_PERIOD would
		n := rng.IntN(14)
		return func() int {
			n++
			if n/7%2 == 0 {
				return p
			}
			return 3 * p
		}
	}},
}

// simulate samples one stream: warm-up branches before the measured part
// (so the counter's phase is random there), the measured part, then depth
// branches after it (the exit path), none of them calls. It returns the
// estimated calls per edge for each estimator.
func simulate(rng *rand.Rand, measured []int32, period, depth int, next func() int, ests []lbr.Estimator) [][]float64 {
	warm := 60*period + depth
	stream := make([]int32, 0, warm+len(measured)+depth)
	for range warm {
		stream = append(stream, nonCall)
	}
	stream = append(stream, measured...)
	for range depth {
		stream = append(stream, nonCall)
	}
	sums := make([][]float64, len(ests))
	for i := range sums {
		sums[i] = make([]float64, simEdges)
	}
	p := next()
	t := rng.IntN(p) // overflow position of the first sample
	for t < len(stream) {
		for j := 0; j < depth && t-j >= 0; j++ {
			if e := stream[t-j]; e != nonCall {
				for i, est := range ests {
					sums[i][e] += est.Weight(uint64(p), j)
				}
			}
		}
		p = next()
		t += p
	}
	return sums
}

// TestEstimatorUnbiased runs every distribution, period regime (P < D,
// P = D, P > D) and reload rule, many runs each, and checks per edge that
// the mean relative error is within 4.5 standard errors of zero. It logs
// the bias and spread: relative error per edge (estimate - truth) / truth,
// mean and standard deviation over runs, averaged over edges weighted by
// truth, and the largest |z| of any edge.
func TestEstimatorUnbiased(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation: a few seconds")
	}
	regimes := []struct{ period, depth int }{{13, 32}, {32, 32}, {101, 32}, {1009, 16}}
	modes := []lbr.Mode{lbr.EveryEntry, lbr.NewestPeriod}
	var report strings.Builder
	fmt.Fprintf(&report, "%-30s %5s %3s %-15s %-13s %9s %9s %6s\n", "distribution", "P", "D", "period", "mode", "bias", "spread", "max|z|")
	for _, dist := range simDists {
		for _, rg := range regimes {
			for _, per := range simPeriods {
				rng := rand.New(rand.NewPCG(uint64(rg.period), uint64(len(dist.name)*7+len(per.name))))
				type acc struct{ n, sum, sum2 float64 }
				stats := make([]map[int32]*acc, len(modes))
				truthW := make(map[int32]float64)
				for i := range stats {
					stats[i] = make(map[int32]*acc)
				}
				for range simRuns {
					measured := dist.gen(rng, rg.period)
					truth := make([]float64, simEdges) // by edge
					for _, e := range measured {
						if e != nonCall {
							truth[e]++
						}
					}
					ests := make([]lbr.Estimator, len(modes))
					for i, m := range modes {
						ests[i] = lbr.Estimator{Depth: rg.depth, Mode: m}
					}
					estimates := simulate(rng, measured, rg.period, rg.depth, per.start(rng, rg.period), ests)
					for e, c := range truth {
						if c == 0 {
							continue // not in this run
						}
						e := int32(e)
						truthW[e] += c
						for i := range ests {
							r := (estimates[i][e] - c) / c
							a := stats[i][e]
							if a == nil {
								a = &acc{}
								stats[i][e] = a
							}
							a.n++
							a.sum += r
							a.sum2 += r * r
						}
					}
				}
				for i, m := range modes {
					var bias, spread, wsum, maxZ float64
					unseen := 0
					for e, a := range stats[i] {
						mean := a.sum / a.n
						sd := math.Sqrt(max(0, a.sum2/a.n-mean*mean) * a.n / (a.n - 1))
						se := sd / math.Sqrt(a.n)
						w := truthW[e]
						bias += w * mean
						spread += w * sd
						wsum += w
						if se < 1e-12 {
							if mean == -1 {
								// never in a window in any run: a rare edge
								// under an aliasing period (each run sees it
								// at every sample or never); no test
								unseen++
								continue
							}
							if math.Abs(mean) > 1e-9 {
								t.Errorf("%s P=%d D=%d %s %v: edge %d: relative error %g with no spread", dist.name, rg.period, rg.depth, per.name, m, e, mean)
							}
							continue
						}
						z := mean / se
						maxZ = max(maxZ, math.Abs(z))
						if math.Abs(z) > 4.5 {
							t.Errorf("%s P=%d D=%d %s %v: edge %d biased: mean relative error %.4f, sd %.4f, z %.1f over %v runs", dist.name, rg.period, rg.depth, per.name, m, e, mean, sd, z, a.n)
						}
					}
					note := ""
					if unseen > 0 {
						note = fmt.Sprintf(" (%d edges in no window of any run)", unseen)
					}
					fmt.Fprintf(&report, "%-30s %5d %3d %-15s %-13v %+9.5f %9.5f %6.2f%s\n", dist.name, rg.period, rg.depth, per.name, m, bias/wsum, spread/wsum, maxZ, note)
				}
			}
		}
	}
	t.Logf("relative error per edge over %d runs of %d branches (bias: mean, spread: standard deviation; both averaged over edges weighted by calls)\n%s", simRuns, simMeasure, report.String())
}
