package unwind

import (
	"fmt"
	"sync"
	"testing"
)

// TestDWARFConcurrent unwinds the samples of a --call-graph dwarf
// recording from several goroutines at once, each in another order, with
// one Unwinder (whose CFI tables, recent rows and objects' tables they
// share): every stack must be the one a fresh Unwinder finds alone. Run
// with -race, it checks the lock-free row cache and table lookup.
func TestDWARFConcurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("records a program: not in -short")
	}
	t.Parallel() // its own program and files; it measures no time
	samples, maps := recurseSamples(t)
	describe := func(frames []Frame, stop StopReason) string {
		return fmt.Sprintf("%v %v", frames, stop)
	}
	want := make([]string, len(samples))
	deep := 0
	for i := range samples {
		frames, stop := New(Options{}).Unwind(&samples[i], maps)
		want[i] = describe(frames, stop)
		if len(frames) > 2 {
			deep++
		}
	}
	if deep == 0 {
		t.Fatalf("no sample of %d unwound past 2 frames: nothing to compare", len(samples))
	}
	u := New(Options{})
	const workers = 4
	got := make([][]string, workers)
	var wg sync.WaitGroup
	for w := range workers {
		got[w] = make([]string, len(samples))
		wg.Add(1)
		go func() {
			defer wg.Done()
			var frames []Frame
			for k := range samples {
				i := (k + w*len(samples)/workers) % len(samples) // another order each
				if w%2 == 1 {
					i = len(samples) - 1 - i
				}
				var stop StopReason
				frames, stop = u.Append(frames[:0], &samples[i], maps)
				got[w][i] = describe(frames, stop)
			}
		}()
	}
	wg.Wait()
	for w := range workers {
		for i := range samples {
			if got[w][i] != want[i] {
				t.Fatalf("goroutine %d, sample %d: %s\nalone: %s", w, i, got[w][i], want[i])
			}
		}
	}
	t.Logf("%d samples, %d deeper than 2 frames, alike from %d goroutines", len(samples), deep, workers)
}
