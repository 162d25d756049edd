package pprof

import (
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"debug/gosym"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/internal/testprog"
	"golang.org/x/arch/x86/x86asm"
)

// The workload of the PGO test (the module's testdata/go/pgoprog) and the
// functions the test finds in its binary.
const (
	fnMain   = "main.main"
	fnRun    = "main.round"
	fnSquare = "main.(*Square).Area"
	fnCircle = "main.(*Circle).Area"
	fnMix    = "main.mix"
)

// counts are the call counts of one run of the workload, as it reports
// them.
type counts struct{ rounds, squares, circles, mix int64 }

func runWorkload(t *testing.T, bin string, ms string) counts {
	t.Helper()
	out, err := exec.Command(bin, ms).Output()
	if err != nil {
		t.Fatalf("%s %s: %v", bin, ms, err)
	}
	var c counts
	var calls int64
	if _, err := fmt.Sscanf(string(out), "rounds %d calls %d", &c.rounds, &calls); err != nil {
		t.Fatalf("workload output %q: %v", out, err)
	}
	if c.rounds == 0 || calls != 2000*c.rounds {
		t.Fatalf("workload ran %d rounds (%d calls) in %s ms: %q", c.rounds, calls, ms, out)
	}
	// Each round calls Area on 999 squares and 1 circle, and mix once
	// per shape.
	c.squares, c.circles, c.mix = 999*c.rounds, c.rounds, 1000*c.rounds
	return c
}

// binTables are what the test reads from the workload's binary: its
// symbol and line table, DWARF start lines, and executable segment.
type binTables struct {
	f     *elf.File
	tab   *gosym.Table
	start map[string]int // function → DW_AT_decl_line
	text  *elf.Prog
}

func readTables(t *testing.T, bin string) *binTables {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	b := &binTables{f: f, start: map[string]int{}}
	pcln, err := f.Section(".gopclntab").Data()
	if err != nil {
		t.Fatalf("read .gopclntab: %v", err)
	}
	b.tab, err = gosym.NewTable(nil, gosym.NewLineTable(pcln, f.Section(".text").Addr))
	if err != nil {
		t.Fatalf("read Go symbol table: %v", err)
	}
	d, err := f.DWARF()
	if err != nil {
		t.Fatalf("read DWARF: %v", err)
	}
	for r := d.Reader(); ; {
		e, err := r.Next()
		if err != nil {
			t.Fatalf("read DWARF: %v", err)
		}
		if e == nil {
			break
		}
		if e.Tag != dwarf.TagSubprogram {
			continue
		}
		name, _ := e.Val(dwarf.AttrName).(string)
		if line, ok := e.Val(dwarf.AttrDeclLine).(int64); ok && name != "" {
			b.start[name] = int(line)
		}
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 {
			b.text = p
		}
	}
	if b.text == nil {
		t.Fatal("no executable segment")
	}
	return b
}

func (b *binTables) fn(t *testing.T, name string) *gosym.Func {
	t.Helper()
	f := b.tab.LookupFunc(name)
	if f == nil {
		t.Fatalf("no function %s in the binary", name)
	}
	return f
}

// calls disassembles function name and returns the addresses of its call
// instructions: direct calls by target, and indirect ones.
func (b *binTables) calls(t *testing.T, name string) (direct map[uint64][]uint64, indirect []uint64) {
	t.Helper()
	fn := b.fn(t, name)
	code := make([]byte, fn.End-fn.Entry)
	if _, err := b.f.Section(".text").ReadAt(code, int64(fn.Entry-b.f.Section(".text").Addr)); err != nil {
		t.Fatalf("read code of %s: %v", name, err)
	}
	direct = map[uint64][]uint64{}
	for off := 0; off < len(code); {
		inst, err := x86asm.Decode(code[off:], 64)
		if err != nil {
			off++ // padding or data the decoder does not know
			continue
		}
		pc := fn.Entry + uint64(off)
		if inst.Op == x86asm.CALL {
			if rel, ok := inst.Args[0].(x86asm.Rel); ok {
				target := pc + uint64(inst.Len) + uint64(int64(rel))
				direct[target] = append(direct[target], pc)
			} else {
				indirect = append(indirect, pc)
			}
		}
		off += inst.Len
	}
	return direct, indirect
}

// onlyOne returns the one address of a list, failing otherwise.
func onlyOne(t *testing.T, what string, pcs []uint64) uint64 {
	t.Helper()
	if len(pcs) != 1 {
		t.Fatalf("%s: %d call instructions (%#x), want 1", what, len(pcs), pcs)
	}
	return pcs[0]
}

// pgoSite is what the test knows of a call site in the workload.
type pgoSite struct {
	pc   uint64
	line int
}

// workloadProfile derives the profile of one run of the workload from its
// binary's tables: the call sites are the call instructions found in the
// code, their lines come from the pclntab, the functions' start lines from
// DWARF; the call counts are the run's own. The time weights are made from
// the counts with a nominal cost per call (3 ns for Area, 5 ns for mix), so
// that they differ from the counts:
// this tests the writer, not a recorder.
func workloadProfile(t *testing.T, b *binTables, c counts) (*Profile, map[string]pgoSite) {
	t.Helper()
	names := []string{fnMain, fnRun, fnSquare, fnCircle, fnMix}
	p := &Profile{
		Mappings: []Mapping{{Path: "pgoprog", Start: b.text.Vaddr, Limit: b.text.Vaddr + b.text.Memsz, Offset: b.text.Off}},
		Comments: []string{"test: profile derived from the binary's tables and one run's call counts"},
		PeriodNS: 1e6, HasTime: true, HasCalls: true,
	}
	idx := map[string]int{}
	for i, name := range names {
		fn := b.fn(t, name)
		file, _, _ := b.tab.PCToLine(fn.Entry)
		start, ok := b.start[name]
		if !ok || start == 0 {
			t.Fatalf("no DW_AT_decl_line for %s", name)
		}
		idx[name] = i
		p.Functions = append(p.Functions, Function{Name: name, File: file, StartLine: start})
	}
	loc := func(fn string, pc uint64, line int) int {
		p.Locations = append(p.Locations, Location{Mapping: 0, Address: pc, Lines: []Line{{idx[fn], line}}})
		return len(p.Locations) - 1
	}
	site := func(caller string, pc uint64) (int, pgoSite) {
		_, line, _ := b.tab.PCToLine(pc)
		return loc(caller, pc, line), pgoSite{pc, line}
	}
	entry := func(fn string) int { return loc(fn, b.fn(t, fn).Entry, p.Functions[idx[fn]].StartLine) }

	sites := map[string]pgoSite{}
	direct, _ := b.calls(t, fnMain)
	mainSite, s := site(fnMain, onlyOne(t, "main.main → main.round", direct[b.fn(t, fnRun).Entry]))
	sites[fnRun] = s
	direct, indirect := b.calls(t, fnRun)
	ifaceSite, s := site(fnRun, onlyOne(t, "indirect calls in main.round", indirect))
	sites[fnSquare] = s
	mixSite, s := site(fnRun, onlyOne(t, "main.round → main.mix (not inlined without a profile)", direct[b.fn(t, fnMix).Entry]))
	sites[fnMix] = s

	p.Edges = []Edge{
		{Caller: idx[fnMain], Callee: idx[fnRun], Site: mainSite, Calls: c.rounds},
		{Caller: idx[fnRun], Callee: idx[fnSquare], Site: ifaceSite, Calls: c.squares},
		{Caller: idx[fnRun], Callee: idx[fnCircle], Site: ifaceSite, Calls: c.circles},
		{Caller: idx[fnRun], Callee: idx[fnMix], Site: mixSite, Calls: c.mix},
	}
	for _, st := range []struct {
		leaf, site int
		ns         int64
	}{
		{entry(fnSquare), ifaceSite, 3 * c.squares},
		{entry(fnCircle), ifaceSite, 3 * c.circles},
		{entry(fnMix), mixSite, 5 * c.mix},
	} {
		p.Samples = append(p.Samples, Sample{Stack: []int{st.leaf, st.site, mainSite}, Samples: max(1, st.ns/1e6), TimeNS: st.ns})
	}
	return p, sites
}

// TestGoPGO builds the workload, derives its profile and writes it with
// both weights. The calls profile builds the workload again with its main
// package compiled with the profile (testprog.CompileGo: the compiler's
// decisions of go build -pgo, without rebuilding the standard library;
// scripts/bench-pgo.sh makes the whole builds and times them): the
// compiler must read the hot call edges from the profile, with the
// weights written, inline the hot small function at its call site and
// devirtualize the interface call to its hot target. The time profile is
// read by go tool preprofile, the compiler's own reader.
func TestGoPGO(t *testing.T) {
	dir := t.TempDir()
	base := testprog.Build(t, "go/pgoprog")
	c := runWorkload(t, base, "300")
	b := readTables(t, base)
	p, sites := workloadProfile(t, b, c)

	runStart := p.Functions[1].StartLine
	for _, w := range []Weight{Calls, Time} {
		t.Run(w.String(), func(t *testing.T) {
			path := filepath.Join(dir, w.String()+".pb.gz")
			var buf bytes.Buffer
			if err := Write(&buf, p, Options{PGO: true, Weight: w}); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			// The weight the compiler gives the hot interface edge is the
			// one written: the measured calls, or the time.
			want := c.squares
			if w == Time {
				want = p.Samples[0].TimeNS
				// The time profile is read by the compiler's own
				// reader, go tool preprofile, which gives each edge
				// its weight and call-site offset.
				checkPreprofile(t, path, fnRun, fnSquare, sites[fnSquare].line-runStart, want)
				return
			}
			bin, out := testprog.CompileGo(t, "go/pgoprog", "-pgoprofile="+path, "-d=pgodebug=2", "-m")
			checks := []string{
				`(?m)^hot-callsite-thres-from-CDF=\S+$`,
				fmt.Sprintf(`(?m)^hot-budget check allows inlining for call main\.mix \(cost \d+\) at \S+:%d:\d+ in function main\.round$`, sites[fnMix].line),
				fmt.Sprintf(`(?m)^\S+:%d:\d+: call main\.round:%d: hottest callee %s \(weight %d\)$`,
					sites[fnSquare].line, sites[fnSquare].line-runStart, regexp.QuoteMeta(fnSquare), want),
				fmt.Sprintf(`(?m)^\S+:%d:\d+: PGO devirtualizing interface call s\.Area to \(\*Square\)\.Area$`, sites[fnSquare].line),
			}
			for _, re := range checks {
				if m := regexp.MustCompile(re).FindString(out); m != "" {
					t.Logf("compiler: %s", m)
				} else {
					t.Errorf("compiler output has no line matching %s", re)
				}
			}
			if t.Failed() {
				t.Logf("go build -pgo output:\n%s", out)
			}

			// The rebuilt main.round no longer calls main.mix, and works.
			pb := readTables(t, bin)
			direct, _ := pb.calls(t, fnRun)
			if mix := pb.tab.LookupFunc(fnMix); mix != nil && len(direct[mix.Entry]) > 0 {
				t.Errorf("the PGO build still calls main.mix from main.round")
			}
			runWorkload(t, bin, "20")
		})
	}
}

// checkPreprofile checks that go tool preprofile, the Go compiler's
// reader of PGO profiles, reads the profile at path with the edge caller
// -> callee at call-site offset off (line minus the caller's start line)
// weighing want.
func checkPreprofile(t *testing.T, path, caller, callee string, off int, want int64) {
	t.Helper()
	cmd := exec.Command(goCommand(t), "tool", "preprofile", "-i", path)
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go tool preprofile: %v\n%s", err, out)
	}
	edge := fmt.Sprintf("\n%s\n%s\n%d %d\n", caller, callee, off, want)
	if !strings.Contains(string(out), edge) {
		t.Errorf("go tool preprofile has no edge %q:\n%s", edge, out)
	}
}

// TestGoPGOOrdinaryCalls: the ordinary profile (not Options.PGO) of a
// recording that counts calls and has no time, as an exact recording's
// is, works with go build -pgo, as the README says. The compiler weighs
// edges by the first sample type that is samples/count or
// cpu/nanoseconds, here samples/count, which for an edge sample is its
// calls: go tool preprofile (the compiler's reader) gives each measured
// edge its call count, and the compiler given the profile inlines the hot
// call (compiling the main package alone, testprog.CompileGo: no go build
// -pgo, which rebuilds the standard library).
func TestGoPGOOrdinaryCalls(t *testing.T) {
	base := testprog.Build(t, "go/pgoprog")
	c := runWorkload(t, base, "300")
	p, sites := workloadProfile(t, readTables(t, base), c)
	p.HasTime, p.Samples = false, nil // call counts only, as the exact source gives
	path := writeFile(t, p, Options{Weight: Calls})

	runStart := p.Functions[1].StartLine
	checkPreprofile(t, path, fnRun, fnSquare, sites[fnSquare].line-runStart, c.squares)
	checkPreprofile(t, path, fnRun, fnMix, sites[fnMix].line-runStart, c.mix)
	_, out := testprog.CompileGo(t, "go/pgoprog", "-pgoprofile="+path, "-d=pgodebug=1")
	re := fmt.Sprintf(`(?m)^hot-budget check allows inlining for call main\.mix \(cost \d+\) at \S+:%d:\d+ in function main\.round$`, sites[fnMix].line)
	if !regexp.MustCompile(re).MatchString(out) {
		t.Errorf("the compiler given the profile did not inline the hot call main.round -> main.mix:\n%s", out)
	}
}
