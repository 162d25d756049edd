package engine

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/hwprof/hwprof/internal/pipeline"
	"github.com/hwprof/hwprof/profile"
)

// LoadAll loads several recordings — of one program on many runs or many
// machines — and merges them into one profile (profile.Merger: objects
// line up by build-id, functions by object, name and address). Up to
// GOMAXPROCS recordings load at once (pipeline.Sharded), each folded with
// a share of the workers; each loading goroutine merges what it loaded
// into a Merger of its own, and their results are merged at the end, so
// merging runs in parallel with loading. The result does not depend on the order of
// paths.
//
// A recording that cannot be opened is an error and no profile: the
// first such of paths, in their order, with how many more there are. A
// recording that breaks later is merged up to where it breaks, and its
// error is returned with the profile (all such errors joined).
func LoadAll(paths []string, o LoadOptions) (*profile.Profile, error) {
	if len(paths) == 1 {
		return Load(paths[0], o)
	}
	if len(paths) == 0 {
		return nil, errors.New("load: no recordings")
	}
	par := min(runtime.GOMAXPROCS(0), len(paths))
	if o.Workers == 0 {
		o.Workers = max(1, runtime.GOMAXPROCS(0)/par)
	}
	type shard struct {
		mg       *profile.Merger
		n        int              // profiles added to mg
		p        *profile.Profile // mg's, when n > 0
		readErrs []error
	}
	openErrs := make([]error, len(paths)) // each written by the goroutine that loads its path
	shards := pipeline.Sharded(len(paths), par, func() *shard { return &shard{mg: profile.NewMerger()} },
		func(sh *shard, i int) {
			p, err := Load(paths[i], o)
			if p == nil {
				openErrs[i] = err
				return
			}
			if err != nil {
				sh.readErrs = append(sh.readErrs, err)
			}
			sh.mg.Add(p)
			sh.n++
		},
		func(sh *shard) {
			if sh.n > 0 {
				sh.p, _ = sh.mg.Profile()
			}
		})
	var readErr error
	var parts []*profile.Profile
	for _, sh := range shards {
		readErr = errors.Join(append([]error{readErr}, sh.readErrs...)...)
		if sh.p != nil {
			parts = append(parts, sh.p)
		}
	}
	if err := firstOpenErr(openErrs); err != nil {
		return nil, err
	}
	p, err := profile.Merge(parts...)
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	p.Recording.File = fmt.Sprintf("%d recordings", len(paths))
	return p, readErr
}

// firstOpenErr is the first error of errs (nil when none), saying how
// many more there are: one line, whichever recording loaded first.
func firstOpenErr(errs []error) error {
	var first error
	more := 0
	for _, err := range errs {
		switch {
		case err == nil:
		case first == nil:
			first = err
		default:
			more++
		}
	}
	switch {
	case more == 1:
		return fmt.Errorf("%w (and 1 more recording that cannot be read)", first)
	case more > 1:
		return fmt.Errorf("%w (and %d more recordings that cannot be read)", first, more)
	}
	return first
}
