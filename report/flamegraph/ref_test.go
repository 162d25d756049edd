package flamegraph

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// The reference's weights: the tree's, and wall time, which the page sums
// from time and off-CPU time.
const (
	wWall = numW + iota
	numRefW
)

// refWeights are a stack's weights in the reference.
func refWeights(s Stack) [numRefW]float64 {
	return [numRefW]float64{wTime: s.Time, wSamples: float64(s.Samples), wCalls: s.Calls, wOffCPU: s.OffCPU, wWall: s.Time + s.OffCPU}
}

// A reference model of the page's tree, written independently of tree.go
// from the package documentation: stacks merged by the names on their path,
// totals per weight, and the narrow-sibling rule. The browser tests hold
// what the page draws against it.
type refNode struct {
	name, object string
	kind         Kind
	self, total  [numRefW]float64
	kids         map[string]*refNode
	parent       *refNode
}

type refTree struct {
	root     *refNode
	byPath   map[string]*refNode // "a;b;c" (names) → node; "" is the root
	shown    []int
	minShare float64
}

func buildRef(stacks []Stack, shown []int, minShare float64) *refTree {
	r := &refTree{root: &refNode{name: "all", kids: map[string]*refNode{}}, byPath: map[string]*refNode{}, shown: shown, minShare: minShare}
	r.byPath[""] = r.root
	for _, s := range stacks {
		n, path := r.root, ""
		w := refWeights(s)
		for k := range numRefW {
			n.total[k] += w[k]
		}
		for _, f := range s.Frames {
			if path != "" {
				path += ";"
			}
			path += f.Name
			c := n.kids[f.Name]
			if c == nil {
				c = &refNode{name: f.Name, object: f.Object, kind: f.Kind, kids: map[string]*refNode{}, parent: n}
				n.kids[f.Name] = c
				r.byPath[path] = c
			}
			n = c
			for k := range numRefW {
				n.total[k] += w[k]
			}
		}
		for k := range numRefW {
			n.self[k] += w[k]
		}
	}
	return r
}

// narrow reports whether n is merged with its narrow siblings.
func (r *refTree) narrow(n *refNode) bool {
	for _, w := range r.shown {
		if n.total[w] > 0 && n.total[w] >= r.minShare*r.root.total[w] {
			return false
		}
	}
	return true
}

// children returns n's kept children in drawing order and the merged
// narrow ones.
func (r *refTree) children(n *refNode) (kept, merged []*refNode) {
	for _, c := range n.kids {
		if r.narrow(c) {
			merged = append(merged, c)
		} else {
			kept = append(kept, c)
		}
	}
	slices.SortFunc(kept, func(a, b *refNode) int {
		return cmp.Or(cmp.Compare(a.name, b.name), cmp.Compare(a.object, b.object))
	})
	return kept, merged
}

var narrowName = regexp.MustCompile(`^\[(\d+) narrow frames?\]$`)

// expect returns the total (under weight w) and the offset from its
// parent's left edge, in weight units, of the frame drawn at path.
func (r *refTree) expect(path string, w int) (total, offset float64, err error) {
	if n, ok := r.byPath[path]; ok && !strings.HasSuffix(path, "narrow frames]") && !strings.HasSuffix(path, "narrow frame]") {
		if n.parent == nil {
			return n.total[w], 0, nil
		}
		if r.narrow(n) {
			return 0, 0, fmt.Errorf("%s is narrow but drawn on its own", path)
		}
		kept, _ := r.children(n.parent)
		for _, k := range kept {
			if k == n {
				return n.total[w], offset, nil
			}
			offset += k.total[w]
		}
		return 0, 0, fmt.Errorf("%s: not among its parent's children", path)
	}
	i := strings.LastIndexByte(path, ';')
	parentPath, name := "", path
	if i >= 0 {
		parentPath, name = path[:i], path[i+1:]
	}
	m := narrowName.FindStringSubmatch(name)
	p := r.byPath[parentPath]
	if m == nil || p == nil {
		return 0, 0, fmt.Errorf("%s: no such frame", path)
	}
	kept, merged := r.children(p)
	if fmt.Sprint(len(merged)) != m[1] {
		return 0, 0, fmt.Errorf("%s: %d siblings are narrow, the page says %s", path, len(merged), m[1])
	}
	for _, k := range kept {
		offset += k.total[w]
	}
	for _, k := range merged {
		total += k.total[w]
	}
	return total, offset, nil
}

// matchShare is the share under weight w of the stacks with a drawn
// (kept) frame whose name matches re: each stack counted once.
func (r *refTree) matchShare(stacks []Stack, re *regexp.Regexp, w int) float64 {
	sum := 0.0
	for _, s := range stacks {
		n := r.root
		for _, f := range s.Frames {
			n = n.kids[f.Name]
			if r.narrow(n) {
				break
			}
			if re.MatchString(f.Name) {
				sum += refWeights(s)[w]
				break
			}
		}
	}
	return sum / r.root.total[w]
}
