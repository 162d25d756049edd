package pipeline

import (
	"math/rand/v2"
	"testing"

	"github.com/hwprof/hwprof/ccmap"
)

// TestPendingSumsTheSame folds stacks through a pending table and
// directly: with a few stacks repeated (all hits), and with more distinct
// stacks than the table holds (sets overflow and sums leave early), the
// maps, Totals.Stacks included, must be equal once it is flushed; a
// flush in the middle changes nothing either.
func TestPendingSumsTheSame(t *testing.T) {
	for _, distinct := range []int{50, 3 * pendWays * pendSets} {
		r := rand.New(rand.NewPCG(uint64(distinct), 9))
		p := newProgram(r, 3000)
		stacks := make([][]ccmap.Frame, distinct)
		for i := range stacks {
			stacks[i] = p.stack(r, 1+r.IntN(24))
		}
		want, got := ccmap.New(), ccmap.New()
		pend := newPending()
		z := rand.NewZipf(r, 1.05, 1, uint64(distinct-1))
		for k := range 60000 {
			s := stacks[z.Uint64()]
			w := uint64(1 + r.IntN(1000))
			want.AddStack(s, w)
			pend.add(got, s, w, 1)
			if k == 30000 {
				pend.flush(got)
			}
		}
		pend.flush(got)
		if err := got.Check(); err != nil {
			t.Fatal(err)
		}
		if got.Totals() != want.Totals() || !ccmap.Equal(got, want) {
			t.Fatalf("%d distinct stacks: summed fold differs (totals %+v, want %+v)", distinct, got.Totals(), want.Totals())
		}
		// A second flush folds nothing more.
		pend.flush(got)
		if got.Totals() != want.Totals() {
			t.Fatalf("%d distinct stacks: second flush changed the totals", distinct)
		}
	}
}
