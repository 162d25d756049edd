// Package ccmap is the Call Context Map (CC-Map) of Chilingarova and
// Safonov, "Sampling profiler for Rotor as part of optimizing compilation
// system": one structure from which the dynamic call graph (DCG) and the
// calling-context tree (CCT) are both read, with total counts and
// per-context counts joined by links, so that questions like "how hot is
// edge B→C" and "in which contexts does B→C run, how often" are answered
// by following references, not by scanning trees.
//
// # Structure
//
// General nodes hold totals over all contexts; context nodes hold the
// counts of one calling context. Every general node keeps "Context"
// links to all its context nodes, and every context node refers back to
// its general node:
//
//	general                          per context (one tree per outermost function)
//
//	MethodProfile A ──root──────────▶ A
//	  │ (Self, Total, Calls)          │
//	  ▼                               ▼
//	CallSite A@0xa0 ◀───────────────  CallSiteRef A@0xa0 (in context A)
//	  │   └─Context links──────────▶  │
//	  ▼                               ▼
//	Callee A@0xa0→B ◀──────────────── CalleeRef B (in context A)
//	  │ (Self, Total, Calls)          │ (Self, Total, Calls)
//	  │   └─Context links──────────▶  ▼
//	  ▼                               CallSiteRef B@0xb0 ─▶ CalleeRef C …
//	MethodProfile B
//
// A MethodProfile (one per FuncID) lists its CallSites and its incoming
// Callees; a CallSite (caller, call address) lists its Callees, one per
// target, so a call site's target distribution (monomorphic, or one
// dominant target: a devirtualization hint) is its list. A CalleeRef is a
// calling context: the path from its tree's root through CallSiteRefs
// and CalleeRefs. Hence callers, callees, call sites, the contexts of an
// edge or a function, the per-context targets of a site and a context's
// path are all link-following; only the "hottest of all" queries sort a
// node table.
//
// # Counts
//
// Every node carries three weights (Weights, selected by a Measure).
// AddStack folds a sampled stack weighted by the sample's period: Self
// goes to the innermost function, the innermost edge and its call site,
// and the leaf context; Total to everything on the stack, once per stack
// even under recursion (so a function's Total is its inclusive weight,
// and no Total exceeds Totals.Samples). AddEdge folds a call-edge event
// (an LBR entry, a probe hit) into Calls of the general nodes;
// AddEdgeInContext also into Calls of the callee's context. Weights are
// integers so that merging is exact; Compensate scales a weight by 1/RR
// without bias for redundancy skipping. A context also counts the stacks
// whose whole stack it is (AddStacks' count; CCTNode.Stacks), so that a
// report can give the samples behind a weight.
//
// docs/ccmap.md says how a stack is inserted (the paper's algorithm, rooted
// at the outermost frame only) and what a context costs in memory.
//
// Prune removes cold contexts and keeps every total: removed weight is
// kept per surviving parent and shown as a "[pruned]" node in the CCT
// view. General nodes are never pruned.
//
// # Views and metrics
//
// DCG and CCT return plain, fully sorted data (weight, then ids and
// addresses) for reports. Merge adds maps together (commutative and
// associative, so shards folded in parallel merge to the same map in any
// order); Equal compares them. metrics.go holds the accuracy measures of
// the papers: degree of overlap and hot-edge coverage of DCGs and CCTs,
// and Pearson and Spearman correlation of per-function counts.
//
// # What it does not do
//
// It knows no symbols, binaries or perf records: functions are FuncIDs
// and call sites addresses, both chosen by the caller (who must use the
// same ids in maps that are merged or compared). It starts no
// goroutines and a Map is not safe for concurrent use: fold into one Map
// per goroutine and merge. Weight sums are uint64 and wrap silently past
// 2^64.
package ccmap
