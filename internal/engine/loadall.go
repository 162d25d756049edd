package engine

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/hwprof/hwprof/profile"
)

// LoadAll loads several recordings — of one program on many runs or many
// machines — and merges them into one profile (profile.Merger: objects
// line up by build-id, functions by object, name and address). Up to
// GOMAXPROCS recordings load at once, each folded with a share of the
// workers; each loading goroutine merges what it loaded into a Merger of
// its own, and their results are merged at the end, so merging runs in
// parallel with loading. The result does not depend on the order of
// paths.
//
// A recording that cannot be opened is an error and no profile. A
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
	next := make(chan string)
	type result struct {
		p        *profile.Profile
		openErr  error
		readErrs []error
	}
	results := make([]result, par)
	var wg sync.WaitGroup
	for w := range par {
		wg.Go(func() {
			mg := profile.NewMerger()
			res := &results[w]
			n := 0
			for path := range next {
				p, err := Load(path, o)
				if p == nil {
					res.openErr = errors.Join(res.openErr, err)
					continue
				}
				if err != nil {
					res.readErrs = append(res.readErrs, err)
				}
				mg.Add(p)
				n++
			}
			if n > 0 {
				res.p, _ = mg.Profile()
			}
		})
	}
	for _, p := range paths {
		next <- p
	}
	close(next)
	wg.Wait()
	var openErr, readErr error
	var parts []*profile.Profile
	for _, r := range results {
		openErr = errors.Join(openErr, r.openErr)
		readErr = errors.Join(append([]error{readErr}, r.readErrs...)...)
		if r.p != nil {
			parts = append(parts, r.p)
		}
	}
	if openErr != nil {
		return nil, openErr
	}
	p, err := profile.Merge(parts...)
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	p.Recording.File = fmt.Sprintf("%d recordings", len(paths))
	return p, readErr
}
