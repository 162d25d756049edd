package main

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/ccmap"
	"github.com/hwprof/hwprof/internal/engine"
	"github.com/hwprof/hwprof/internal/record"
	"github.com/hwprof/hwprof/internal/testenv"
	"github.com/hwprof/hwprof/internal/testprog"
	"github.com/hwprof/hwprof/internal/uprobe"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/perfdata"
	"github.com/hwprof/hwprof/unwind"
)

// needUprobes skips when this machine cannot place uprobes as the exact
// source does (no uprobe PMU or tracefs in the kernel, not root), checked
// without hwprof: uprobe.Tracefs failing is a failure.
func needUprobes(t *testing.T) {
	t.Helper()
	testenv.Uprobes(t)
}

// recordExact records argv with the exact source as `hwprof record
// --source exact` does, in this process.
func recordExact(t *testing.T, e exactFlags, argv ...string) (string, record.Stats) {
	t.Helper()
	events, _, err := e.events(argv, nil, io.Discard)
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
	t.Logf("%d events × %d rings: attach %v, detach %v, %d samples in %v", len(events), st.Rings, st.Attach, st.Detach, st.Samples, st.Duration)
	return out, st
}

// edge is a caller → callee call edge by function name.
type edge struct{ caller, callee string }

// exactEdges counts the calls of a recording of one executable obj (made
// with the same filter as the recording): callee = the probed function at
// the sample's IP (through the recording's mmap of obj: IP − start + page
// offset is the probe's file offset), caller = the function of obj holding
// the return address − 1 ("?" when outside obj). sites counts the distinct
// call sites (return addresses) of each edge.
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
	var maps []*perf.Mmap2 // obj's mappings
	calls, sites = map[edge]uint64{}, map[edge]int{}
	seen := map[edge]map[uint64]bool{}
	var s perf.Sample
	for r.Next() {
		if r.Record().Type() == perf.RecordMmap2 {
			rec, err := r.Decode()
			if err != nil {
				t.Fatal(err)
			}
			if m := rec.(*perf.Mmap2); m.Filename == obj.Path {
				maps = append(maps, m)
			}
			continue
		}
		if r.Record().Type() != perf.RecordSample {
			continue
		}
		if err := r.DecodeSample(&s); err != nil {
			t.Fatal(err)
		}
		if s.Attr < 0 {
			t.Fatalf("sample with id %d of no event", s.Identifier)
		}
		callee, ok := calleeOf(maps, byOffset, &s)
		if !ok {
			t.Fatalf("sample of %s at %#x (pid %d) probes no function of %s", r.Attrs()[s.Attr].Name, s.IP, s.PID, obj.Path)
		}
		bias := s.IP - callee.Addr
		ret, ok := unwind.EntryReturnAddress(&s)
		if !ok {
			t.Fatal("sample without its stack copy")
		}
		e := edge{"?", callee.Name}
		if caller, ok := probeHolding(obj, ret-1-bias); ok {
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

// calleeOf finds the probe at a sample's IP through the mappings of the
// probed object in the sample's process.
func calleeOf(maps []*perf.Mmap2, byOffset map[uint64]*uprobe.Probe, s *perf.Sample) (*uprobe.Probe, bool) {
	for _, m := range slices.Backward(maps) { // the latest mapping first
		if m.PID == s.PID && s.IP >= m.Addr && s.IP < m.Addr+m.Len {
			p, ok := byOffset[s.IP-m.Addr+m.PgOff]
			return p, ok
		}
	}
	return nil, false
}

// probeHolding finds the probe whose function holds the object address
// addr (the probes are sorted by address).
func probeHolding(obj *uprobe.Object, addr uint64) (*uprobe.Probe, bool) {
	i, found := slices.BinarySearchFunc(obj.Probes, addr, func(p uprobe.Probe, a uint64) int { return cmp.Compare(p.Addr, a) })
	if found {
		return &obj.Probes[i], true
	}
	if i > 0 && addr < obj.Probes[i-1].Addr+obj.Probes[i-1].Size {
		return &obj.Probes[i-1], true
	}
	return nil, false
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
			bin := testprog.Build(t, "c/knowncalls.c", opt, "-fno-omit-frame-pointer")
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

// manyFuncs is a C program with n functions, main calling function i
// (i mod 3) + 1 times.
func manyFuncs(n int) string {
	var b strings.Builder
	b.WriteString("volatile int sink;\n")
	for i := range n {
		fmt.Fprintf(&b, "__attribute__((noipa)) void f%d(void) { sink += %d; }\n", i, i)
	}
	b.WriteString("int main(void) {\n")
	for i := range n {
		fmt.Fprintf(&b, "\tfor (int k = 0; k < %d; k++) f%d();\n", i%3+1, i)
	}
	b.WriteString("\treturn 0;\n}\n")
	return b.String()
}

// Hundreds of probes attach as one tracefs event (one perf event per CPU),
// every call is counted, and perf reads the file: each sample under the
// event named after the program, at its function.
func TestExactManyProbesPerfReads(t *testing.T) {
	needUprobes(t)
	const n = 500
	bin := testprog.BuildText(t, "many.c", manyFuncs(n), "-O1", "-fno-omit-frame-pointer")
	const filter = `^(f[0-9]+|main)$`
	file, st := recordExact(t, exactFlags{filter: filter}, bin)
	cpus, err := perf.OnlineCPUs()
	if err != nil {
		t.Fatal(err)
	}
	if st.Opened != len(cpus) {
		t.Errorf("opened %d events for %d probes on %d CPUs, want one per CPU", st.Opened, n+1, len(cpus))
	}
	obj, err := uprobe.Functions(bin, regexp.MustCompile(filter))
	if err != nil {
		t.Fatal(err)
	}
	calls, _ := exactEdges(t, file, obj)
	want := map[edge]uint64{}
	for i := range n {
		want[edge{"main", fmt.Sprintf("f%d", i)}] = uint64(i%3 + 1)
	}
	if d := edgeDiff(among(calls, slices.Collect(func(yield func(string) bool) {
		yield("main")
		for i := range n {
			if !yield(fmt.Sprintf("f%d", i)) {
				return
			}
		}
	})...), want); d != "" {
		t.Errorf("call counts differ:\n%s", d)
	}
	if _, err := exec.LookPath("perf"); err != nil {
		t.Skip("perf not installed: cannot check that perf reads the file")
	}
	out, err := exec.Command("perf", "script", "-G", "-F", "event,ip,sym", "-i", file).Output()
	if err != nil {
		t.Fatalf("perf script: %v", err)
	}
	perfCounts := map[string]uint64{}
	lines := 0
	event := uprobe.Group() + ":" + filepath.Base(bin)
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		lines++
		if len(f) != 3 || strings.TrimSuffix(f[0], ":") != event {
			t.Fatalf("perf script line %q: want \"%s: IP FUNC\"", line, event)
		}
		perfCounts[f[2]]++
	}
	if uint64(lines) != st.Samples {
		t.Errorf("perf script shows %d samples, hwprof wrote %d", lines, st.Samples)
	}
	for i := range n {
		name := fmt.Sprintf("f%d", i)
		if perfCounts[name] != uint64(i%3+1) {
			t.Fatalf("perf script: %s hit %d times, want %d", name, perfCounts[name], i%3+1)
		}
	}
	rep := exec.Command("perf", "report", "--stdio", "--sort", "sym", "-i", file)
	var stderr strings.Builder
	rep.Stderr = &stderr
	if out, err := rep.Output(); err != nil || !strings.Contains(string(out), event) || !strings.Contains(string(out), "] f499") {
		t.Errorf("perf report: %v, %s\n%.2000s", err, stderr.String(), out)
	}
}

// callgrindCalls runs prog under valgrind --tool=callgrind and sums the
// calls= lines per caller (fn) → callee (cfn), by callgrind's (demangled)
// names. Name compression: "(id) name" defines id, "(id)" refers to it;
// fn and cfn share one table.
func callgrindCalls(t *testing.T, argv ...string) map[edge]uint64 {
	t.Helper()
	if _, err := exec.LookPath("valgrind"); err != nil {
		t.Skip("valgrind not installed")
	}
	out := filepath.Join(t.TempDir(), "callgrind.out")
	cmd := exec.Command("valgrind", append([]string{"--tool=callgrind", "--callgrind-out-file=" + out}, argv...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("valgrind: %v\n%s", err, b)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	name := func(v string) string {
		v = strings.TrimSpace(v)
		if !strings.HasPrefix(v, "(") {
			return v
		}
		end := strings.IndexByte(v, ')')
		if end < 0 {
			t.Fatalf("callgrind: bad name %q", v)
		}
		id, rest := v[:end+1], strings.TrimSpace(v[end+1:])
		if rest != "" {
			names[id] = rest
			return rest
		}
		n, ok := names[id]
		if !ok {
			t.Fatalf("callgrind: name %s used before it is defined", id)
		}
		return n
	}
	calls := map[edge]uint64{}
	var fn, cfn string
	for line := range strings.SplitSeq(string(data), "\n") {
		switch {
		case strings.HasPrefix(line, "fn="):
			fn = recursion(name(line[3:]))
		case strings.HasPrefix(line, "cfn="):
			cfn = recursion(name(line[4:]))
		case strings.HasPrefix(line, "calls="):
			f := strings.Fields(line[6:])
			var n uint64
			if _, err := fmt.Sscan(f[0], &n); err != nil {
				t.Fatalf("callgrind: bad line %q", line)
			}
			calls[edge{fn, cfn}] += n
		}
	}
	return calls
}

// recursion removes the "'N" callgrind appends to a function's name at
// recursion depth N (--separate-recs).
func recursion(name string) string {
	if i := strings.LastIndexByte(name, '\''); i > 0 && strings.Trim(name[i+1:], "0123456789") == "" {
		return name[:i]
	}
	return name
}

// startup are functions of every executable that the C runtime, not the
// program, calls.
var startup = []string{"_start", "_init", "_fini", "frame_dummy", "register_tm_clones",
	"deregister_tm_clones", "__do_global_dtors_aux", "__libc_csu_init", "__libc_csu_fini"}

// checkAgainstCallgrind compares hwprof's exact counts with callgrind's on
// the edges between the program's own probed functions.
func checkAgainstCallgrind(t *testing.T, bin string, argv ...string) {
	t.Helper()
	file, _ := recordExact(t, exactFlags{}, append([]string{bin}, argv...)...)
	obj, err := uprobe.Functions(bin, nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]string{} // mangled → demangled, callgrind's spelling
	var own []string
	for _, p := range obj.Probes {
		if !slices.Contains(startup, p.Name) {
			byName[p.Name] = p.Demangled
			own = append(own, p.Demangled)
		}
	}
	calls, _ := exactEdges(t, file, obj)
	got := map[edge]uint64{}
	for e, n := range calls {
		caller, ok1 := byName[e.caller]
		callee, ok2 := byName[e.callee]
		if ok1 && ok2 {
			got[edge{caller, callee}] += n
		}
	}
	want := among(callgrindCalls(t, append([]string{bin}, argv...)...), own...)
	if len(want) < 4 {
		t.Fatalf("callgrind saw only %d edges between the program's functions: %v", len(want), want)
	}
	if d := edgeDiff(got, want); d != "" {
		t.Errorf("hwprof's exact counts differ from callgrind's:\n%s", d)
	}
	t.Logf("%d edges equal callgrind's", len(want))
}

func TestExactAgainstCallgrindC(t *testing.T) {
	needUprobes(t)
	for _, opt := range []string{"-O0", "-O2"} {
		t.Run(opt, func(t *testing.T) {
			checkAgainstCallgrind(t, testprog.Build(t, "c/knowncalls.c", opt, "-fno-omit-frame-pointer"), "300")
		})
	}
}

func TestExactAgainstCallgrindCXX(t *testing.T) {
	needUprobes(t)
	for _, opt := range []string{"-O0", "-O2"} {
		t.Run(opt, func(t *testing.T) {
			checkAgainstCallgrind(t, testprog.Build(t, "cpp/virtualcalls.cc", opt, "-fno-omit-frame-pointer"), "501")
		})
	}
}

// A Go executable: probes attach to its main package and the runtime's
// scheduler functions (many), and the calls of main.leaf are counted by
// caller exactly: the return address is at the stack pointer on entry in
// Go's register ABI too. The same without a symbol table (go build
// -ldflags=-s, as go run builds): the probes come from the pclntab.
func TestExactGo(t *testing.T) {
	needUprobes(t)
	for _, build := range []struct {
		name  string
		flags []string
	}{{"symtab", nil}, {"stripped", []string{"-ldflags=-s -w"}}} {
		t.Run(build.name, func(t *testing.T) {
			exactGo(t, testprog.Build(t, "go/leafcalls", build.flags...))
		})
	}
}

func exactGo(t *testing.T, bin string) {
	const n = 5000
	// (the symbol table names the morestack variant with its ABI, the
	// pclntab without)
	filter := `^main\.|^runtime\.(schedule|findRunnable|mallocgc|newobject|gcStart|morestack_noctxt(\.abi0)?)$`
	file, st := recordExact(t, exactFlags{filter: filter}, bin, fmt.Sprint(n))
	obj, err := uprobe.Functions(bin, regexp.MustCompile(filter))
	if err != nil {
		t.Fatal(err)
	}
	if len(obj.Probes) < 8 || st.Opened < 2 {
		t.Errorf("%d probes, %d events opened: want the main package and the runtime functions", len(obj.Probes), st.Opened)
	}
	calls, sites := exactEdges(t, file, obj)
	// When a goroutine's stack must grow, the function's prologue calls
	// runtime.morestack_noctxt, which copies the stack and restarts the
	// function from its entry: the entry probe counts that restart as one
	// more call from the same call site. Each restart shows as a call of
	// morestack_noctxt from the function, so per callee:
	// calls − restarts = the program's calls.
	want := map[edge]uint64{{"main.main", "main.twice"}: n, {"main.main", "main.leaf"}: n, {"main.twice", "main.leaf"}: 2 * n}
	got := among(calls, "main.main", "main.twice", "main.leaf")
	for _, callee := range []string{"main.twice", "main.leaf"} {
		restarts := calls[edge{callee, "runtime.morestack_noctxt.abi0"}] + calls[edge{callee, "runtime.morestack_noctxt"}]
		var g, w uint64
		for e, c := range got {
			if e.callee == callee {
				g += c
				w += want[e]
				if c < want[e] || c > want[e]+restarts {
					t.Errorf("%s → %s: %d calls, want %d (+ up to %d stack-growth restarts)", e.caller, callee, c, want[e], restarts)
				}
			}
		}
		if g-restarts != w {
			t.Errorf("%s: %d entries − %d restarts = %d calls, want %d", callee, g, restarts, g-restarts, w)
		}
		if restarts > 0 {
			t.Logf("%s: %d restarts after stack growth", callee, restarts)
		}
	}
	if len(got) != len(want) {
		t.Errorf("edges %v, want %v", got, want)
	}
	if s := sites[edge{"main.twice", "main.leaf"}]; s != 2 {
		t.Errorf("main.twice → main.leaf from %d call sites, want 2", s)
	}
	// The profile (what report and compare show) discounts the restarts
	// itself: its call counts are the program's.
	p, err := engine.Load(file, engine.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pc := map[edge]uint64{}
	for _, e := range p.Map.Edges(ccmap.Calls) {
		k := edge{p.Funcs[e.Site.Caller].Name, p.Funcs[e.Callee].Name}
		if _, ok := want[k]; ok {
			pc[k] += e.Calls
		}
	}
	if !reflect.DeepEqual(pc, want) {
		t.Errorf("profile call counts %v, want %v", pc, want)
	}
}

// Errors a user can make, each with a clear message; none panics.
func TestExactErrors(t *testing.T) {
	needUprobes(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "script.sh")
	os.WriteFile(script, []byte("#!/bin/sh\nexit 0\n"), 0o755)
	bin := testprog.Build(t, "c/knowncalls.c", "-O1")
	for _, tc := range []struct {
		name string
		e    exactFlags
		argv []string
		pids []int
		want string
	}{
		{"missing executable", exactFlags{}, []string{filepath.Join(dir, "no-such-program")}, nil, "no such file"},
		{"not in PATH", exactFlags{}, []string{"no-such-program-hwprof"}, nil, "executable file not found"},
		{"script", exactFlags{}, []string{script}, nil, "not an ELF executable"},
		{"bad regexp", exactFlags{filter: "f("}, []string{bin}, nil, "--probe-filter: bad regular expression"},
		{"nothing matches", exactFlags{filter: "^zzz$"}, []string{bin}, nil, `no function of ` + bin + ` matches --probe-filter "^zzz$"`},
		{"missing library", exactFlags{objects: "libnothing.so.9"}, []string{bin}, nil, "library libnothing.so.9 not found"},
		{"no such pid", exactFlags{}, nil, []int{1 << 30}, "no process with pid 1073741824"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := tc.e.events(tc.argv, tc.pids, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to say %q", err, tc.want)
			}
		})
	}
}

// A program that exits before its probes are hit, and one killed by a
// signal: the recording ends cleanly with the exit status, and a program
// that cannot be executed is a clear error.
func TestExactTargetExitsEarly(t *testing.T) {
	needUprobes(t)
	// A copy: the test makes it non-executable.
	bin := testprog.Copy(t, testprog.BuildText(t, "prog.c", `#include <stdlib.h>
int used(int x) { return x + 1; }
int main(int argc, char **argv) { if (argc > 1) abort(); exit(used(2)); }
`, "-O0"), t.TempDir())
	for _, tc := range []struct {
		argv    []string
		code    int
		samples uint64
	}{{[]string{bin}, 3, 3}, {[]string{bin, "abort"}, 128 + 6, 2}} { // _start, main, used, exit(3); _start, main, SIGABRT
		// Each recording defines its probes anew: they are removed after it.
		events, _, err := (&exactFlags{}).events([]string{bin}, nil, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		st, err := record.Record(record.Options{Events: events, Argv: tc.argv, Output: filepath.Join(t.TempDir(), "x.data"), ShareRing: true})
		if err != nil || st.ExitCode != tc.code {
			t.Errorf("%v: exit %d, err %v; want exit %d", tc.argv, st.ExitCode, err, tc.code)
		}
		if st.Samples != tc.samples {
			t.Errorf("%v: %d samples, want %d", tc.argv, st.Samples, tc.samples)
		}
	}
	os.Chmod(bin, 0o644)
	if _, _, err := (&exactFlags{}).events([]string{bin}, nil, io.Discard); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("exact events for a non-executable file: %v", err)
	}
}

// --probe-objects adds a shared library's functions: calls into it and
// inside it are counted, with their callers, as for the executable's.
func TestExactProbeObjects(t *testing.T) {
	needUprobes(t)
	lib := testprog.BuildText(t, "libcount.so.c", `
__attribute__((noinline)) int lib_helper(int x) { return x * 3; }
__attribute__((noinline)) int lib_add(int x) { return lib_helper(x) + 1; }
`, "-O1", "-fPIC", "-shared")
	dir := filepath.Dir(lib)
	bin := testprog.BuildText(t, "prog.c", `int lib_add(int);
int main(void) { int s = 0; for (int i = 0; i < 7; i++) s += lib_add(i); return s == 0; }
`, "-O1", "-L"+dir, "-Wl,-rpath,"+dir, "-lcount")
	file, _ := recordExact(t, exactFlags{objects: lib, filter: `^(main|lib_add|lib_helper)$`}, bin)
	p, err := engine.Load(file, engine.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[edge]uint64{}
	for _, e := range p.Map.Edges(ccmap.Calls) {
		k := edge{p.Funcs[e.Site.Caller].Name, p.Funcs[e.Callee].Name}
		if k.callee == "lib_add" || k.callee == "lib_helper" {
			got[k] += e.Calls
		}
	}
	want := map[edge]uint64{{"main", "lib_add"}: 7, {"lib_add", "lib_helper"}: 7}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("calls into the library %v, want %v", got, want)
	}
}

// With -p the exact source probes the running process's executable: the
// calls it makes while attached are counted.
func TestExactAttach(t *testing.T) {
	needUprobes(t)
	bin := testprog.BuildText(t, "prog.c", `#include <unistd.h>
__attribute__((noinline)) int tick(int x) { return x + 1; }
int main(void) { int s = 0; for (int i = 0; i < 3000; i++) { s = tick(s); usleep(1000); } return s == 0; }
`, "-O1", "-fno-omit-frame-pointer")
	prog := exec.Command(bin)
	if err := prog.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { prog.Process.Kill(); prog.Wait() }()
	out := filepath.Join(t.TempDir(), "attach.data")
	r := hwprof(t, "record", "-q", "--source", "exact", "--probe-filter", "^(main|tick)$",
		"-p", fmt.Sprint(prog.Process.Pid), "--duration", "1s", "-o", out)
	if r.code != 0 {
		t.Fatalf("record -p: exit %d\n%s", r.code, r.stderr)
	}
	p, err := engine.Load(out, engine.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var calls uint64
	for _, e := range p.Map.Edges(ccmap.Calls) {
		if p.Funcs[e.Site.Caller].Name == "main" && p.Funcs[e.Callee].Name == "tick" {
			calls += e.Calls
		}
	}
	// About one call per millisecond of the second attached (fewer on a
	// loaded machine); main itself was entered before the attach.
	if calls < 50 || calls > 3000 {
		t.Errorf("main → tick counted %d times in a second attached, want about 1000 (at least 50)", calls)
	}
	t.Logf("main → tick: %d calls while attached", calls)
}
