package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/ccmap"
	"github.com/hwprof/hwprof/profile"
)

// Two profiles with different FuncIDs for the same functions: an exact one
// counting calls and a timer one of sampled stacks. main calls a at two
// sites and b at one.
func compareFixture() (exact, timer *profile.Profile) {
	exact = &profile.Profile{Map: ccmap.New(), HasCalls: true,
		Funcs: []profile.Func{{Name: "main"}, {Name: "a"}, {Name: "b"}},
		Sites: map[ccmap.CallSite]profile.Site{
			{Caller: 0, Addr: 0x1010}: {Object: "/bin/p", Offset: 0x10},
			{Caller: 0, Addr: 0x1020}: {Object: "/bin/p", Offset: 0x20},
			{Caller: 0, Addr: 0x1030}: {Object: "/bin/p", Offset: 0x30},
		}}
	exact.Map.AddEdge(ccmap.CallSite{Caller: 0, Addr: 0x1010}, 1, 600) // main -> a @0x10
	exact.Map.AddEdge(ccmap.CallSite{Caller: 0, Addr: 0x1020}, 1, 200) // main -> a @0x20
	exact.Map.AddEdge(ccmap.CallSite{Caller: 0, Addr: 0x1030}, 2, 200) // main -> b @0x30
	// The timer profile numbers its functions differently and its
	// addresses are runtime ones of another run (other load address).
	timer = &profile.Profile{Map: ccmap.New(),
		Funcs: []profile.Func{{Name: "b"}, {Name: "main"}, {Name: "a"}},
		Sites: map[ccmap.CallSite]profile.Site{
			{Caller: 1, Addr: 0x5010}: {Object: "/bin/p", Offset: 0x10},
			{Caller: 1, Addr: 0x5030}: {Object: "/bin/p", Offset: 0x30},
		}}
	timer.Map.AddStack([]ccmap.Frame{{Func: 2}, {Func: 1, Site: 0x5010}}, 100) // in a via @0x10
	timer.Map.AddStack([]ccmap.Frame{{Func: 0}, {Func: 1, Site: 0x5030}}, 300) // in b via @0x30
	return exact, timer
}

// TestPrintComparison prints two aligned profiles (the metrics
// themselves are tested in package profile).
func TestPrintComparison(t *testing.T) {
	exact, timer := compareFixture()
	var out bytes.Buffer
	Comparison(&out, []string{"exact", "timer"}, profile.AlignKindsTo([]*profile.Profile{exact, timer}, []profile.DCGKind{exact.DCGKind(), timer.DCGKind()}, nil), 10, "")
	// exact's shares: a@10 60%, b@30 20%; timer's: a@10 25%; overlap 45%
	for _, want := range []string{"main -> a", "p+0x10", "60.00%", "25.00%", "timer", "45.0%"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
