package ccmap

import "testing"

// TestChildIndexWide: one context with 100000 children (a dispatch site
// with many targets, many call sites) grows the index many times; every
// child is still found, and absent keys are not.
func TestChildIndexWide(t *testing.T) {
	m := New()
	const n = 100000
	for i := range n {
		m.AddStack([]Frame{{Func: FuncID(1 + i%5000)}, {Func: 0, Site: uint64(i / 5000)}}, 1)
	}
	mustCheck(t, "wide", m)
	root := int32(m.Roots(Total)[0].ID)
	for i := range n {
		if c := m.findChild(root, uint64(i/5000), FuncID(1+i%5000)); c == none {
			t.Fatalf("child %d not found", i)
		}
	}
	for _, tc := range []struct {
		name   string
		addr   uint64
		callee FuncID
	}{
		{"unknown callee", 0, 9999},
		{"unknown site", 99, 1},
		{"the root itself", 0, 0},
	} {
		if c := m.findChild(root, tc.addr, tc.callee); c != none {
			t.Errorf("%s: found %d", tc.name, c)
		}
	}
	if 4*m.kids.n > 3*len(m.kids.slots) {
		t.Errorf("load %d/%d above 3/4", m.kids.n, len(m.kids.slots))
	}
}
