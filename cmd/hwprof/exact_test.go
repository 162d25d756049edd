package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/internal/record"
	"github.com/hwprof/hwprof/internal/uprobe"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/perfdata"
)

// needUprobes skips when the exact source cannot work here.
func needUprobes(t *testing.T) {
	t.Helper()
	if _, err := uprobe.PMUType(); err != nil {
		t.Skipf("no uprobe PMU: %v", err)
	}
	if os.Geteuid() != 0 && !perf.HasCapability(perf.CapPerfmon) {
		t.Skip("uprobe events need root or CAP_PERFMON")
	}
}

// compile builds src (C when lang is "c", else C++) into t.TempDir().
func compile(t *testing.T, lang, src string, flags ...string) string {
	t.Helper()
	cc, ext := "gcc", ".c"
	if lang != "c" {
		cc, ext = "g++", ".cc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		t.Skipf("%s not installed", cc)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "prog"+ext)
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "prog")
	args := append(append([]string{}, flags...), "-o", bin, file)
	if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", cc, strings.Join(args, " "), err, out)
	}
	return bin
}

// recordExact records argv with the exact source as `hwprof record
// --source exact` does, in this process.
func recordExact(t *testing.T, e exactFlags, argv ...string) (string, record.Stats) {
	t.Helper()
	events, err := e.events(argv, nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "exact.data")
	st, err := record.Record(record.Options{Events: events, Argv: argv, Output: out, ShareRing: true})
	if err != nil {
		t.Fatal(err)
	}
	if st.ExitCode != 0 {
		t.Fatalf("%s exited with %d", argv[0], st.ExitCode)
	}
	if st.Lost+st.LostSamples > 0 {
		t.Fatalf("lost %d samples: exact counts need every hit", st.Lost+st.LostSamples)
	}
	t.Logf("%d probes × %d rings: attach %v, %d samples in %v", len(events), st.Rings, st.Attach, st.Samples, st.Duration)
	return out, st
}

// edge is a caller → callee call edge by function name.
type edge struct{ caller, callee string }

// exactEdges counts the calls of a recording of one executable obj:
// callee = the probed function at the sample's IP, caller = the function
// of obj holding the return address − 1 ("?" when outside obj). The
// executable's load bias comes from the samples (IP − the probe's address).
// sites counts the distinct call sites (return addresses) of each edge.
func exactEdges(t *testing.T, file string, obj *uprobe.Object) (calls map[edge]uint64, sites map[edge]int) {
	t.Helper()
	r, err := perfdata.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	byOffset := map[uint64]*uprobe.Probe{}
	for i := range obj.Probes {
		byOffset[obj.Probes[i].Offset] = &obj.Probes[i]
	}
	attrs := r.Attrs()
	calls, sites = map[edge]uint64{}, map[edge]int{}
	seen := map[edge]map[uint64]bool{}
	var s perf.Sample
	for r.Next() {
		if r.Record().Type() != perf.RecordSample {
			continue
		}
		if err := r.DecodeSample(&s); err != nil {
			t.Fatal(err)
		}
		if s.Attr < 0 {
			t.Fatalf("sample with id %d of no event", s.Identifier)
		}
		callee, ok := byOffset[attrs[s.Attr].Attr.Config2]
		if !ok {
			t.Fatalf("event %s probes an offset of no function", attrs[s.Attr].Name)
		}
		bias := s.IP - callee.Addr
		ret, ok := uprobe.ReturnAddress(&s)
		if !ok {
			t.Fatal("sample without its stack copy")
		}
		e := edge{"?", callee.Name}
		if caller, ok := obj.Func(ret - 1 - bias); ok {
			e.caller = caller.Name
		}
		calls[e]++
		if seen[e] == nil {
			seen[e] = map[uint64]bool{}
		}
		if !seen[e][ret] {
			seen[e][ret] = true
			sites[e]++
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return calls, sites
}

// among keeps the edges between the given functions.
func among(calls map[edge]uint64, funcs ...string) map[edge]uint64 {
	out := map[edge]uint64{}
	for e, n := range calls {
		if slices.Contains(funcs, e.caller) && slices.Contains(funcs, e.callee) {
			out[e] = n
		}
	}
	return out
}

func edgeDiff(got, want map[edge]uint64) string {
	var keys []edge
	for e := range got {
		keys = append(keys, e)
	}
	for e := range want {
		if _, ok := got[e]; !ok {
			keys = append(keys, e)
		}
	}
	slices.SortFunc(keys, func(a, b edge) int {
		return cmp.Or(cmp.Compare(a.caller, b.caller), cmp.Compare(a.callee, b.callee))
	})
	var b strings.Builder
	for _, e := range keys {
		if got[e] != want[e] {
			fmt.Fprintf(&b, "  %s → %s: got %d, want %d\n", e.caller, e.callee, got[e], want[e])
		}
	}
	return b.String()
}

// knownCalls makes N rounds of: main calls a and b, a calls c twice (two
// call sites), main calls rec(5) (rec recurses 5 times) and, through one
// function-pointer call site, f1 and f2 in turn. noipa keeps gcc -O2 from
// inlining, cloning or turning the recursion into a loop.
const knownCalls = `
#include <stdlib.h>
#define F __attribute__((noipa))
volatile int sink;
F int c(int x) { sink += x; return x + 1; }
F int a(int x) { int r = c(x); r += 2 * c(x + 1); sink += r; return r; }
F int b(int x) { sink += x; return 3 * x; }
F int rec(int n) { if (n == 0) return 0; int r = rec(n - 1); sink += r; return r + n; }
F int f1(int x) { sink += x; return x; }
F int f2(int x) { sink -= x; return x; }
int (*table[2])(int) = {f1, f2};
int main(int argc, char **argv) {
	int n = atoi(argv[1]);
	for (int i = 0; i < n; i++) {
		sink += a(i);
		sink += b(i);
		sink += rec(5);
		sink += table[i & 1](i);
	}
	return 0;
}
`

func TestExactKnownCounts(t *testing.T) {
	needUprobes(t)
	const n = 2000
	want := map[edge]uint64{
		{"main", "a"}: n, {"main", "b"}: n, {"a", "c"}: 2 * n,
		{"main", "rec"}: n, {"rec", "rec"}: 5 * n,
		{"main", "f1"}: n / 2, {"main", "f2"}: n / 2,
	}
	for _, opt := range []string{"-O0", "-O2"} {
		t.Run(opt, func(t *testing.T) {
			bin := compile(t, "c", knownCalls, opt, "-fno-omit-frame-pointer")
			file, st := recordExact(t, exactFlags{}, bin, fmt.Sprint(n))
			obj, err := uprobe.Functions(bin, nil)
			if err != nil {
				t.Fatal(err)
			}
			calls, sites := exactEdges(t, file, obj)
			got := among(calls, "main", "a", "b", "c", "rec", "f1", "f2")
			if d := edgeDiff(got, want); d != "" {
				t.Errorf("call counts differ from the program's:\n%s", d)
			}
			if s := sites[edge{"a", "c"}]; s != 2 {
				t.Errorf("a → c from %d call sites, want 2", s)
			}
			if s := sites[edge{"rec", "rec"}]; s != 1 {
				t.Errorf("rec → rec from %d call sites, want 1", s)
			}
			if st.EventSamples == nil || st.Samples < 11*n {
				t.Errorf("%d samples, want at least %d", st.Samples, 11*n)
			}
		})
	}
}

var _ = errors.New
var _ = regexp.Compile
