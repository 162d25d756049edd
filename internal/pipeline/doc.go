// Package pipeline is hwprof's analysis pipeline, the one place that runs a
// recording's samples concurrently: read → prepare (decode, repair, unwind,
// key) → fold → merge. Run owns the goroutines, batches, back-pressure and
// ordering rules; the engine supplies what each stage does (Stages), and
// the pipeline knows no perf record, process or symbol.
//
// The flow from engine.Load to a report:
//
//	engine.Load → pipeline.Run(reader, loader's Stages, Folder)
//	  read     Route on the caller's goroutine, each record in order
//	  prepare  Preparer on a pool, batches of samples in any order
//	  fold     Fold on one goroutine, batches in reading order → Folder
//	  merge    Folder workers fold packets into shard CC-Maps; Close merges
//	→ engine: symbolize once per object (package symbolize) and project
//	  onto functions → profile.Profile → package report
//
// Ordering rules. Every sample is folded in reading order (time order), so
// the fold stage may keep state from sample to sample: each thread's period
// history and the exact source's Go restarts (a morestack hit, then its
// thread's next hit) rely on it, and the address ids, stack caches and LBR
// sums come out the same whatever the number of preparers. The prepare
// stage depends on a record, the process model and the event table alone:
// a record that changes those (Barrier, BarrierSample: MMAP, COMM, FORK,
// EXIT, a new event) waits until every sample read before it is folded,
// and no later sample is prepared before Apply has taken it, so leaves are
// repaired and stacks unwound against the process model as of the sample.
// The Folder's packets are folded by any worker in any order: each is
// self-contained and ccmap.Merge is commutative and associative, so the
// map is the same (ccmap.Equal) whatever the number of workers.
//
// Batches and back-pressure. Sample records are handed over in batches of
// 1,024 records or 256 KiB (copied unless the source's bytes are stable);
// at most preparers+10 batches are in flight, and the reader waits beyond
// that. The fold stage hands stacks and edges to the Folder in packets of
// 4,096 samples (FoldOptions.PacketSize); its queue holds 2 packets per
// worker and the fold stage waits while it is full (Stats.Stalls). Nothing
// is dropped.
//
// Redundancy skipping (FoldOptions.DedupRatio = RR, adaptive bursting's
// re-enable ratio): a stack whose signature was already seen is folded with
// probability RR and weight ccmap.Compensate(weight, RR, u), decided in the
// fold stage's order from FoldOptions.Seed, never by the workers.
//
// Errors and stopping. Run reads to the source's end or its first error,
// which it returns after every sample read before it is folded, with the
// map of all of them; stages report what they skip themselves (the engine
// counts records that do not decode). There is no cancellation: Run ends
// when its source does.
//
// Goroutines. Run starts the preparers (Options.Preparers, 0: GOMAXPROCS)
// and one folding goroutine, and ends them before it returns; NewFolder
// starts the Folder's workers (FoldOptions.Workers), Close ends them. A
// preparer writes only its batch's Prep; the folding goroutine alone writes
// the fold stage's state and feeds the Folder; Apply runs while both are
// idle; a worker touches only the packets it takes and its own shard.
// Sharded and Each run jobs on a few goroutines and return when all are
// done (engine.LoadAll's recordings, the recorder's closing of thousands
// of events). Goroutines start in two other packages only, each saying so:
// symbolize (objects read ahead and resolved in parallel) and perf/perfdata
// (one zstd decoder while a recording has COMPRESSED records).
// internal/layout's tests hold this.
package pipeline
