// Package pipeline folds samples into a CC-Map (package ccmap) on a pool of
// goroutines, in the shape of ParCCT: the one producer (the reader of rings
// or of a perf.data file) copies each sample into a self-contained packet,
// full packets go to workers through a bounded queue, and every worker folds
// the packets it receives into its own shard map. Shards are merged with
// ccmap.Merge at Close, or whenever Snapshot asks for a consistent map.
//
// Folding is never on the producer's path: Add and AddEdge only copy frames
// and, when a packet is full, hand it over. Because every packet carries
// everything it needs (the frames, their ranges and the weights) and
// ccmap.Merge is commutative and associative, the result is the same map
// (ccmap.Equal) whatever the number of workers and the order in which
// packets are folded.
//
// Backpressure: the queue holds 2 packets per worker. When the workers lag,
// the producer blocks in Add or AddEdge on a full queue until a worker takes
// a packet (Stats.Stalls counts these waits); nothing is dropped.
//
// Redundancy skipping (Options.DedupRatio = RR, as adaptive bursting's
// re-enable ratio): a sampled stack whose signature (a hash of its frames)
// was already seen is folded with probability RR and weight
// ccmap.Compensate(weight, RR, u), so that every weight's expectation is
// unchanged; a first occurrence is always folded with its own weight. The
// decision is made in the producer from a generator seeded by
// Options.Seed, so it depends only on the seed and the order of Add calls,
// never on the workers. Call-edge events (AddEdge) are never skipped.
//
// Goroutines: the pipeline's workers are started by New and end at Close.
// The other places of hwprof that start goroutines say so in their
// package docs: internal/engine (the loader's sample preparers and its
// folding goroutine, objects resolved and symbolized in parallel,
// kallsyms read ahead), perf/perfdata (a zstd decoder
// while a recording has COMPRESSED records) and internal/record (a
// short-lived pool closing events); each ends them before returning. The
// caller
// provides samples already unwound to ccmap frames (FuncIDs and call-site
// addresses); the pipeline knows no perf records and no symbols.
package pipeline
