package main

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/buildid"
	"github.com/hwprof/hwprof/internal/fixtures"
	"github.com/hwprof/hwprof/internal/testenv"
	"github.com/hwprof/hwprof/internal/testprog"
	"github.com/hwprof/hwprof/symbolize"
	"github.com/hwprof/hwprof/unwind"
)

// reportJSON is the part of the --format json output the tests read.
type reportJSON struct {
	Version   int `json:"hwprof_json"`
	Recording struct {
		Source  string `json:"source"`
		Samples uint64 `json:"samples"`
		Events  []struct {
			Name   string `json:"name"`
			Period uint64 `json:"period"`
		} `json:"events"`
		Periods []struct {
			Event  string `json:"event"`
			Period uint64 `json:"period"`
		} `json:"periods"`
	} `json:"recording"`
	Functions []struct {
		Name   string  `json:"name"`
		Object string  `json:"object"`
		Self   float64 `json:"self"`
		Total  float64 `json:"total"`
		Calls  *uint64 `json:"calls"`
	} `json:"functions"`
	Edges []struct {
		Caller, Callee string
		Callsite       struct {
			Object, Offset, File string
			Line                 int
		}
		Count  *uint64
		Weight float64
	} `json:"edges"`
	Contexts []struct {
		Path      []string
		Count     *uint64
		Weight    float64
		Callsites []*struct {
			Object, Offset, File string
			Line                 int
		}
	} `json:"contexts"`
}

func (r *reportJSON) self(name string) float64 {
	for _, f := range r.Functions {
		if f.Name == name {
			return f.Self
		}
	}
	return -1
}

// edge returns the weight and count of the edge caller -> callee (summed
// over call sites), and whether it is there.
func (r *reportJSON) edge(caller, callee string) (w float64, count uint64, ok bool) {
	for _, e := range r.Edges {
		if e.Caller == caller && e.Callee == callee {
			w += e.Weight
			if e.Count != nil {
				count += *e.Count
			}
			ok = true
		}
	}
	return w, count, ok
}

func runReportJSON(t *testing.T, args ...string) *reportJSON {
	t.Helper()
	r := hwprof(t, append([]string{"report", "--format", "json", "--top", "0"}, args...)...)
	if r.code != 0 {
		t.Fatalf("hwprof report %q: exit %d\n%s", args, r.code, r.stderr)
	}
	var rep reportJSON
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("report JSON: %v\n%s", err, r.stdout)
	}
	if rep.Version != 1 {
		t.Errorf("hwprof_json %d, want 1", rep.Version)
	}
	return &rep
}

// checkTimerShape checks a timer profile of reportProg: b hot, c cold,
// the edges of the program's call tree, no call counts.
func checkTimerShape(t *testing.T, rep *reportJSON) {
	t.Helper()
	if rep.Recording.Source != "timer" {
		t.Errorf("source %q, want timer", rep.Recording.Source)
	}
	if rep.Recording.Samples < 200 {
		t.Fatalf("only %d samples", rep.Recording.Samples)
	}
	b, c := rep.self("b"), rep.self("c")
	// b does 10/11 of the work, c 1/11; allow wide margins for a loaded machine
	if b < 0.7 || c < 0.03 || c > 0.25 {
		t.Errorf("self shares b %.3f, c %.3f; want about 0.91 and 0.09", b, c)
	}
	ab, n, ok := rep.edge("a", "b")
	mc, _, ok2 := rep.edge("main", "c")
	ma, _, ok3 := rep.edge("main", "a")
	if !ok || !ok2 || !ok3 {
		t.Fatalf("missing edges: a->b %v, main->c %v, main->a %v; edges %+v", ok, ok2, ok3, rep.Edges)
	}
	if n != 0 {
		t.Errorf("a timer profile counts calls: a->b count %d", n)
	}
	if !(ab > mc && ma > mc) {
		t.Errorf("edge weights a->b %.3f, main->a %.3f, main->c %.3f: the hot path must outweigh the cold one", ab, ma, mc)
	}
	if len(rep.Contexts) == 0 {
		t.Fatal("no contexts")
	}
	if p := rep.Contexts[0].Path; len(p) < 3 || strings.Join(p[len(p)-3:], ">") != "main>a>b" {
		t.Errorf("hottest context %v, want one ending main > a > b", p)
	}
}

// TestReportTimerLive records reportProg with hwprof (cpu-clock with
// frame-pointer callchains) and checks the JSON report's shape.
func TestReportTimerLive(t *testing.T) {
	t.Parallel()
	needPerfEvents(t)
	bin := testprog.Build(t, "c/hotpath.c", "-g", "-O0", "-fno-omit-frame-pointer")
	data := filepath.Join(t.TempDir(), "timer.data")
	// 2.5 s of CPU: at least about 300 samples even at the adaptive
	// period's largest value, 8 ms, which the budget rule reaches within
	// a second on a loaded machine (hwprof's own share of the CPU counts)
	if r := hwprof(t, "record", "-q", "-g", "-o", data, "--", bin, "2500"); r.code != 0 {
		t.Fatalf("record: exit %d\n%s", r.code, r.stderr)
	}
	rep := runReportJSON(t, "-i", data)
	checkTimerShape(t, rep)
	if len(rep.Recording.Periods) == 0 || rep.Recording.Periods[0].Period == 0 {
		t.Errorf("no period history: %+v", rep.Recording.Periods)
	}
	// the text report names the hot function
	r := hwprof(t, "report", "-i", data)
	if r.code != 0 || !strings.Contains(r.stdout, "main") || !strings.Contains(r.stdout, "b") {
		t.Errorf("text report: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	// redundancy skipping keeps the shares (weights are compensated)
	dd := runReportJSON(t, "-i", data, "--dedup-ratio", "0.2", "-j", "2")
	if d := dd.self("b") - rep.self("b"); d > 0.08 || d < -0.08 {
		t.Errorf("--dedup-ratio 0.2: b's self %.3f, all stacks %.3f", dd.self("b"), rep.self("b"))
	}
}

// TestReportExactLive records reportProg with uprobes at every function
// entry and checks the exact call counts: main -> a and main -> c once
// per round, a -> b ten times per round.
func TestReportExactLive(t *testing.T) {
	t.Parallel() // its own files; it records exact in hwprof processes of its own
	needUprobes(t)
	bin := testprog.Build(t, "c/hotpath.c", "-g", "-O0", "-fno-omit-frame-pointer")
	data := filepath.Join(t.TempDir(), "exact.data")
	r := hwprof(t, "record", "-q", "--source", "exact", "-o", data, "--", bin, "20")
	if r.code != 0 {
		t.Fatalf("record --source exact: exit %d\n%s", r.code, r.stderr)
	}
	n := roundsRun(t, r.stdout)
	rep := runReportJSON(t, "-i", data)
	if rep.Recording.Source != "exact" {
		t.Errorf("source %q, want exact", rep.Recording.Source)
	}
	for _, w := range []struct {
		caller, callee string
		count          uint64
	}{{"main", "a", n}, {"a", "b", 10 * n}, {"main", "c", n}} {
		if _, n, ok := rep.edge(w.caller, w.callee); !ok || n != w.count {
			t.Errorf("%s -> %s: %d calls (present %v), want %d", w.caller, w.callee, n, ok, w.count)
		}
	}
	found := false
	for _, c := range rep.Contexts {
		if strings.Join(c.Path, ">") == "__libc_start_call_main>main>a>b" {
			found = true
		}
	}
	if !found {
		t.Errorf("no context __libc_start_call_main > main > a > b among %+v", rep.Contexts)
	}
}

// TestReportPerfRecordFile reports a recording made by perf itself.
func TestReportPerfRecordFile(t *testing.T) {
	t.Parallel()
	perfBin, err := exec.LookPath("perf")
	if err != nil {
		t.Skip("perf not found")
	}
	bin := testprog.Build(t, "c/hotpath.c", "-g", "-O0", "-fno-omit-frame-pointer")
	data := filepath.Join(t.TempDir(), "perf.data")
	if out, err := exec.Command(perfBin, "record", "-q", "-e", "cpu-clock", "-g", "-o", data, "--", bin, "1000").CombinedOutput(); err != nil {
		t.Skipf("perf record cannot record here: %v\n%s", err, out)
	}
	checkTimerShape(t, runReportJSON(t, "-i", data))
}

// TestReportLBRFixture reports the real LBR recording of autofdo's
// test.binary (its binary put where the recording says it was, under a
// --symfs): an lbr profile with call counts, the edges package lbr
// verifies against perf script among them.
func TestReportLBRFixture(t *testing.T) {
	t.Parallel()
	fx := fixtures.Dir(t)
	bin, err := filepath.Abs(filepath.Join(fx, "autofdo", "test.binary"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("fixture binary absent: %v", err)
	}
	symfs := t.TempDir()
	fixtures.Place(t, bin, filepath.Join(symfs, "export/hda3/tmp/test.binary")) // the path in the recording's MMAP
	rep := runReportJSON(t, "-i", filepath.Join(fx, "autofdo", "test.lbr"), "--symfs", symfs)
	if rep.Recording.Source != "lbr" || rep.Recording.Samples != 9232 {
		t.Errorf("source %q, %d samples; want lbr, 9232 (perf's count)", rep.Recording.Source, rep.Recording.Samples)
	}
	if len(rep.Edges) == 0 || rep.Edges[0].Count == nil {
		t.Fatalf("no counted edges: %+v", rep.Edges)
	}
	top := rep.Edges[0]
	if top.Caller != "compress_block" || top.Callee != "send_bits" || top.Callsite.Object != "/export/hda3/tmp/test.binary" {
		t.Errorf("hottest edge %s -> %s at %+v, want compress_block -> send_bits in /export/hda3/tmp/test.binary", top.Caller, top.Callee, top.Callsite)
	}
	// 500000 taken branches per sample over a 16-deep window: each
	// appearance stands for 31250 calls
	if *top.Count == 0 || *top.Count%31250 > 1 && 31250-*top.Count%31250 > 1 {
		t.Errorf("hottest edge: %d calls, not a whole number of appearances × 31250", *top.Count)
	}
}

// TestReportBadInput: a missing file, a file that is not perf.data and a
// truncated recording give clear errors; the truncated one is reported up
// to where it ends, with a warning and exit status 1.
func TestReportBadInput(t *testing.T) {
	dir := t.TempDir()
	r := hwprof(t, "report", "-i", filepath.Join(dir, "absent.data"))
	if r.code != exitError || !strings.Contains(r.stderr, "hwprof: ") || !strings.Contains(r.stderr, "absent.data") {
		t.Errorf("missing file: exit %d, stderr %q", r.code, r.stderr)
	}
	junk := filepath.Join(dir, "junk.data")
	if err := os.WriteFile(junk, []byte(strings.Repeat("not a perf.data file\n", 20)), 0o644); err != nil {
		t.Fatal(err)
	}
	r = hwprof(t, "report", "-i", junk)
	if r.code != exitError || !strings.Contains(r.stderr, "not a perf.data file") || strings.Contains(r.stderr, "panic") {
		t.Errorf("junk file: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := hwprof(t, "report", "--format", "xml"); r.code != exitUsage {
		t.Errorf("--format xml: exit %d, want %d", r.code, exitUsage)
	}

	fx := fixtures.Dir(t)
	full, err := os.ReadFile(filepath.Join(fx, "autofdo", "test.lbr"))
	if err != nil {
		t.Fatal(err)
	}
	for _, frac := range []float64{0.5, 0.9} {
		cut := filepath.Join(dir, "cut.data")
		if err := os.WriteFile(cut, full[:int(float64(len(full))*frac)], 0o644); err != nil {
			t.Fatal(err)
		}
		r := hwprof(t, "report", "-i", cut, "--format", "json")
		if r.code != exitError || !strings.Contains(r.stderr, "warning") || strings.Contains(r.stderr, "panic") {
			t.Errorf("truncated at %.0f%%: exit %d, stderr %q", 100*frac, r.code, r.stderr)
			continue
		}
		var rep reportJSON
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Errorf("truncated at %.0f%%: no report of what was read: %v", 100*frac, err)
			continue
		}
		if rep.Recording.Samples == 0 || rep.Recording.Samples >= 9232 {
			t.Errorf("truncated at %.0f%%: %d samples reported, want some of 9232", 100*frac, rep.Recording.Samples)
		}
	}
}

// TestReportKernelSymbols records a program that spends its time in
// system calls and checks where its kernel functions are named from: the
// running kernel's /proc/kallsyms (the recording names the kernel by its
// build-id), or, when perf's build-id cache holds a kallsyms saved for
// that build-id, that file (here a copy with every name marked), which
// also names the kernel of a recording made before a reboot.
func TestReportKernelSymbols(t *testing.T) {
	needPerfEvents(t)
	kid, err := buildid.Kernel()
	if err != nil || kid.IsZero() {
		t.Skipf("running kernel's build-id unknown: %v", err)
	}
	procSyms, err := os.ReadFile("/proc/kallsyms")
	if err != nil || bytes.HasPrefix(procSyms, []byte("0000000000000000")) {
		t.Skipf("kallsyms not readable with addresses: %v", err)
	}
	file := filepath.Join(t.TempDir(), "k.data")
	// dd in system calls for a set time: timeout ends it and exits 124
	testenv.Tool(t, "timeout")
	r := hwprof(t, "record", "-q", "-e", "cpu-clock", "-c", "20000", "-g", "-o", file, "--",
		"timeout", "0.5", "dd", "if=/dev/zero", "of=/dev/null", "bs=64")
	if r.code != 124 {
		t.Fatalf("record: exit %d\n%s", r.code, r.stderr)
	}
	kernelFuncs := func(rep *reportJSON) (named, marked int) {
		for _, f := range rep.Functions {
			if f.Object != symbolize.KernelPath {
				continue
			}
			if !strings.HasPrefix(f.Name, "[") {
				named++
			}
			if strings.HasPrefix(f.Name, "saved_") {
				marked++
			}
		}
		return named, marked
	}
	t.Setenv("PERF_BUILDID_DIR", t.TempDir()) // an empty cache
	named, marked := kernelFuncs(runReportJSON(t, "-i", file))
	if named == 0 || marked != 0 {
		t.Fatalf("from /proc/kallsyms: %d kernel functions named, %d marked; want some named, none marked", named, marked)
	}

	cache := t.TempDir()
	var saved bytes.Buffer
	for _, line := range strings.SplitAfter(string(procSyms), "\n") {
		if f := strings.Fields(line); len(f) >= 3 {
			line = strings.Replace(line, " "+f[2], " saved_"+f[2], 1)
		}
		saved.WriteString(line)
	}
	dir := filepath.Join(cache, symbolize.KernelPath, kid.String())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kallsyms"), saved.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PERF_BUILDID_DIR", cache)
	named2, marked2 := kernelFuncs(runReportJSON(t, "-i", file))
	if marked2 == 0 || marked2 != named2 {
		t.Fatalf("from the saved kallsyms: %d kernel functions named, %d from it; want all from it", named2, marked2)
	}
}

// TestReportVDSO records a program that spends its time in
// clock_gettime, which runs in the vdso: on the kernel the recording was
// made on, hwprof names the vdso addresses samples were taken at as perf
// report names them on the same file, with names of this host's vdso.
// Which functions those are is a fact of the kernel build (its vdso and
// clock source): seen, __vdso_clock_gettime on one build, and on another
// a code range the vdso's symbol table does not cover (perf shows it as
// an address too), so the test takes its names from perf and the vdso.
func TestReportVDSO(t *testing.T) {
	t.Parallel()
	needPerfEvents(t)
	dir := t.TempDir()
	// clock_gettime(CLOCK_MONOTONIC) for 300 ms of CPU time
	bin := testprog.Build(t, "c/clock.c", "-O1", "-fno-omit-frame-pointer")
	file := filepath.Join(dir, "v.data")
	if r := hwprof(t, "record", "-q", "-e", "cpu-clock", "-c", "20000", "-g", "-o", file, "--", bin, "300"); r.code != 0 {
		t.Fatalf("record: exit %d\n%s", r.code, r.stderr)
	}
	rep := runReportJSON(t, "-i", file)
	// What hwprof gives the vdso: self weight per function, the names
	// being symbols of this host's vdso (ELF, read from this process).
	syms := localVDSOSymbols(t)
	mine := map[string]float64{}
	var vdsoSelf float64
	for _, f := range rep.Functions {
		if f.Object != "[vdso]" {
			continue
		}
		// A vdso address that only appears as a caller may be no
		// function at all: the vdso is built without frame pointers, so
		// the kernel's frame-pointer walk from inside it reads a stale
		// stack word as the next return address, now and then one inside
		// the vdso's headers; only self weight (IPs, which the kernel
		// reports exactly) is compared.
		if f.Self == 0 {
			continue
		}
		mine[vdsoName(f.Name)] += f.Self
		vdsoSelf += f.Self
		if !strings.HasPrefix(f.Name, "[") && !syms[f.Name] {
			t.Errorf("vdso function %q (self %.4f) is no symbol of this host's vdso %v", f.Name, f.Self, slices.Sorted(maps.Keys(syms)))
		}
	}
	if vdsoSelf < 0.05 {
		t.Fatalf("a program calling clock_gettime has %.4f of its samples in the vdso: %+v", vdsoSelf, rep.Functions)
	}
	t.Logf("vdso, by hwprof: %v", mine)
	theirs, ok := perfVDSOSelf(t, file)
	if !ok {
		return
	}
	t.Logf("vdso, by perf report: %v", theirs)
	for name, share := range theirs {
		if share >= 0.01 && math.Abs(mine[name]-share) > 0.002 {
			t.Errorf("perf report gives vdso %s %.4f of the samples, hwprof %.4f", name, share, mine[name])
		}
	}
	for name, share := range mine {
		if share >= 0.01 && theirs[name] == 0 {
			t.Errorf("hwprof gives vdso %s %.4f of the samples, perf report names no such function", name, share)
		}
	}
}

// vdsoName is a vdso function's name from hwprof or perf: a symbol, or the
// address of code no symbol covers as "0x" and its offset in the vdso
// (hwprof: "[[vdso]+0x7bd]"; perf: "0x00000000000007bd").
func vdsoName(name string) string {
	off, ok := strings.CutPrefix(strings.TrimSuffix(name, "]"), "[[vdso]+0x")
	if !ok {
		off, ok = strings.CutPrefix(name, "0x")
	}
	if n, err := strconv.ParseUint(off, 16, 64); ok && err == nil {
		return fmt.Sprintf("0x%x", n)
	}
	return name
}

// perfVDSOSelf is perf report's self share of each vdso function of a
// recording (as vdsoName writes them), and false without perf.
func perfVDSOSelf(t *testing.T, file string) (map[string]float64, bool) {
	t.Helper()
	if _, err := exec.LookPath("perf"); err != nil {
		t.Log("no perf: the names are not compared with perf report's")
		return nil, false
	}
	out, err := exec.Command("perf", "report", "-i", file, "--stdio", "--no-children", "--sort", "dso,sym", "-g", "none", "--percent-limit", "0").Output()
	if err != nil {
		t.Fatalf("perf report -i %s: %v", file, err)
	}
	shares := map[string]float64{}
	for line := range strings.Lines(string(out)) {
		// "    70.70%  [vdso]  [.] __vdso_clock_gettime"
		f := strings.Fields(line)
		if len(f) < 4 || f[1] != "[vdso]" || f[2] != "[.]" {
			continue
		}
		pct, err := strconv.ParseFloat(strings.TrimSuffix(f[0], "%"), 64)
		if err != nil {
			t.Fatalf("perf report line %q: %v", line, err)
		}
		shares[vdsoName(f[3])] += pct / 100
	}
	return shares, true
}

// localVDSOSymbols are the function symbols of this process's vdso, which
// every process on this kernel shares.
func localVDSOSymbols(t *testing.T) map[string]bool {
	t.Helper()
	image, err := unwind.LocalVDSO()
	if err != nil {
		t.Fatalf("this host's vdso: %v", err)
	}
	f, err := elf.NewFile(bytes.NewReader(image))
	if err != nil {
		t.Fatalf("this host's vdso: %v", err)
	}
	syms, _ := f.DynamicSymbols()
	more, _ := f.Symbols()
	names := map[string]bool{}
	for _, s := range append(syms, more...) {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			names[s.Name] = true
		}
	}
	return names
}

// vdsoName writes hwprof's and perf's names of an address no symbol
// covers alike.
func TestVDSOName(t *testing.T) {
	for in, want := range map[string]string{
		"[[vdso]+0x7bd]":       "0x7bd",
		"0x00000000000007bd":   "0x7bd",
		"__vdso_clock_gettime": "__vdso_clock_gettime",
		"[[vdso]]":             "[[vdso]]",
	} {
		if got := vdsoName(in); got != want {
			t.Errorf("vdsoName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestReportCCallSitesFileLine: a C program built with -g has its call
// sites shown as file:line by default (without --srcline), as Go's are,
// each the line addr2line gives for the site's offset; a call site in an
// object without DWARF of its own (libc, the kernel) shows as the caller's
// symbol and offset.
func TestReportCCallSitesFileLine(t *testing.T) {
	t.Parallel() // its own programs and files
	needPerfEvents(t)
	bin := testprog.Build(t, "c/hotpath.c", "-O2", "-g", "-fno-omit-frame-pointer")
	addr2line, err := exec.LookPath("addr2line")
	if err != nil {
		t.Skipf("no addr2line to check the lines against: %v", err)
	}
	data := filepath.Join(t.TempDir(), "timer.data")
	if r := hwprof(t, "record", "-q", "-g", "-o", data, "--", bin, "500"); r.code != 0 { // 500 ms of CPU
		t.Fatalf("record: exit %d\n%s", r.code, r.stderr)
	}
	rep := runReportJSON(t, "-i", data)
	text := hwprof(t, "report", "-i", data, "--top", "0")
	if text.code != 0 {
		t.Fatalf("report: exit %d\n%s", text.code, text.stderr)
	}
	// row returns the text report's edge row of caller → callee with the
	// call site text site (and the offset that tells apart two calls on
	// one line: an interrupt taken at two places of one line of b).
	row := func(caller, callee, site string) bool {
		re := regexp.MustCompile(`(?m)\s` + regexp.QuoteMeta(caller+" → "+callee) + `\s+` + regexp.QuoteMeta(site) + `( \(` + regexp.QuoteMeta(caller) + `\+0x[0-9a-f]+\))?$`)
		return re.MatchString(text.stdout)
	}
	inProgram := 0
	for _, e := range rep.Edges {
		if e.Callsite.Object != bin {
			continue
		}
		inProgram++
		out, err := exec.Command(addr2line, "-e", bin, e.Callsite.Offset).Output()
		if err != nil {
			t.Fatalf("addr2line %s: %v", e.Callsite.Offset, err)
		}
		want, _, _ := strings.Cut(strings.TrimSpace(string(out)), " (discriminator")
		got := fmt.Sprintf("%s:%d", e.Callsite.File, e.Callsite.Line)
		if e.Callsite.File == "" || got != want {
			t.Errorf("edge %s → %s at %s: JSON file:line %q, addr2line %q", e.Caller, e.Callee, e.Callsite.Offset, got, want)
			continue
		}
		if site := fmt.Sprintf("%s:%d", filepath.Base(e.Callsite.File), e.Callsite.Line); !row(e.Caller, e.Callee, site) {
			t.Errorf("edge %s → %s: no text row with call site %s\n%s", e.Caller, e.Callee, site, text.stdout)
		}
	}
	if inProgram < 2 {
		t.Errorf("%d edges with call sites in the program, want main → a, a → b and more: %+v", inProgram, rep.Edges)
	}
	// __libc_start_call_main calls main from libc, whose DWARF (if any)
	// is in a separate debug file: its symbol and offset.
	if !regexp.MustCompile(`(?m)\s__libc_start_call_main → main\s+__libc_start_call_main\+0x[0-9a-f]+$`).MatchString(text.stdout) {
		t.Errorf("the call of main from libc does not show as __libc_start_call_main+0x...:\n%s", text.stdout)
	}
}

// TestReportContextsMergedBySites: the text report lists a calling
// context once, whatever call sites lead through it: knowncalls' a calls
// c from two call sites (on one line), once each per round, and the text
// showed main → a → c twice, 1 call per round each, differing only by a
// call site it does not show. The JSON report keeps the two contexts
// apart, each with the call sites along its path. The edge table, whose
// rows are call sites, tells the two a → c apart by their offsets.
func TestReportContextsMergedBySites(t *testing.T) {
	t.Parallel()   // its own files; it records exact in hwprof processes of its own
	needUprobes(t) // the exact source
	bin := testprog.Build(t, "c/knowncalls.c", "-O2", "-g", "-fno-omit-frame-pointer")
	data := filepath.Join(t.TempDir(), "exact.data")
	const rounds = 2000 // knowncalls takes rounds: its counts are exact
	if r := hwprof(t, "record", "-q", "--source", "exact", "-o", data, "--", bin, fmt.Sprint(rounds)); r.code != 0 {
		t.Fatalf("record: exit %d\n%s", r.code, r.stderr)
	}
	text := hwprof(t, "report", "-i", data, "--contexts", "0")
	if text.code != 0 {
		t.Fatalf("report: exit %d\n%s", text.code, text.stderr)
	}
	_, contexts, _ := strings.Cut(text.stdout, "\ncontexts (")
	rows := regexp.MustCompile(`(?m)^\s*[\d.]+%\s+(\d+)\s+(.*)$`).FindAllStringSubmatch(contexts, -1)
	seen := map[string]bool{}
	var ac []string
	for _, r := range rows {
		if seen[r[2]] {
			t.Errorf("context %q listed twice", r[2])
		}
		seen[r[2]] = true
		if strings.HasSuffix(r[2], "main → a → c") {
			ac = append(ac, r[1])
		}
	}
	if len(ac) != 1 || ac[0] != fmt.Sprint(2*rounds) {
		t.Errorf("main → a → c: rows with counts %v, want one with %d:\n%s", ac, 2*rounds, contexts)
	}
	edges := regexp.MustCompile(`(?m)^\s*[\d.]+%\s+`+fmt.Sprint(rounds)+`\s+a → c\s+(knowncalls\.c:\d+ \(a\+0x[0-9a-f]+\))$`).FindAllStringSubmatch(text.stdout, -1)
	if len(edges) != 2 || edges[0][1] == edges[1][1] {
		t.Errorf("edge a → c: rows %q, want two told apart by their offsets in a:\n%s", edges, text.stdout)
	}

	rep := runReportJSON(t, "-i", data)
	sites := map[string]bool{}
	for _, c := range rep.Contexts {
		n := len(c.Path)
		if n < 3 || strings.Join(c.Path[n-3:], ">") != "main>a>c" {
			continue
		}
		if len(c.Callsites) != n || c.Callsites[n-1] != nil || c.Callsites[n-2] == nil {
			t.Fatalf("context %v: call sites %d, want %d, the last null, the one in a given", c.Path, len(c.Callsites), n)
		}
		s := c.Callsites[n-2]
		if c.Count == nil || *c.Count != rounds || s.Object != bin || s.File == "" || s.Line == 0 {
			t.Errorf("context %v: count %v, call site in a %+v; want %d calls at a line of %s", c.Path, c.Count, *s, rounds, bin)
		}
		sites[s.Offset] = true
	}
	if len(sites) != 2 {
		t.Errorf("JSON: main → a → c at call sites %v in a, want two", sites)
	}
}

// A filter that keeps no sample says so, naming itself and what the
// recording has, and exits 1 without a report (and without touching
// -o); a value of a filter that matches nothing beside others that do is
// a warning. It used to print an empty report and exit 0.
func TestReportFilterMatchesNothing(t *testing.T) {
	t.Parallel() // reads the shared recording, writes its own files
	data, _ := workloadRecording(t)
	all := reportProcesses(t, "-i", data)
	if len(all.Recording.Processes) == 0 || all.Recording.Processes[0].Comm == nil {
		t.Fatalf("the workload recording has processes %+v", all.Recording.Processes)
	}
	pid := strconv.Itoa(all.Recording.Processes[0].PID)
	comm := *all.Recording.Processes[0].Comm
	out := filepath.Join(t.TempDir(), "flame.html")
	if err := os.WriteFile(out, []byte("previous"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want []string // in the message
	}{
		{[]string{"report", "--pid", "999999999"}, []string{"--pid 999999999 matches no sample", "pid " + pid + " (" + comm}},
		{[]string{"report", "--tid", "999999999,999999998"}, []string{"--tid 999999999,999999998 matches no sample", "tid " + pid}},
		{[]string{"report", "--comm", "no-such-comm"}, []string{"--comm no-such-comm matches no sample", comm}},
		{[]string{"report", "--format", "json", "--pid", pid, "--comm", "no-such-comm"}, []string{"--pid " + pid + " --comm no-such-comm match no sample", "pid " + pid + " (" + comm}},
		{[]string{"flamegraph", "-o", out, "--pid", "999999999"}, []string{"--pid 999999999 matches no sample"}},
	} {
		r := hwprof(t, append(tc.args, "-i", data)...)
		if r.code != exitError || r.stdout != "" {
			t.Errorf("%q: exit %d, %d bytes of output; want %d and none", tc.args, r.code, len(r.stdout), exitError)
		}
		for _, w := range tc.want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%q: stderr %q; want %q", tc.args, r.stderr, w)
			}
		}
	}
	if b, _ := os.ReadFile(out); string(b) != "previous" {
		t.Errorf("flamegraph -o %s with a filter that matches nothing wrote %d bytes over it", out, len(b))
	}
	r := hwprof(t, "report", "-i", data, "--pid", pid+",999999999")
	if r.code != 0 || !strings.Contains(r.stderr, "warning: --pid 999999999 matches no sample") {
		t.Errorf("--pid %s,999999999: exit %d, stderr %q; want 0 and a warning for 999999999", pid, r.code, r.stderr)
	}
}
