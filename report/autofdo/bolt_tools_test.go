package autofdo_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/buildid"
	"github.com/hwprof/hwprof/internal/fixtures"
	"github.com/hwprof/hwprof/internal/testenv"
)

// boltProfiled runs llvm-bolt-19 on bin with the profile fdata and
// returns how many functions it says have a profile, and how many
// profiled objects (functions of the profile) it found no function for.
func boltProfiled(t *testing.T, bolt, bin, fdata, out string) (profiled, ignored int) {
	t.Helper()
	text := runTool(t, bolt, bin, "-o", out, "-data="+fdata, "-reorder-blocks=ext-tsp")
	m := regexp.MustCompile(`BOLT-INFO: (\d+) out of \d+ functions in the binary \([^)]*\) have non-empty execution profile`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("llvm-bolt said nothing of the functions with a profile:\n%s", text)
	}
	profiled, _ = strconv.Atoi(m[1])
	if m := regexp.MustCompile(`profile for (\d+) objects was ignored`).FindStringSubmatch(text); m != nil {
		ignored, _ = strconv.Atoi(m[1])
	}
	return profiled, ignored
}

// TestBOLTLBRFixtures: hwprof's BOLT profile (--format bolt) of the two
// real LBR recordings, which perf2bolt-19 does not read (test.lbr has
// only MMAP records, and the propeller recording's samples fall in what
// it calls unknown regions), is one llvm-bolt-19 uses: every function
// named in it is one of the binary's (local ones as "name/N"), the hot
// ones have a profile, and the rewritten programs compute what the
// originals do where they run here (test.binary, SPEC's gzip built for
// an old glibc, runs; the propeller program's interpreter is not here,
// so it runs through this machine's dynamic loader, when there is one).
func TestBOLTLBRFixtures(t *testing.T) {
	bolt := testenv.Tool(t, "llvm-bolt-19")
	auto := filepath.Join(fixtures.Dir(t), "autofdo")
	t.Run("test.lbr", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		symfs := filepath.Join(dir, "symfs")
		bin := filepath.Join(symfs, "export", "hda3", "tmp", "test.binary")
		fixtures.Place(t, filepath.Join(auto, "test.binary"), bin)
		fdata, opt := filepath.Join(dir, "test.fdata"), filepath.Join(dir, "test.bolt")
		if r := hwprof(t, "report", "-i", filepath.Join(auto, "test.lbr"), "--symfs", symfs, "--format", "bolt", "-o", fdata); r.code != 0 {
			t.Fatalf("report --format bolt: exit %d\n%s", r.code, r.stderr)
		}
		text := readFile(t, fdata)
		// longest_match's inner loop branches back; fill_window is static.
		for _, want := range []string{"1 longest_match b1 1 longest_match 80 ", "1 fill_window/1 "} {
			if !strings.Contains(text, want) {
				t.Errorf("the profile has no %q:\n%s", want, text)
			}
		}
		profiled, ignored := boltProfiled(t, bolt, bin, fdata, opt)
		// 22 with a profile; the one profile without a function is
		// "[unknown]", the source of branches into the program from
		// the C library (not in the symfs).
		if profiled < 20 || ignored > 1 {
			t.Errorf("llvm-bolt: %d functions with a profile (want at least 20), %d profiles ignored (want at most 1)", profiled, ignored)
		}
		input := filepath.Join(dir, "input.txt")
		var b strings.Builder
		for i := range 20000 {
			b.WriteString(strconv.Itoa(i) + "\n")
		}
		if err := os.WriteFile(input, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		want, err := exec.Command(bin, input, "1").Output()
		if err != nil {
			t.Skipf("test.binary does not run here (%v): the rewritten one is not run", err)
		}
		got := runTool(t, opt, input, "1")
		if got != string(want) || !strings.Contains(got, "Tested 1MB buffer: OK!") {
			t.Errorf("the BOLT-optimized test.binary says\n%s\nthe original\n%s", got, want)
		}
	})
	t.Run("propeller", func(t *testing.T) {
		t.Parallel()
		prog := filepath.Join(auto, "propeller_sample_1.bin")
		id, err := buildid.Read(prog)
		if err != nil || id.String() == "" {
			t.Fatalf("build-id of %s: %q, %v", prog, id.String(), err)
		}
		dir := t.TempDir()
		bin := filepath.Join(dir, "debug", id.String())
		fixtures.Place(t, prog, bin)
		fdata, opt := filepath.Join(dir, "prop.fdata"), filepath.Join(dir, "prop.bolt")
		if r := hwprof(t, "report", "-i", filepath.Join(auto, "propeller_sample_1.perfdata1"), "--debug-dir", filepath.Dir(bin),
			"--format", "bolt", "-o", fdata); r.code != 0 {
			t.Fatalf("report --format bolt: exit %d\n%s", r.code, r.stderr)
		}
		text := readFile(t, fdata)
		if !strings.Contains(text, "1 main 47 1 compute_flag 0 ") {
			t.Errorf("the profile has no call from main to compute_flag:\n%s", text)
		}
		if profiled, ignored := boltProfiled(t, bolt, bin, fdata, opt); profiled != 2 || ignored != 0 {
			t.Errorf("llvm-bolt: %d functions with a profile (want main and compute_flag), %d profiles ignored", profiled, ignored)
		}
		const loader = "/lib64/ld-linux-x86-64.so.2"
		if err := exec.Command(loader, bin).Run(); err != nil {
			t.Skipf("the propeller program does not run here through %s (%v): the rewritten one is not run", loader, err)
		}
		runTool(t, loader, opt)
	})
}
