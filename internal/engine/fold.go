package engine

import (
	"github.com/hwprof/hwprof/ccmap"
	"github.com/hwprof/hwprof/internal/pipeline"
)

// folder takes the address-level stacks and call edges the reader
// produces and folds them into a CC-Map (internal/pipeline's shape).
type folder interface {
	AddStacks(frames []ccmap.Frame, weight, count uint64)
	AddEdge(ctx []ccmap.Frame, site ccmap.CallSite, callee ccmap.FuncID, weight uint64)
	Close() *ccmap.Map
}

// newFolder returns the folder for o: the worker pool of package
// pipeline (folding off the reader's path, redundancy skipping).
func newFolder(o LoadOptions) folder {
	return pipeline.New(pipeline.Options{Workers: o.Workers, DedupRatio: o.DedupRatio, Seed: o.Seed})
}
