package pipeline

import (
	"fmt"
	"runtime"

	"github.com/hwprof/hwprof/ccmap"
)

// A Source is a recording's records in order (perfdata.Reader is one):
// Raw is the current record, header first, and whether its bytes stay
// valid until the source is closed (stable) rather than until Next.
type Source interface {
	Next() bool
	Raw() (raw []byte, stable bool)
	Err() error
}

// A Route says what Run does with a record, as the read stage decides.
type Route uint8

const (
	// Handled: the read stage did all the record needs.
	Handled Route = iota
	// Sample: the record is prepared on a preparer and folded in reading
	// order.
	Sample
	// Barrier: Apply is given the record once every sample read before
	// it is folded and while no other is in flight (it changes what the
	// prepare or fold stages read: the process model, the event table).
	Barrier
	// BarrierSample: as Barrier, then as Sample.
	BarrierSample
)

func (r Route) String() string {
	switch r {
	case Handled:
		return "handled"
	case Sample:
		return "sample"
	case Barrier:
		return "barrier"
	case BarrierSample:
		return "barrier+sample"
	}
	return fmt.Sprintf("Route(%d)", uint8(r))
}

// Stages are the engine's work at each stage, on batches of sample
// records whose per-batch state (what the preparers found of each record)
// is a T, kept with the batch and reused from use to use.
type Stages[T any] interface {
	// Route is the read stage, on the goroutine that called Run, for
	// every record in order.
	Route(raw []byte) Route
	// Apply takes a Barrier or BarrierSample record, on the goroutine
	// that called Run, before the next record is read.
	Apply(raw []byte)
	// Preparer returns the prepare stage of one preparing goroutine (it
	// may keep scratch of its own): it sets b.Prep from b.Records, and
	// may read whatever Apply writes, nothing the fold stage does.
	Preparer() func(b *Batch[T])
	// Fold is the fold stage, on one goroutine, given each batch once
	// prepared, in reading order; it hands stacks and edges to the
	// Folder.
	Fold(b *Batch[T])
	// Flush hands the Folder what the fold stage still holds, after the
	// last batch is folded, on the goroutine that called Run.
	Flush()
}

// Options configure Run.
type Options struct {
	// Preparers is the number of preparing goroutines; 0: GOMAXPROCS.
	Preparers int
	// Inline prepares and folds every sample on the goroutine that
	// called Run as it is read, one at a time (tests compare the two).
	Inline bool
}

// Run is the pipeline: it reads every record of src (read), prepares
// batches of samples on a pool of goroutines (prepare), folds them in
// reading order on one goroutine (fold, into out's shards), then closes
// out (merge) and returns the merged map. It returns src's error after
// every sample read before it is folded; out is closed either way, and
// every goroutine it started has ended when it returns.
func Run[T any](src Source, st Stages[T], out *Folder, o Options) (*ccmap.Map, error) {
	n := o.Preparers
	if n <= 0 {
		n = max(runtime.GOMAXPROCS(0), 1)
	}
	s := startStream(st, n, o.Inline)
	for src.Next() {
		raw, stable := src.Raw()
		switch st.Route(raw) {
		case Sample:
			s.add(raw, stable)
		case Barrier:
			s.drain()
			st.Apply(raw)
		case BarrierSample:
			s.drain()
			st.Apply(raw)
			s.add(raw, stable)
		}
	}
	s.stop()
	st.Flush()
	return out.Close(), src.Err()
}
