package pipeline

import "sync"

// Sharded calls do(shard, i) for every job i in [0, n) on par goroutines
// (at least 1, at most n; none when n is 0), each with a shard of its own that newShard
// makes, the jobs taken in order as goroutines free up; each goroutine
// then calls end(shard), if end is not nil. It returns the shards when
// every goroutine is done. What a job adds to its goroutine's shard needs
// no lock; the caller merges the shards (engine.LoadAll: recordings loaded
// in parallel, each goroutine merging what it loaded into its own
// profile.Merger, and ending with the merged profile).
func Sharded[S any](n, par int, newShard func() S, do func(shard S, i int), end func(shard S)) []S {
	par = min(max(par, 1), n)
	shards := make([]S, par)
	next := make(chan int)
	var wg sync.WaitGroup
	for w := range shards {
		shards[w] = newShard()
		wg.Go(func() {
			for i := range next {
				do(shards[w], i)
			}
			if end != nil {
				end(shards[w])
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return shards
}

// Each calls do(i) for every i in [0, n) on par goroutines (at least 1,
// at most n) and returns when all have returned (internal/record closes
// the files of thousands of events so when its background releaser
// cannot start).
func Each(n, par int, do func(i int)) {
	Sharded(n, par, func() struct{} { return struct{}{} }, func(_ struct{}, i int) { do(i) }, nil)
}
