package autofdo

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/hwprof/hwprof/ccmap"
	"github.com/hwprof/hwprof/profile"
)

// Hot returns the symbol names of the functions of object ("" for the
// program, as in FromProfile) that took the most time in p (self
// weight), hottest first: the fewest that make up share of the object's
// self weight, at most n. They are the functions worth probing for
// exact call counts: a probe at a function's entry counts every call to
// it, from each call site (indirect ones too).
func Hot(p *profile.Profile, object string, n int, share float64) ([]string, error) {
	obj, ok := pickObject(p, object)
	if !ok || obj == "" {
		return nil, fmt.Errorf("no samples in an object %q", object)
	}
	type fw struct {
		name string
		w    uint64
	}
	var fs []fw
	var sum uint64
	for _, f := range p.Map.Functions(ccmap.Self) {
		fn := &p.Funcs[f.Func]
		if f.Self == 0 || fn.Object != obj || fn.LinkName == "" {
			continue
		}
		fs = append(fs, fw{fn.LinkName, f.Self})
		sum += f.Self
	}
	slices.SortStableFunc(fs, func(a, b fw) int { return cmp.Or(cmp.Compare(b.w, a.w), cmp.Compare(a.name, b.name)) })
	var out []string
	var acc uint64
	for _, f := range fs {
		if len(out) >= n || float64(acc) >= share*float64(sum) {
			break
		}
		if !slices.Contains(out, f.name) {
			out = append(out, f.name)
		}
		acc += f.w
	}
	return out, nil
}
