package main

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/hwprof/hwprof/internal/fixtures"
	"github.com/hwprof/hwprof/internal/testprog"
)

// needGoTool skips when the go command is absent (go tool pprof is the
// oracle).
func needGoTool(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not installed: go tool pprof is the oracle")
	}
	return goBin
}

// goTool runs go tool ARGS and returns its standard output.
func goTool(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(needGoTool(t), append([]string{"tool"}, args...)...)
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "PPROF_TMPDIR="+t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("go tool %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	return string(out)
}

// pprofShare is a function's flat and cumulative share in go tool
// pprof -top, in percent.
type pprofShare struct{ flat, cum float64 }

var topRowRE = regexp.MustCompile(`^\s*\S+\s+([\d.]+)%\s+[\d.]+%\s+\S+\s+([\d.]+)%\s+(.+)$`)

// pprofTop runs go tool pprof -top over every node (inlined frames given
// to the function they were inlined into, as hwprof folds them).
func pprofTop(t *testing.T, file, index string) map[string]pprofShare {
	t.Helper()
	out := goTool(t, "pprof", "-top", "-noinlines", "-nodefraction=0", "-nodecount=1000000", "-sample_index="+index, file)
	rows := map[string]pprofShare{}
	for line := range strings.SplitSeq(out, "\n") {
		m := topRowRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		flat, _ := strconv.ParseFloat(m[1], 64)
		cum, _ := strconv.ParseFloat(m[2], 64)
		rows[strings.TrimSpace(m[3])] = pprofShare{flat, cum}
	}
	if len(rows) == 0 {
		t.Fatalf("go tool pprof -top printed no functions:\n%s", out)
	}
	return rows
}

// checkTopAgrees checks that go tool pprof -top shows every function of
// hwprof's report with the same self and total shares (to pprof's two
// decimals). Names hwprof gives several functions (one per object) are
// summed by pprof and left out.
func checkTopAgrees(t *testing.T, rep *reportJSON, top map[string]pprofShare) {
	t.Helper()
	count := map[string]int{}
	for _, f := range rep.Functions {
		count[f.Name]++
	}
	checked := 0
	for _, f := range rep.Functions {
		if count[f.Name] > 1 || f.Total == 0 && f.Self == 0 {
			continue
		}
		got, ok := top[pprofName(f.Name)]
		if !ok {
			t.Errorf("go tool pprof -top does not show %s (self %.4f, total %.4f)", f.Name, f.Self, f.Total)
			continue
		}
		if !pprofPercent(got.flat, 100*f.Self) || !pprofPercent(got.cum, 100*f.Total) {
			t.Errorf("%s: pprof flat %.2f%% cum %.2f%%, hwprof self %.4f%% total %.4f%%", f.Name, got.flat, got.cum, 100*f.Self, 100*f.Total)
		}
		checked++
	}
	if checked < 3 {
		t.Errorf("only %d functions compared", checked)
	}
}

// pprofPercent says whether a percentage go tool pprof printed stands for
// want: pprof prints two decimals, two significant digits under 1%, and
// "100%" for anything from 99.95% up (internal/measurement.Percentage).
func pprofPercent(printed, want float64) bool {
	if printed == 100 {
		return want >= 99.95-0.006
	}
	return math.Abs(printed-want) <= 0.006
}

// templateArgs matches C++ template arguments (without nesting inside).
var templateArgs = regexp.MustCompile(`<[^<>]*>`)

// pprofName is the name go tool pprof shows for a function hwprof names
// name: pprof shortens C++ names, dropping template arguments.
func pprofName(name string) string {
	if strings.HasPrefix(name, "[") {
		return name
	}
	for {
		n := templateArgs.ReplaceAllString(name, "")
		if n == name {
			return n
		}
		name = n
	}
}

// pprofTraces returns the stacks of go tool pprof -traces, outermost
// frame first, joined by " > ".
func pprofTraces(t *testing.T, file string) map[string]bool {
	t.Helper()
	out := goTool(t, "pprof", "-traces", "-noinlines", file)
	traces := map[string]bool{}
	blocks := strings.Split(out, "-----------+-------------------------------------------------------")
	for _, b := range blocks[1:] {
		var frames []string
		for line := range strings.SplitSeq(b, "\n") {
			f := strings.Fields(line)
			switch {
			case len(f) == 0 || strings.HasSuffix(f[0], ":"):
				continue // a label
			case len(frames) == 0 && len(f) >= 2:
				frames = append(frames, strings.Join(f[1:], " "))
			default:
				frames = append(frames, strings.Join(f, " "))
			}
		}
		if len(frames) == 0 {
			continue
		}
		slices.Reverse(frames)
		traces[strings.Join(frames, " > ")] = true
	}
	return traces
}

// checkTracesAgree checks that the stacks of go tool pprof -traces are
// hwprof's calling contexts.
func checkTracesAgree(t *testing.T, rep *reportJSON, traces map[string]bool) {
	t.Helper()
	want := map[string]bool{}
	for _, c := range rep.Contexts {
		if c.Weight > 0 {
			names := make([]string, len(c.Path))
			for i, n := range c.Path {
				names[i] = pprofName(n)
			}
			want[strings.Join(names, " > ")] = true
		}
	}
	for c := range want {
		if !traces[c] {
			t.Errorf("hwprof context %q is not a go tool pprof -traces stack", c)
		}
	}
	for tr := range traces {
		if !want[tr] {
			t.Errorf("go tool pprof -traces stack %q is not a hwprof context", tr)
		}
	}
	if len(want) == 0 {
		t.Error("no contexts")
	}
}

// TestPProfMatchesReportLive records a C, a C++ and a Go program with the
// timer source and checks that go tool pprof reads hwprof's pprof of each
// as hwprof's own report shows it: the same functions with the same self
// and total shares (-top), the same calling contexts (-traces), and
// functions with start lines.
func TestPProfMatchesReportLive(t *testing.T) {
	t.Parallel()
	needPerfEvents(t)
	needGoTool(t)
	progs := []struct {
		name string
		bin  func(t *testing.T) string
		arg  string
		want string // a function the profile must have, with its start line
		src  func(t *testing.T) string
		decl string // how its declaration line starts in src
	}{
		{"c", func(t *testing.T) string {
			return testprog.Build(t, "c/hotpath.c", "-g", "-O0", "-fno-omit-frame-pointer")
		}, "500", "b",
			func(t *testing.T) string { return testprog.Source(t, "c/hotpath.c") }, "__attribute__((noinline)) void b("},
		{"cpp", func(t *testing.T) string {
			return testprog.Build(t, "cpp/shapes.cc", "-g", "-O0", "-fno-omit-frame-pointer")
		}, "500", "shapes::Square::area",
			func(t *testing.T) string { return testprog.Source(t, "cpp/shapes.cc") }, "struct Square"},
		{"go", func(t *testing.T) string { return testprog.Build(t, "go/pgoprog") }, "500", "main.round",
			func(t *testing.T) string { return testprog.Source(t, "go/pgoprog/main.go") }, "func round("},
	}
	for _, pr := range progs {
		t.Run(pr.name, func(t *testing.T) {
			t.Parallel()
			pb, _ := timerPProf(t, pr.bin(t), pr.arg)
			raw := goTool(t, "pprof", "-raw", pb)
			line := declLine(t, pr.src(t), pr.decl)
			re := regexp.MustCompile(`(?m)^\s+\d+: 0x[0-9a-f]+ M=\d+ ` + regexp.QuoteMeta(pr.want) + ` \S+:\d+:\d+ s=` + strconv.Itoa(line) + `$`)
			if !re.MatchString(raw) {
				t.Errorf("no location of %s with its start line %d in go tool pprof -raw:\n%s", pr.want, line, raw)
			}
			if !strings.Contains(raw, "Build ID: ") && !regexp.MustCompile(`(?m)^1: 0x\S+ \S+ \S+`).MatchString(raw) {
				t.Errorf("the main mapping has no build-id:\n%s", raw)
			}
		})
	}
}

// TestPProfMatchesReportLBRFixture checks the same agreement of -top on a
// real LBR recording (perf record -b -g on real hardware) by its sampled
// cycles, and that its measured call counts are a calls/count type.
func TestPProfMatchesReportLBRFixture(t *testing.T) {
	t.Parallel() // reads a fixture, writes its own files
	needGoTool(t)
	fx := filepath.Join(fixtures.Dir(t), "perf_data_converter", "perf.data.callgraph_and_branch-3.8")
	pb := filepath.Join(t.TempDir(), "lbr.pb.gz")
	if r := hwprof(t, "report", "-i", fx, "--format", "pprof", "-o", pb); r.code != 0 {
		t.Fatalf("report --format pprof: exit %d\n%s", r.code, r.stderr)
	}
	rep := runReportJSON(t, "-i", fx)
	if rep.Recording.Source != "lbr" {
		t.Fatalf("source %q, want lbr", rep.Recording.Source)
	}
	checkTopAgrees(t, rep, pprofTop(t, pb, "cycles"))
	var total uint64
	for _, f := range rep.Functions {
		if f.Calls != nil {
			total += *f.Calls
		}
	}
	// This recording's branch stacks (perf record -b: any branch) give
	// hwprof no call counts; a pprof then has no calls/count either.
	raw := goTool(t, "pprof", "-raw", pb)
	if has := strings.Contains(raw, "calls/count"); has != (total > 0) {
		t.Errorf("hwprof counts %d calls, the pprof has calls/count: %v", total, has)
	}
}

// declLine is the line number of the first line of src that starts with
// prefix (after indentation).
func declLine(t *testing.T, src, prefix string) int {
	t.Helper()
	for i, l := range strings.Split(src, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), prefix) {
			return i + 1
		}
	}
	t.Fatalf("no line starts with %q", prefix)
	return 0
}

// preprofileEdge finds the edge caller -> callee in go tool preprofile's
// output (the compiler's own reading of a PGO profile: caller, callee,
// then "call-site-offset weight") and returns its weight, -1 if absent.
func preprofileEdge(out, caller, callee string) int64 {
	lines := strings.Split(out, "\n")
	var w int64 = -1
	for i := 1; i+2 < len(lines); i += 3 {
		if lines[i] == caller && lines[i+1] == callee {
			f := strings.Fields(lines[i+2])
			if len(f) == 2 {
				n, _ := strconv.ParseInt(f[1], 10, 64)
				w = max(w, 0) + n
			}
		}
	}
	return w
}

// pgoExact is the exact recording of pgoprog that TestGoPGOLive and
// TestGoPGOFromPProfLive both read, made once per test process.
var pgoExact struct {
	once sync.Once
	data string
	r    result
}

// pgoExactRecording returns the shared exact recording of bin, the
// built go/pgoprog: the calls of main.* for 300 ms of its CPU time,
// with --max-slowdown 0 (every probe kept). Tests only read it.
func pgoExactRecording(t *testing.T, bin string) string {
	t.Helper()
	pgoExact.once.Do(func() {
		pgoExact.data = filepath.Join(filepath.Dir(workloadData), "pgoprog-exact.data")
		pgoExact.r = result{code: -1, stderr: "the recording did not run"} // until it did
		pgoExact.r = hwprof(t, "record", "-q", "--source", "exact", "--max-slowdown", "0", "--probe-filter", `^main\.`, "-o", pgoExact.data, "--", bin, "300")
	})
	if pgoExact.r.code != 0 {
		t.Fatalf("record --source exact: exit %d\n%s", pgoExact.r.code, pgoExact.r.stderr)
	}
	return pgoExact.data
}

// TestGoPGOLive records the Go workload with hwprof (the exact source for
// measured call counts, the timer for time), writes each recording as a
// profile for go build -pgo, and checks that the Go toolchain takes it:
// go tool preprofile (the compiler's reader) sees the hot edges with the
// weights hwprof measured, and the compiler, given the exact profile
// (testprog.CompileGo: the main package compiled as go build -pgo compiles
// it, without rebuilding the standard library), inlines the hot call the
// profile names (-d=pgodebug=1). scripts/bench-pgo.sh makes the whole
// go build -pgo builds, with each kind of profile, and times them.
func TestGoPGOLive(t *testing.T) {
	t.Parallel() // its own files; it records exact in hwprof processes of its own
	needPerfEvents(t)
	needUprobes(t)
	bin := testprog.Build(t, "go/pgoprog")
	dir := t.TempDir()

	exact := pgoExactRecording(t, bin)
	rep := runReportJSON(t, "-i", exact)
	_, mixCalls, ok := rep.edge("main.round", "main.mix")
	if !ok || mixCalls == 0 {
		t.Fatalf("the exact recording has no calls main.round -> main.mix: %+v", rep.Edges)
	}
	exactPGO := filepath.Join(dir, "exact.pgo")
	if r := hwprof(t, "report", "-i", exact, "--pgo", "--pgo-weight", "calls", "-o", exactPGO); r.code != 0 {
		t.Fatalf("report --pgo: exit %d\n%s", r.code, r.stderr)
	}
	pre := goTool(t, "preprofile", "-i", exactPGO)
	if w := preprofileEdge(pre, "main.round", "main.mix"); w != int64(mixCalls) {
		t.Errorf("go tool preprofile gives main.round -> main.mix weight %d, hwprof measured %d calls\n%s", w, mixCalls, pre)
	}

	timer := filepath.Join(dir, "timer.data")
	// 500 ms of CPU time: hundreds of samples, for one edge of weight > 0
	if r := hwprof(t, "record", "-q", "-g", "-o", timer, "--", bin, "500"); r.code != 0 {
		t.Fatalf("record: exit %d\n%s", r.code, r.stderr)
	}
	timerPGO := filepath.Join(dir, "timer.pgo")
	if r := hwprof(t, "report", "-i", timer, "--format", "pgo", "--pgo-weight", "time", "-o", timerPGO); r.code != 0 {
		t.Fatalf("report --format pgo: exit %d\n%s", r.code, r.stderr)
	}
	pre = goTool(t, "preprofile", "-i", timerPGO)
	if w := preprofileEdge(pre, "main.main", "main.round"); w <= 0 {
		t.Errorf("go tool preprofile of the timer profile has no main.main -> main.round edge:\n%s", pre)
	}

	pgoBin, out := testprog.CompileGo(t, "go/pgoprog", "-pgoprofile="+exactPGO, "-d=pgodebug=1")
	re := regexp.MustCompile(`(?m)^hot-budget check allows inlining for call main\.mix \(cost \d+\) at \S+:\d+:\d+ in function main\.round$`)
	if !re.MatchString(out) {
		t.Fatalf("the compiler did not list the hot call main.round -> main.mix from hwprof's profile:\n%s", out)
	}

	// The second PGO cycle: in the PGO build mix is inlined into round,
	// so its time is sampled at instructions of round whose inlined frame
	// is mix. The timer profile of that build keeps the frame (a leaf
	// line, as runtime/pprof gives it), so that the compiler still sees
	// the hot call main.round -> main.mix.
	timer2 := filepath.Join(dir, "timer2.data")
	if r := hwprof(t, "record", "-q", "-g", "-o", timer2, "--", pgoBin, "500"); r.code != 0 {
		t.Fatalf("record the PGO build: exit %d\n%s", r.code, r.stderr)
	}
	timer2PGO := filepath.Join(dir, "timer2.pgo")
	if r := hwprof(t, "report", "-i", timer2, "--format", "pgo", "-o", timer2PGO); r.code != 0 {
		t.Fatalf("report --format pgo of the PGO build: exit %d\n%s", r.code, r.stderr)
	}
	pre = goTool(t, "preprofile", "-i", timer2PGO)
	if w := preprofileEdge(pre, "main.round", "main.mix"); w <= 0 {
		t.Errorf("go tool preprofile of the PGO build's timer profile has no main.round -> main.mix edge (mix inlined into round):\n%s", pre)
	}
}

// TestGoPGOFromPProfLive: `hwprof report --format pprof` of an exact
// recording works with go build -pgo, as the README says: go tool
// preprofile (the compiler's reader, which weighs edges by samples/count)
// gives main.round -> main.mix the calls hwprof measured, and the
// compiler given the profile inlines that hot call. The compiler runs on
// the main package alone (testprog.CompileGo): no go build -pgo here.
func TestGoPGOFromPProfLive(t *testing.T) {
	t.Parallel() // its own files; it records exact in hwprof processes of its own
	needUprobes(t)
	needGoTool(t)
	bin := testprog.Build(t, "go/pgoprog")
	dir := t.TempDir()
	data := pgoExactRecording(t, bin)
	_, mixCalls, ok := runReportJSON(t, "-i", data).edge("main.round", "main.mix")
	if !ok || mixCalls == 0 {
		t.Fatalf("the exact recording has no calls main.round -> main.mix")
	}
	pb := filepath.Join(dir, "exact.pb.gz")
	if r := hwprof(t, "report", "-i", data, "--format", "pprof", "-o", pb); r.code != 0 {
		t.Fatalf("report --format pprof: exit %d\n%s", r.code, r.stderr)
	}
	pre := goTool(t, "preprofile", "-i", pb)
	if w := preprofileEdge(pre, "main.round", "main.mix"); w != int64(mixCalls) {
		t.Errorf("go tool preprofile gives main.round -> main.mix weight %d, hwprof measured %d calls\n%s", w, mixCalls, pre)
	}
	_, out := testprog.CompileGo(t, "go/pgoprog", "-pgoprofile="+pb, "-d=pgodebug=1")
	re := regexp.MustCompile(`(?m)^hot-budget check allows inlining for call main\.mix \(cost \d+\) at \S+:\d+:\d+ in function main\.round$`)
	if !re.MatchString(out) {
		t.Errorf("the compiler given the pprof profile did not inline the hot call main.round -> main.mix:\n%s", out)
	}
}

// TestPProfInlinedLeavesLive records a C program whose hot code is
// inlined (testdata/c/inlined.c at -O2: mix inlined three times into
// outer, which does a fourth of the work itself) and checks that hwprof's
// pprof keeps the inlined frames of the sampled instructions, as
// runtime/pprof does: go tool pprof -top shows mix with flat weight of
// its own, more than outer's, the two summing to outer's self share in
// hwprof's report, and -traces shows mix above outer. With -noinlines
// (inlined frames given to their function, as hwprof folds them) -top and
// -traces agree with the report as for every program.
func TestPProfInlinedLeavesLive(t *testing.T) {
	t.Parallel()
	needPerfEvents(t)
	needGoTool(t)
	bin := testprog.Build(t, "c/inlined.c", "-g", "-O2", "-fno-omit-frame-pointer")
	pb, rep := timerPProf(t, bin, "600")

	var outerSelf float64
	for _, f := range rep.Functions {
		if f.Name == "outer" {
			outerSelf = 100 * f.Self
		}
	}
	top := goTool(t, "pprof", "-top", "-nodefraction=0", "-nodecount=1000000", "-sample_index=cpu", pb)
	rows := map[string]pprofShare{}
	for line := range strings.SplitSeq(top, "\n") {
		if m := topRowRE.FindStringSubmatch(line); m != nil {
			flat, _ := strconv.ParseFloat(m[1], 64)
			cum, _ := strconv.ParseFloat(m[2], 64)
			rows[strings.TrimSpace(m[3])] = pprofShare{flat, cum}
		}
	}
	mix, ok := rows["mix (inline)"]
	if !ok {
		t.Fatalf("go tool pprof -top shows no inlined mix:\n%s", top)
	}
	outer := rows["outer"]
	if mix.flat <= outer.flat {
		t.Errorf("mix (inline) flat %.2f%% is not above outer's %.2f%% (3/4 of outer's work is mix's):\n%s", mix.flat, outer.flat, top)
	}
	if math.Abs(mix.flat+outer.flat-outerSelf) > 0.02 {
		t.Errorf("mix (inline) flat %.2f%% + outer flat %.2f%% is not outer's self %.4f%% in hwprof's report", mix.flat, outer.flat, outerSelf)
	}

	traces := goTool(t, "pprof", "-traces", pb)
	above := regexp.MustCompile(`(?m)^\s+\S+\s+mix \(inline\)\n\s+outer\n`)
	if !above.MatchString(traces) {
		t.Errorf("no go tool pprof -traces stack with mix (inline) as leaf above outer:\n%s", traces)
	}
}

// timerPProf records bin (with arg) with the timer and frame-pointer
// stacks, writes its pprof profile, checks that go tool pprof's top and
// traces agree with hwprof report's, and returns the profile's path and
// the JSON report.
func timerPProf(t *testing.T, bin, arg string) (string, *reportJSON) {
	t.Helper()
	dir := t.TempDir()
	data := filepath.Join(dir, "timer.data")
	if r := hwprof(t, "record", "-q", "-g", "-o", data, "--", bin, arg); r.code != 0 {
		t.Fatalf("record: exit %d\n%s", r.code, r.stderr)
	}
	pb := filepath.Join(dir, "timer.pb.gz")
	if r := hwprof(t, "report", "-i", data, "--format", "pprof", "-o", pb); r.code != 0 {
		t.Fatalf("report --format pprof: exit %d\n%s", r.code, r.stderr)
	}
	rep := runReportJSON(t, "-i", data)
	checkTopAgrees(t, rep, pprofTop(t, pb, "cpu"))
	checkTracesAgree(t, rep, pprofTraces(t, pb))
	return pb, rep
}
