package main

import (
	"github.com/hwprof/hwprof/internal/fixtures"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var samplesLineRE = regexp.MustCompile(`(?m)^samples (\d+)$`)

func statsSamples(t *testing.T, out string) int {
	t.Helper()
	m := samplesLineRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no \"samples N\" line in:\n%s", out)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

func TestDumpStatsFixtures(t *testing.T) {
	fx := fixtures.Dir(t)
	for _, tc := range []struct {
		file    string
		samples int
		want    []string
	}{
		{"autofdo/propeller_sample_1.perfdata1", 3740, []string{"perf version   4.13.0-14-GOOGLE", "arch           x86_64",
			"cycles:u: type hardware config 0x0 sample_type IP|TID|TIME|PERIOD|BRANCH_STACK branch_sample_type ANY", "command line   ", "BRANCH_STACK"}},
		{"perf_data_converter/perf.data.piped-4.13", 9302, []string{"(pipe mode)", "FEATURE "}},
		{"perf_data_converter/perf.data.branch_stack_hw_index", 5, []string{"branch_sample_type HW_INDEX", "arch           aarch64"}},
		{"perf_data_converter/perf.data.group_desc-4.4", 168, []string{"events 7", "GROUP_DESC"}},
	} {
		r := hwprof(t, "dump", "--stats", "-i", filepath.Join(fx, tc.file))
		if r.code != 0 {
			t.Errorf("%s: exit %d: %s", tc.file, r.code, r.stderr)
			continue
		}
		if n := statsSamples(t, r.stdout); n != tc.samples {
			t.Errorf("%s: samples %d, perf counts %d", tc.file, n, tc.samples)
		}
		for _, w := range tc.want {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("%s: --stats lacks %q:\n%s", tc.file, w, r.stdout)
			}
		}
	}
}

func TestDumpRecords(t *testing.T) {
	fx := fixtures.Dir(t)
	r := hwprof(t, "dump", "-i", filepath.Join(fx, "perf_data_converter/perf.data.raw_callgraph_branch-3.4"))
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	lines := strings.Split(r.stdout, "\n")
	count := func(re string) int {
		n := 0
		rx := regexp.MustCompile(re)
		for _, l := range lines {
			if rx.MatchString(l) {
				n++
			}
		}
		return n
	}
	// EXPECTED.tsv: 513 samples of 16 branches, each with a callchain.
	if n := count(`^0x[0-9a-f]+ SAMPLE \d+\.\d{9} \d+/\d+ cpu=\d+ event=cycles mode=\w+ ip=0x[0-9a-f]+ period=\d+ raw=\d+$`); n != 513 {
		t.Errorf("%d sample lines, want 513", n)
	}
	if n := count(`^    branch_stack nr=16$`); n != 513 {
		t.Errorf("%d branch stacks of 16, want 513", n)
	}
	if n := count(`^      0x[0-9a-f]+ -> 0x[0-9a-f]+ [MP-] cycles=\d+$`); n != 513*16 {
		t.Errorf("%d branch entry lines, want %d", n, 513*16)
	}
	if n := count(`^    callchain nr=\d+$`); n != 513 {
		t.Errorf("%d callchains, want 513", n)
	}
	if count(`^      PERF_CONTEXT_KERNEL$`) == 0 || count(`^0x[0-9a-f]+ MMAP \S+ -1/0 `) == 0 {
		t.Errorf("no kernel context markers or kernel MMAP lines:\n%s", strings.Join(lines[:min(40, len(lines))], "\n"))
	}
	// Time order: sample times never decrease (this file has no late
	// records).
	var last string
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) > 2 && f[1] == "SAMPLE" {
			if padTime(f[2]) < last {
				t.Fatalf("time %s after %s", f[2], last)
			}
			last = padTime(f[2])
		}
	}
}

func padTime(s string) string { return strings.Repeat(" ", 30-len(s)) + s }

func TestDumpErrors(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk")
	os.WriteFile(junk, []byte("this is not a perf.data file, just text\n"), 0o644)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"dump", "-i", filepath.Join(dir, "missing.data")}, 1, "hwprof: perfdata: open"},
		{[]string{"dump", "-i", junk}, 1, "not a perf.data file"},
		{[]string{"dump", "--no-such-flag"}, 2, "not defined"},
		{[]string{"dump", "-i", junk, "extra"}, 2, "unexpected argument"},
	} {
		r := hwprof(t, tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("hwprof %q: exit %d, stderr %q; want %d and %q", tc.args, r.code, r.stderr, tc.code, tc.want)
		}
	}
	// A corrupt record: everything before it is printed, then the error
	// with the offset, exit 1.
	fx := fixtures.Dir(t)
	r := hwprof(t, "dump", "-i", filepath.Join(fx, "perf_data_converter/perf.data.piped.corrupted.zero_size_sample-3.2"))
	if r.code != 1 || !strings.Contains(r.stderr, "record at offset 0xbfd0") || strings.Count(r.stdout, "\n") < 500 {
		t.Errorf("corrupt file: exit %d, %d lines, stderr %q", r.code, strings.Count(r.stdout, "\n"), r.stderr)
	}
}

// hwprof reads back its own recordings: dump --stats counts the samples
// hwprof record says it wrote.
func TestDumpOwnRecording(t *testing.T) {
	t.Parallel()
	needPerfEvents(t)
	out, n := workloadRecording(t)
	d := hwprof(t, "dump", "--stats", "-i", out)
	if d.code != 0 || statsSamples(t, d.stdout) != n {
		t.Errorf("dump --stats: exit %d, stderr %q, samples line vs %d recorded:\n%s", d.code, d.stderr, n, d.stdout)
	}
	full := hwprof(t, "dump", "-i", out)
	if full.code != 0 || strings.Count(full.stdout, " SAMPLE ") != n || !strings.Contains(full.stdout, "PERF_CONTEXT_USER") {
		t.Errorf("dump: exit %d, %d sample lines, want %d with user callchains; stderr %q", full.code, strings.Count(full.stdout, " SAMPLE "), n, full.stderr)
	}
}

// "-i -" reads a pipe-mode stream from standard input, as perf report -i -.
func TestDumpStdin(t *testing.T) {
	fx := fixtures.Dir(t)
	in, err := os.Open(filepath.Join(fx, "perf_data_converter/perf.data.piped.target-3.8"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	cmd := exec.Command(hwprofBin, "dump", "--stats", "-i", "-")
	cmd.Stdin = in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("dump -i -: %v", err)
	}
	if n := statsSamples(t, string(out)); n != 5218 {
		t.Errorf("samples %d from stdin, perf counts 5218", n)
	}
}
