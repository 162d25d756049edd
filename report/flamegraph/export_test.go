package flamegraph

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The browser harness and the reference model, for the tests of package
// flamegraph_test that load pages made from real recordings (those need
// package report, which imports this one).

type (
	Page     = page
	RefTree  = refTree
	PageInfo = pageState
	Drawn    = drawnFrame
)

func OpenPage(t *testing.T, html []byte) *Page { return openPage(t, html) }

// CloseBrowser stops the browser the pages opened in (TestMain calls it).
func CloseBrowser() { closeBrowser() }

// BuildRef is the reference tree of stacks under the weights meta has.
func BuildRef(stacks []Stack, meta Meta) *RefTree {
	return buildRef(stacks, shownOf(meta), DefaultMinShare)
}

func (p *page) CheckLayout(r *refTree)   { p.checkLayout(r) }
func (p *page) CheckNoNetwork()          { p.checkNoNetwork() }
func (p *page) State() pageState         { return p.state() }
func (p *page) Frames() []drawnFrame     { return p.frames() }
func (p *page) Click(f drawnFrame)       { p.click(f) }
func (p *page) Screenshot(name string)   { p.screenshot(name) }
func (p *page) Eval(expr string) float64 { return eval[float64](p, expr) }

// JS runs a script for its effects.
func (p *page) JS(expr string) { eval[int](p, "("+expr+"), 0") }

// MatchShare is the reference's share of the whole under weight w
// ("time", "calls") of the stacks with a frame matching re.
func (r *refTree) MatchShare(stacks []Stack, re *regexp.Regexp, w string) float64 {
	return r.matchShare(stacks, re, weightIndex[w])
}

// IsNarrow reports whether name is a merged "[N narrow frames]" frame.
func IsNarrow(name string) bool { return narrowName.MatchString(name) }

// Hover moves the pointer over f and returns the tooltip's rows.
func (p *page) Hover(f drawnFrame) map[string]string { return p.hover(f) }

// Find returns the drawn frame at path ("a;b;c").
func (p *page) Find(path string) drawnFrame { return p.find(path) }

// CheckOffColours holds the frames drawn under weight against the
// off-CPU palette's rule; it returns how many are blue, [preempted] teal
// and of their kind's colour.
func (p *page) CheckOffColours(ref *refTree, weight string) (blue, preempted, others int) {
	return checkOffColours(p.t, p, ref, weight)
}

// Total is the reference's total of the frame at path under weight
// ("time", "off-cpu", "wall"); ok is false when it has no such frame.
func (r *refTree) Total(path, weight string) (float64, bool) {
	n := r.byPath[path]
	if n == nil {
		return 0, false
	}
	return n.total[weightIndex[weight]], true
}

// Dur formats nanoseconds as the page does.
func Dur(ns float64) string { return dur(ns) }

// ParseDur reads a time the page shows ("1.31 s", "134 ms") into
// nanoseconds and the value of its last digit.
func ParseDur(s string) (ns, ulp float64, err error) {
	num, unit, ok := strings.Cut(s, " ")
	scale := map[string]float64{"s": 1e9, "ms": 1e6, "µs": 1e3, "ns": 1}[unit]
	v, perr := strconv.ParseFloat(num, 64)
	if !ok || scale == 0 || perr != nil {
		return 0, 0, fmt.Errorf("not a time: %q", s)
	}
	ulp = scale
	if i := strings.IndexByte(num, '.'); i >= 0 {
		ulp = scale / math.Pow(10, float64(len(num)-i-1))
	}
	return v * scale, ulp, nil
}

// Text evaluates a JavaScript expression of a string.
func (p *page) Text(expr string) string { return eval[string](p, expr) }

// Time is the reference's time total of the frame at path; ok is false
// when the reference has no such frame.
func (r *refTree) Time(path string) (float64, bool) {
	n := r.byPath[path]
	if n == nil {
		return 0, false
	}
	return n.total[wTime], true
}
