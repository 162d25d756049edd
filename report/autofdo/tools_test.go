package autofdo_test

import (
	"bytes"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/ccmap"
	"github.com/hwprof/hwprof/internal/engine"
	"github.com/hwprof/hwprof/internal/fixtures"
	"github.com/hwprof/hwprof/internal/testenv"
	"github.com/hwprof/hwprof/internal/testprog"
)

// The tests of this file run hwprof as users do, and the tools that read
// its profiles (clang-19, llvm-profdata-19, create_llvm_prof, gcc,
// perf2bolt-19, llvm-bolt-19), each skipped only where a tool is not
// installed (.ci/run installs them). They live here, apart from
// cmd/hwprof's, so that their builds and recordings have a test binary
// (and a time limit) of their own.

// hwprofBin is hwprof, built once for the tests.
var hwprofBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "hwprof-autofdo-test")
	if err != nil {
		panic(err)
	}
	hwprofBin = filepath.Join(dir, "hwprof")
	build := exec.Command("go", "build", "-o", hwprofBin, "github.com/hwprof/hwprof/cmd/hwprof")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		panic("build hwprof: " + err.Error())
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// exitUsage is hwprof's exit status for bad flags or arguments.
const exitUsage = 2

type result struct {
	code           int
	stdout, stderr string
}

// hwprof runs the hwprof binary with args.
func hwprof(t *testing.T, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command(hwprofBin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run %q: %v", cmd.Args, err)
	}
	return r
}

// needPerfEvents skips when this machine cannot open a cpu-clock event,
// needUprobes when it cannot place uprobes (both checked without hwprof).
func needPerfEvents(t *testing.T) { t.Helper(); testenv.PerfEvents(t) }
func needUprobes(t *testing.T)    { t.Helper(); testenv.Uprobes(t) }

// exactCalls returns the calls caller -> callee in the exact recording
// rec, summed over call sites.
func exactCalls(t *testing.T, rec, caller, callee string) uint64 {
	t.Helper()
	p, err := engine.Load(rec, engine.LoadOptions{})
	if p == nil {
		t.Fatal(err)
	}
	var n uint64
	for _, e := range p.Map.Edges(ccmap.Calls) {
		if p.Funcs[e.Site.Caller].Name == caller && p.Funcs[e.Callee].Name == callee {
			n += e.Calls
		}
	}
	return n
}

// fdoFlags build testdata/c/fdobench.c as a program to profile for
// sample-based FDO: DWARF 4 (what the autofdo package's create_llvm_prof
// reads), discriminators, frame pointers for the timer's stacks.
var fdoFlags = []string{"-O2", "-gdwarf-4", "-fdebug-info-for-profiling", "-fno-omit-frame-pointer"}

// fdoRecordings records fdobench with the timer (0.5 s of its CPU) and with
// the exact source on its four functions (0.2 s), and returns the binary
// and the two recordings.
func fdoRecordings(t *testing.T) (bin, timer, exact string) {
	t.Helper()
	needPerfEvents(t)
	needUprobes(t)
	bin = testprog.BuildCC(t, "clang-19", "c/fdobench.c", fdoFlags...)
	dir := t.TempDir()
	timer, exact = filepath.Join(dir, "timer.data"), filepath.Join(dir, "exact.data")
	if r := hwprof(t, "record", "-q", "-g", "-o", timer, "--", bin, "500"); r.code != 0 {
		t.Fatalf("record: exit %d\n%s", r.code, r.stderr)
	}
	if r := hwprof(t, "record", "-q", "--source", "exact", "--max-slowdown", "0", "--probe-filter", "^(square|polygon|classify|round_shapes)$",
		"-o", exact, "--", bin, "200"); r.code != 0 {
		t.Fatalf("record --source exact: exit %d\n%s", r.code, r.stderr)
	}
	return bin, timer, exact
}

// afdoLines reads a text sample profile into counts by "function line"
// (top-level functions' body lines: "offset[.disc]"), and call targets by
// "function line target". A line at the margin that is no function's
// ("name:total:head") and the lines under it are left out:
// create_llvm_prof 0.19 names some inlined functions with bytes of garbage,
// new lines among them at times.
func afdoLines(text string) map[string]uint64 {
	out := map[string]uint64{}
	fn := ""
	for _, l := range strings.Split(text, "\n") {
		switch {
		case l == "":
		case l[0] != ' ':
			fn = ""
			if m := afdoHead.FindStringSubmatch(l); m != nil {
				fn = m[1]
			}
		case fn == "":
		case l[1] != ' ':
			f := strings.Fields(l)
			if len(f) < 2 {
				continue
			}
			n, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil {
				continue // an inlined function's line
			}
			loc := strings.TrimSuffix(f[0], ":")
			out[fn+" "+loc] = n
			for _, tc := range f[2:] {
				name, c, _ := strings.Cut(tc, ":")
				n, _ := strconv.ParseUint(c, 10, 64)
				out[fn+" "+loc+" "+name] = n
			}
		}
	}
	return out
}

// afdoHead is a function's first line in a text sample profile.
var afdoHead = regexp.MustCompile(`^([^ :]+):[0-9]+:[0-9]+$`)

func runTool(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestAutoFDOLive: the sample profile of a timer and an exact recording of
// fdobench is read by llvm-profdata-19 with the counts hwprof wrote (the
// call targets of the indirect call: the exact call counts), and clang-19
// builds with it without a warning about the profile, promoting the
// indirect call to its frequent target.
func TestAutoFDOLive(t *testing.T) {
	profdata := testenv.Tool(t, "llvm-profdata-19")
	_, timer, exact := fdoRecordings(t)
	dir := t.TempDir()
	afdo := filepath.Join(dir, "prog.afdo")
	if r := hwprof(t, "report", "-i", timer, "-i", exact, "--format", "autofdo", "-o", afdo); r.code != 0 {
		t.Fatalf("report --format autofdo: exit %d\n%s", r.code, r.stderr)
	}
	square, polygon := exactCalls(t, exact, "round_shapes", "square"), exactCalls(t, exact, "round_shapes", "polygon")
	if polygon == 0 || square <= polygon {
		t.Fatalf("exact recording: round_shapes -> square %d, -> polygon %d calls: want both, square more", square, polygon)
	}

	// The extensible binary format through llvm-profdata, and back to text.
	ext, back := filepath.Join(dir, "prog.extbinary"), filepath.Join(dir, "back.afdo")
	runTool(t, profdata, "merge", "--sample", "--extbinary", afdo, "-o", ext)
	runTool(t, profdata, "merge", "--sample", "--text", ext, "-o", back)
	mine, theirs := afdoLines(readFile(t, afdo)), afdoLines(readFile(t, back))
	if len(mine) == 0 {
		t.Fatalf("no lines in the profile:\n%s", readFile(t, afdo))
	}
	for k, n := range mine {
		if n > 0 && theirs[k] != n {
			t.Errorf("%s: hwprof wrote %d, llvm-profdata read %d", k, n, theirs[k])
		}
	}
	show := runTool(t, profdata, "show", "--sample", ext)
	for _, want := range []string{"square:" + strconv.FormatUint(square, 10), "polygon:" + strconv.FormatUint(polygon, 10)} {
		if !strings.Contains(show, want) {
			t.Errorf("llvm-profdata show --sample has no call target %s (the exact calls):\n%s", want, show)
		}
	}

	// clang-19 takes it without a word about the profile, and promotes
	// the indirect call to square.
	src := filepath.Join(mustRoot(t), "testdata", "c", "fdobench.c")
	out := runTool(t, "clang-19", append(append([]string{}, fdoFlags...), "-fprofile-sample-use="+afdo,
		"-Wprofile-instr-out-of-date", "-Wprofile-instr-unprofiled", "-Wprofile-instr-missing", "-Rpass=pgo-icall-prom|sample-profile-icp|sample-profile-inline",
		"-c", "-o", filepath.Join(dir, "fdobench.o"), src)...)
	if strings.Contains(out, "warning") {
		t.Errorf("clang-19 warned with hwprof's profile:\n%s", out)
	}
	if !regexp.MustCompile(`Promote indirect call to square with count \d+`).MatchString(out) {
		t.Errorf("clang-19 did not promote the indirect call to square with hwprof's profile:\n%s", out)
	}
}

// TestAutoFDOTimerMatchesCreateLLVMProf: on the same timer recording
// (cpu-clock without callchains),
// hwprof's line counts are those of the autofdo package's
// create_llvm_prof --use_lbr=false (the most sampled instruction of each
// line, times its duplication factor).
func TestAutoFDOTimerMatchesCreateLLVMProf(t *testing.T) {
	create := testenv.Tool(t, "create_llvm_prof")
	needPerfEvents(t)
	bin := testprog.BuildCC(t, "clang-19", "c/fdobench.c", fdoFlags...)
	dir := t.TempDir()
	// Without -g: create_llvm_prof 0.19 reads no user registers (the
	// stack copy of the leaf repair). A fixed period: create_llvm_prof
	// counts samples, hwprof weight over the mean period, which are the
	// same only when every sample weighs as much.
	timer := filepath.Join(dir, "timer.data")
	if r := hwprof(t, "record", "-q", "-e", "cpu-clock", "-c", "250000", "-o", timer, "--", bin, "500"); r.code != 0 {
		t.Fatalf("record: exit %d\n%s", r.code, r.stderr)
	}
	mine, ref := filepath.Join(dir, "hwprof.afdo"), filepath.Join(dir, "ref.afdo")
	if r := hwprof(t, "report", "-i", timer, "--format", "autofdo", "-o", mine); r.code != 0 {
		t.Fatalf("report --format autofdo: exit %d\n%s", r.code, r.stderr)
	}
	runTool(t, create, "--use_lbr=false", "--binary="+bin, "--profile="+timer, "--out="+ref, "--format=text")
	m, r := afdoLines(readFile(t, mine)), afdoLines(readFile(t, ref))
	compared := 0
	for k, n := range r {
		if strings.Count(k, " ") != 1 || n == 0 {
			continue
		}
		if off, _, _ := strings.Cut(k[strings.IndexByte(k, ' ')+1:], "."); len(off) > 0 {
			// An offset below 0 (16 bits, from 0x8000): a line before the
			// function's, where create_llvm_prof files instructions of
			// line 0 (no source line), which hwprof leaves out.
			if o, err := strconv.ParseUint(off, 10, 16); err == nil && o >= 0x8000 {
				continue
			}
		}
		compared++
		if m[k] != n {
			t.Errorf("%s: create_llvm_prof %d, hwprof %d", k, n, m[k])
		}
	}
	if compared < 5 {
		t.Errorf("create_llvm_prof gave %d lines with counts:\n%s", compared, readFile(t, ref))
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mustRoot(t *testing.T) string {
	t.Helper()
	root, err := testprog.Root()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestBOLTNoLBR: perf2bolt-19 in its no-LBR mode reads a timer recording
// hwprof wrote (cpu-clock without callchains: perf2bolt reads `perf
// script`'s one line per sample, which a callchain breaks, perf's own
// recordings too), and llvm-bolt-19 optimizes fdobench with the profile it
// makes, and with hwprof's own of the recording (--format bolt): the
// rewritten programs compute what the original does.
func TestBOLTNoLBR(t *testing.T) {
	perf2bolt, bolt := testenv.Tool(t, "perf2bolt-19"), testenv.Tool(t, "llvm-bolt-19")
	testenv.Tool(t, "perf") // perf2bolt reads the recording through perf script
	needPerfEvents(t)
	bin := testprog.BuildCC(t, "clang-19", "c/fdobench.c", fdoFlags...)
	dir := t.TempDir()
	timer, fdata, opt := filepath.Join(dir, "timer.data"), filepath.Join(dir, "prog.fdata"), filepath.Join(dir, "fdobench.bolt")
	if r := hwprof(t, "record", "-q", "-e", "cpu-clock", "-o", timer, "--", bin, "500"); r.code != 0 {
		t.Fatalf("record: exit %d\n%s", r.code, r.stderr)
	}
	// Named perf2bolt-19, the tool runs as llvm-bolt unless told to only
	// aggregate.
	out := runTool(t, perf2bolt, "-aggregate-only", "-nl", "-p", timer, "-o", fdata, bin)
	m := regexp.MustCompile(`PERF2BOLT: read (\d+) samples`).FindStringSubmatch(out)
	if m == nil || m[1] == "0" {
		t.Fatalf("perf2bolt read no samples of hwprof's recording:\n%s", out)
	}
	if !strings.Contains(readFile(t, fdata), "round_shapes") {
		t.Errorf("perf2bolt's profile has no round_shapes:\n%s", readFile(t, fdata))
	}
	out = runTool(t, bolt, bin, "-o", opt, "-data="+fdata, "-reorder-blocks=ext-tsp")
	m = regexp.MustCompile(`BOLT-INFO: (\d+) out of \d+ functions in the binary \([^)]*\) have non-empty execution profile`).FindStringSubmatch(out)
	if m == nil || m[1] == "0" {
		t.Fatalf("llvm-bolt used no profile of hwprof's recording:\n%s", out)
	}
	want, got := runTool(t, bin, "rounds=100"), runTool(t, opt, "rounds=100")
	if strings.Fields(want)[1] != strings.Fields(got)[1] {
		t.Errorf("the BOLT-optimized program computes %q, the original %q", got, want)
	}
	// hwprof writes the same kind of profile itself (--format bolt): the
	// sampled addresses of the program's functions after a "no_lbr" line.
	mine, opt2 := filepath.Join(dir, "hwprof.fdata"), filepath.Join(dir, "fdobench.bolt2")
	if r := hwprof(t, "report", "-i", timer, "--format", "bolt", "-o", mine); r.code != 0 {
		t.Fatalf("report --format bolt: exit %d\n%s", r.code, r.stderr)
	}
	if text := readFile(t, mine); !strings.HasPrefix(text, "no_lbr cpu-clock\n") || !strings.Contains(text, "\n1 round_shapes ") {
		t.Errorf("hwprof's BOLT profile is not a no_lbr one with round_shapes:\n%s", text)
	}
	if profiled, ignored := boltProfiled(t, bolt, bin, mine, opt2); profiled == 0 || ignored != 0 {
		t.Errorf("llvm-bolt: %d functions with a profile of hwprof's, %d profiles ignored", profiled, ignored)
	}
	if got := runTool(t, opt2, "rounds=100"); strings.Fields(want)[1] != strings.Fields(got)[1] {
		t.Errorf("the program BOLT-optimized with hwprof's profile computes %q, the original %q", got, want)
	}
}

// TestAutoFDOLBRFixture: the sample profile of a real LBR recording (the
// autofdo project's test.lbr of test.binary, every taken branch) counts
// lines as create_llvm_prof counts them on the same file: each line its
// most executed instruction's count in the ranges between taken
// branches, and each call site its calls taken, a jump to another
// function's entry (a tail call) included. (create_llvm_prof 0.19
// names the functions inlined in this old binary with bytes of garbage,
// so only the top-level lines are compared.) llvm-profdata-19 reads it.
func TestAutoFDOLBRFixture(t *testing.T) {
	auto := filepath.Join(fixtures.Dir(t), "autofdo")
	dir := t.TempDir()
	symfs := filepath.Join(dir, "symfs")
	bin := filepath.Join(symfs, "export", "hda3", "tmp", "test.binary")
	fixtures.Place(t, filepath.Join(auto, "test.binary"), bin)
	afdo := filepath.Join(dir, "test.afdo")
	if r := hwprof(t, "report", "-i", filepath.Join(auto, "test.lbr"), "--symfs", symfs, "--format", "autofdo", "-o", afdo); r.code != 0 {
		t.Fatalf("report --format autofdo: exit %d\n%s", r.code, r.stderr)
	}
	mine := afdoLines(readFile(t, afdo))
	if mine["longest_match 42"] == 0 {
		t.Fatalf("no count for longest_match's line 42 (its loop):\n%s", readFile(t, afdo))
	}
	if profdata, err := exec.LookPath("llvm-profdata-19"); err == nil {
		runTool(t, profdata, "merge", "--sample", "--extbinary", afdo, "-o", filepath.Join(dir, "test.extbinary"))
	}
	create, err := exec.LookPath("create_llvm_prof")
	if err != nil {
		t.Skipf("create_llvm_prof not installed: %v", err)
	}
	ref := filepath.Join(dir, "ref.afdo")
	runTool(t, create, "--binary="+bin, "--profile="+filepath.Join(auto, "test.lbr"), "--out="+ref, "--format=text")
	compared := 0
	for k, n := range afdoLines(readFile(t, ref)) {
		if n == 0 {
			continue
		}
		compared++
		// A call target: hwprof adds up the calls of a line's call
		// instructions to one callee, create_llvm_prof keeps one's.
		if target := strings.Count(k, " ") == 2; mine[k] != n && (!target || mine[k] < n) {
			t.Errorf("%s: create_llvm_prof %d, hwprof %d", k, n, mine[k])
		}
	}
	if compared < 100 {
		t.Errorf("only %d lines with counts compared", compared)
	}
}

// TestAutoFDOGCCLive: GCC 12 reads hwprof's gcov-format profile
// (--format autofdo-gcov) of a timer and an exact recording of fdobench
// built by gcc, without a word about the profile, and makes the indirect
// call a direct call to its frequent target.
func TestAutoFDOGCCLive(t *testing.T) {
	gcc := testenv.Tool(t, "gcc")
	needPerfEvents(t)
	needUprobes(t)
	flags := []string{"-O2", "-gdwarf-4", "-fno-omit-frame-pointer"}
	bin := testprog.Build(t, "c/fdobench.c", flags...)
	dir := t.TempDir()
	timer, exact, prof := filepath.Join(dir, "timer.data"), filepath.Join(dir, "exact.data"), filepath.Join(dir, "prog.gcov")
	if r := hwprof(t, "record", "-q", "-g", "-o", timer, "--", bin, "500"); r.code != 0 {
		t.Fatalf("record: exit %d\n%s", r.code, r.stderr)
	}
	if r := hwprof(t, "record", "-q", "--source", "exact", "--max-slowdown", "0", "--probe-filter", "^(square|polygon|classify|round_shapes)$",
		"-o", exact, "--", bin, "200"); r.code != 0 {
		t.Fatalf("record --source exact: exit %d\n%s", r.code, r.stderr)
	}
	if r := hwprof(t, "report", "-i", timer, "-i", exact, "--format", "autofdo-gcov", "-o", prof); r.code != 0 {
		t.Fatalf("report --format autofdo-gcov: exit %d\n%s", r.code, r.stderr)
	}
	src := filepath.Join(mustRoot(t), "testdata", "c", "fdobench.c")
	out := runTool(t, gcc, append(flags, "-fauto-profile="+prof, "-fopt-info-ipa", "-Wall", "-c", "-o", filepath.Join(dir, "fdobench.o"), src)...)
	if strings.Contains(out, "warning") || strings.Contains(out, "error") {
		t.Errorf("gcc warned with hwprof's profile:\n%s", out)
	}
	if !regexp.MustCompile(`Indirect call -> direct call \S+ => square`).MatchString(out) {
		t.Errorf("gcc did not make the indirect call a direct call to square with hwprof's profile:\n%s", out)
	}
}

// TestFdoCommandLive: hwprof fdo records a timer run and an exact run of
// the hottest functions and writes the profile, the recordings beside it;
// the indirect call's targets in the profile are the exact run's calls,
// or, when the exact run stopped early (--max-slowdown), the site's
// samples shared out in the proportions of its calls.
func TestFdoCommandLive(t *testing.T) {
	needPerfEvents(t)
	needUprobes(t)
	bin := testprog.BuildCC(t, "clang-19", "c/fdobench.c", fdoFlags...)
	afdo := filepath.Join(t.TempDir(), "prog.afdo")
	r := hwprof(t, "fdo", "-o", afdo, "--", bin, "500")
	if r.code != 0 {
		t.Fatalf("fdo: exit %d\n%s", r.code, r.stderr)
	}
	partial := strings.Contains(r.stderr, "the exact run stopped early")
	if partial && (strings.Contains(r.stderr, "--probe-filter") || !strings.Contains(r.stderr, "--hot N")) {
		t.Errorf("fdo's exact run stopped early: the way out should be in fdo's flags (--hot), not record's:\n%s", r.stderr)
	}
	square := exactCalls(t, afdo+".exact.data", "round_shapes", "square")
	polygon := exactCalls(t, afdo+".exact.data", "round_shapes", "polygon")
	if square == 0 || polygon == 0 {
		t.Fatalf("the exact run counted %d calls round_shapes -> square, %d -> polygon", square, polygon)
	}
	lines := afdoLines(readFile(t, afdo))
	found := false
	for k, n := range lines {
		site, ok := strings.CutSuffix(k, " square")
		if !strings.HasPrefix(k, "round_shapes ") || !ok {
			continue
		}
		found = true
		switch p := lines[site+" polygon"]; {
		case !partial && (n != square || p != polygon):
			t.Errorf("%s: square %d, polygon %d in the profile; the exact run counted %d and %d calls", site, n, p, square, polygon)
		case partial && math.Abs(float64(n)/float64(n+p)-float64(square)/float64(square+polygon)) > 0.01:
			t.Errorf("%s: square %d, polygon %d in the profile (the exact run stopped early); the exact run's shares are %d and %d calls", site, n, p, square, polygon)
		}
	}
	if !found {
		t.Errorf("no call target square in round_shapes:\n%s", readFile(t, afdo))
	}
	if r := hwprof(t, "fdo", "-o", afdo); r.code != exitUsage || !strings.Contains(r.stderr, "no program to run") {
		t.Errorf("fdo without a program: exit %d, %q; want %d and a message", r.code, r.stderr, exitUsage)
	}
	// A program that fails is no run to optimize for: fdo stops with its
	// status, says so, and keeps the recording.
	failed := filepath.Join(t.TempDir(), "failed.afdo")
	if r := hwprof(t, "fdo", "-o", failed, "--", "sh", "-c", "exit 3"); r.code != 3 || !strings.Contains(r.stderr, "the program ended with status 3 in the timer run") {
		t.Errorf("fdo of a program that exits 3: exit %d, %q; want 3 and a message", r.code, r.stderr)
	}
	if _, err := os.Stat(failed + ".timer.data"); err != nil {
		t.Errorf("fdo of a program that exits 3: the timer recording is not kept: %v", err)
	}
	if _, err := os.Stat(failed); err == nil {
		t.Errorf("fdo of a program that exits 3 wrote a profile")
	}
}

// TestAutoFDOCPlusPlusLive: C++ names. hwprof fdo of testdata/cpp/fdobench.cc
// (a virtual call in a namespace, a template) names functions and call
// targets by their mangled names, which llvm-profdata-19 reads and with
// which clang++-19 builds without a word about the profile, promoting the
// virtual call to its frequent override; g++ 12 reads the gcov form of a
// profile of its own build and makes the virtual call a direct call.
func TestAutoFDOCPlusPlusLive(t *testing.T) {
	profdata := testenv.Tool(t, "llvm-profdata-19")
	clangxx := testenv.Tool(t, "clang++-19")
	needPerfEvents(t)
	needUprobes(t)
	root := mustRoot(t)
	src := filepath.Join(root, "testdata", "cpp", "fdobench.cc")
	flags := append([]string{"-I", filepath.Join(root, "testdata", "c")}, fdoFlags...)
	bin := testprog.BuildCC(t, "clang++-19", "cpp/fdobench.cc", flags...)
	dir := t.TempDir()
	afdo := filepath.Join(dir, "prog.afdo")
	if r := hwprof(t, "fdo", "-o", afdo, "--", bin, "300"); r.code != 0 {
		t.Fatalf("fdo: exit %d\n%s", r.code, r.stderr)
	}
	const (
		roundShapes = "_ZN3geo12round_shapesEPKPNS_5ShapeEi"
		square      = "_ZNK3geo6Square4areaEv"
		polygon     = "_ZNK3geo7Polygon4areaEv"
	)
	text := readFile(t, afdo)
	lines := afdoLines(text)
	site := ""
	for k := range lines {
		if s, ok := strings.CutSuffix(k, " "+square); ok && strings.HasPrefix(k, roundShapes+" ") {
			site = s
		}
	}
	if site == "" || lines[site+" "+polygon] == 0 || lines[site+" "+square] <= lines[site+" "+polygon] {
		t.Fatalf("no virtual call in %s with targets %s (most calls) and %s:\n%s", roundShapes, square, polygon, text)
	}
	runTool(t, profdata, "merge", "--sample", "--extbinary", afdo, "-o", filepath.Join(dir, "prog.extbinary"))
	out := runTool(t, clangxx, append(append([]string{}, flags...), "-fprofile-sample-use="+afdo,
		"-Wprofile-instr-out-of-date", "-Wprofile-instr-unprofiled", "-Wprofile-instr-missing", "-Rpass=pgo-icall-prom",
		"-c", "-o", filepath.Join(dir, "fdobench.o"), src)...)
	if strings.Contains(out, "warning") {
		t.Errorf("clang++-19 warned with hwprof's profile:\n%s", out)
	}
	if !regexp.MustCompile(`Promote indirect call to ` + square + ` with count \d+`).MatchString(out) {
		t.Errorf("clang++-19 did not promote the virtual call to %s with hwprof's profile:\n%s", square, out)
	}

	gxx, err := exec.LookPath("g++")
	if err != nil {
		t.Logf("g++ not installed: the gcov form not tested (%v)", err)
		return
	}
	gflags := []string{"-O2", "-gdwarf-4", "-fno-omit-frame-pointer", "-I", filepath.Join(root, "testdata", "c")}
	gbin := testprog.BuildCC(t, gxx, "cpp/fdobench.cc", gflags...)
	gafdo, gcov := filepath.Join(dir, "gcc.afdo"), filepath.Join(dir, "gcc.gcov")
	if r := hwprof(t, "fdo", "-o", gafdo, "--", gbin, "300"); r.code != 0 {
		t.Fatalf("fdo of the g++ build: exit %d\n%s", r.code, r.stderr)
	}
	if r := hwprof(t, "report", "-i", gafdo+".timer.data", "-i", gafdo+".exact.data", "--format", "autofdo-gcov", "-o", gcov); r.code != 0 {
		t.Fatalf("report --format autofdo-gcov: exit %d\n%s", r.code, r.stderr)
	}
	out = runTool(t, gxx, append(gflags, "-fauto-profile="+gcov, "-fopt-info-ipa", "-Wall", "-c", "-o", filepath.Join(dir, "gcc.o"), src)...)
	if strings.Contains(out, "warning") || strings.Contains(out, "error") {
		t.Errorf("g++ warned with hwprof's profile:\n%s", out)
	}
	if !regexp.MustCompile(`fdobench\.cc:\d+:\d+: optimized: Indirect call -> direct call \S+ => area`).MatchString(out) {
		t.Errorf("g++ did not make the virtual call a direct call with hwprof's profile:\n%s", out)
	}
}
