package flamegraph

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// A differential page keeps the whole weight of the base, frames only the
// base has included, so that the base's shares are of its whole total;
// those frames are not drawn.
func TestDiffKeepsBaseOnlyWeight(t *testing.T) {
	base := []Stack{
		timed(prog("main", "a"), 30, 3),
		timed(prog("main", "gone", "deeper"), 50, 5), // not in new
		timed(prog("main"), 20, 0),
	}
	next := []Stack{
		timed(prog("main", "a"), 60, 6),
		timed(prog("main", "b"), 40, 4),
	}
	meta := Meta{HasTime: true, HasCalls: true}
	var b bytes.Buffer
	if err := WriteDiffHTML(&b, meta, meta, base, next, Options{}); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)<script type="application/json" id="hwprof-data">(.*?)</script>`).FindSubmatch(b.Bytes())
	if m == nil {
		t.Fatal("no page data")
	}
	var d struct {
		Strings  []string  `json:"strings"`
		Depth    []int     `json:"depth"`
		TimeUnit float64   `json:"timeUnit"`
		Time     []float64 `json:"time"`
		BTime    []float64 `json:"btime"`
		BCalls   []float64 `json:"bcalls"`
	}
	if err := json.Unmarshal(m[1], &d); err != nil {
		t.Fatal(err)
	}
	sum := func(vs []float64, unit float64) float64 {
		s := 0.0
		for _, v := range vs {
			s += v * unit
		}
		return s
	}
	if got, want := sum(d.BTime, d.TimeUnit), 100.0*period; got != want {
		t.Errorf("base time in the page %v, want %v", got, want)
	}
	if got := sum(d.BCalls, 1); got != 8 {
		t.Errorf("base calls in the page %v, want 8", got)
	}
	if got, want := sum(d.Time, d.TimeUnit), 100.0*period; got != want {
		t.Errorf("new time in the page %v, want %v", got, want)
	}
	if len(d.Depth) != 4 { // all, main, a, b
		t.Errorf("%d nodes, want 4 (the base-only frames not drawn)", len(d.Depth))
	}
	for _, s := range d.Strings {
		if strings.Contains(s, "gone") || strings.Contains(s, "deeper") {
			t.Errorf("base-only frame %q in the page", s)
		}
	}
}
