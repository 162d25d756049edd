package perfdata

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/buildid"
	"github.com/hwprof/hwprof/perf"
)

// These tests write recordings and read them back with Linux perf (the
// independent oracle): perf report, perf script and perf report
// --header-only must accept them without a warning.

// perfTool returns the path of perf, or skips the test.
func perfTool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("perf")
	if err != nil {
		t.Skip("perf is not installed: the perf.data files cannot be checked against it")
	}
	return p
}

// runPerf runs perf with args and returns stdout and stderr; it fails the
// test if perf exits non-zero.
func runPerf(t *testing.T, args ...string) (string, string) {
	t.Helper()
	cmd := exec.Command(perfTool(t), args...)
	cmd.Env = append(cmd.Environ(), "PAGER=cat", "PERF_PAGER=cat")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("perf %s: %v\nstderr:\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.String(), errb.String()
}

// cpuClockAttr is the attr perf record uses for -e cpu-clock -c period,
// sampling IP|TID|TIME|PERIOD with read_format ID|LOST.
func cpuClockAttr(st perf.SampleType) perf.Attr {
	return perf.Attr{
		Type:         perf.TypeSoftware,
		Config:       perf.SWCPUClock,
		SamplePeriod: 250000,
		SampleType:   st,
		ReadFormat:   perf.FormatID | perf.FormatLost,
		Flags: perf.FlagDisabled | perf.FlagInherit | perf.FlagMmap | perf.FlagComm |
			perf.FlagEnableOnExec | perf.FlagTask | perf.FlagSampleIDAll |
			perf.FlagExcludeGuest | perf.FlagMmap2 | perf.FlagCommExec,
	}
}

// synthetic describes a recording of one process running /usr/bin/true.
type synthetic struct {
	attrs   []EventAttr
	samples int
	// idOf returns the sample id of sample i (and of the side-band
	// records when i < 0).
	idOf func(i int) uint64
	// kernelMmap writes perf's synthesized kernel MMAP first.
	kernelMmap bool
}

const (
	testPID  = 4242
	testBase = 0x555555554000
	testT0   = 1_000_000_000
)

// writeSynthetic writes the COMM and MMAP2 of the test process, then the
// samples, with a FINISHED_ROUND every 100 samples and a checkpoint every
// 250; it does not close the writer.
func writeSynthetic(t *testing.T, w *Writer, s synthetic, m mapping, upTo int) {
	t.Helper()
	st := s.attrs[0].Attr.SampleType
	side := sampleID{pid: testPID, tid: testPID, time: testT0, id: s.idOf(-1)}
	if s.kernelMmap {
		must(t, w.WriteRecord(kernelMmapRecord(st)))
	}
	must(t, w.WriteRecord(commRecord(st, side, "true")))
	side.time++
	must(t, w.WriteRecord(mmap2Record(t, st, side, m)))
	for i := range upTo {
		id := sampleID{pid: testPID, tid: testPID, time: testT0 + 10 + uint64(i)*1000, id: s.idOf(i), cpu: uint32(i % 2)}
		ip := m.addr + 0x10 + uint64(i*16)%(m.len-0x20)
		must(t, w.WriteRecord(sampleRecord(st, id, ip, 250000)))
		if i%100 == 99 {
			must(t, w.WriteFinishedRound())
		}
		if i%250 == 249 {
			must(t, w.Checkpoint())
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// trueBuildID returns the build-id entry of /usr/bin/true, or skips.
func trueBuildID(t *testing.T) BuildID {
	t.Helper()
	id, err := buildid.Read("/usr/bin/true")
	if err != nil {
		t.Skipf("no build-id for /usr/bin/true: %v", err)
	}
	return BuildID{PID: -1, Misc: perf.MiscUser, ID: id, Path: "/usr/bin/true"}
}

// writeRecording writes a complete synthetic recording and returns its
// path.
func writeRecording(t *testing.T, s synthetic) (string, Features) {
	t.Helper()
	m := textMapping(t, "/usr/bin/true", testBase)
	path := dataPath(t)
	w, err := Create(path, s.attrs)
	must(t, err)
	writeSynthetic(t, w, s, m, s.samples)
	must(t, w.WriteFinishedRound())
	f := CollectFeatures()
	f.BuildIDs = []BuildID{trueBuildID(t)}
	must(t, w.Close(f))
	return path, f
}

// dataPath returns where a test writes its recording: in a temporary
// directory, or, to look at the files with perf by hand, in the directory
// named by $PERFDATA_KEEP.
func dataPath(t *testing.T) string {
	if d := os.Getenv("PERFDATA_KEEP"); d != "" {
		return filepath.Join(d, strings.ReplaceAll(t.Name(), "/", "_")+".data")
	}
	return filepath.Join(t.TempDir(), "perf.data")
}

// checkQuiet fails the test if perf wrote anything on stderr.
func checkQuiet(t *testing.T, what, stderr string) {
	t.Helper()
	if strings.TrimSpace(stderr) != "" {
		t.Errorf("%s wrote on stderr:\n%s", what, stderr)
	}
}

// countSamples returns the SAMPLE count of `perf report --stats`.
func countSamples(t *testing.T, path string) int {
	t.Helper()
	out, stderr := runPerf(t, "report", "--stats", "-i", path)
	checkQuiet(t, "perf report --stats", stderr)
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		if len(f) >= 3 && f[0] == "SAMPLE" && f[1] == "events:" {
			var n int
			for _, c := range f[2] {
				n = n*10 + int(c-'0')
			}
			return n
		}
	}
	t.Fatalf("no SAMPLE count in perf report --stats:\n%s", out)
	return 0
}

// scriptLines returns the non-empty lines of `perf script`.
func scriptLines(t *testing.T, path string, extra ...string) []string {
	t.Helper()
	out, stderr := runPerf(t, append([]string{"script", "-i", path}, extra...)...)
	checkQuiet(t, "perf script", stderr)
	var lines []string
	for line := range strings.Lines(out) {
		if strings.TrimSpace(line) != "" {
			lines = append(lines, line)
		}
	}
	return lines
}

func TestPerfReadsCPUClockRecording(t *testing.T) {
	perfTool(t)
	const n = 1000
	st := perf.SampleIP | perf.SampleTID | perf.SampleTime | perf.SamplePeriod
	userOnly := cpuClockAttr(st)
	userOnly.Flags |= perf.FlagExcludeKernel | perf.FlagExcludeHV
	tests := []struct {
		name       string
		attr       perf.Attr
		event      string
		kernelMmap bool
	}{
		// What hwprof records for user-space call sampling.
		{"user only", userOnly, "cpu-clock:u", false},
		// An event that may sample the kernel needs the kernel MMAP that
		// perf record synthesizes, or perf report warns that kernel
		// address maps were restricted.
		{"kernel too, with kernel mmap", cpuClockAttr(st), "cpu-clock", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := synthetic{
				attrs:      []EventAttr{{Attr: tt.attr, IDs: []uint64{17}, Name: tt.event}},
				samples:    n,
				idOf:       func(int) uint64 { return 17 },
				kernelMmap: tt.kernelMmap,
			}
			path, _ := writeRecording(t, s)

			out, stderr := runPerf(t, "report", "--stdio", "-i", path)
			checkQuiet(t, "perf report --stdio", stderr)
			if !strings.Contains(out, "of event '"+tt.event+"'") || !strings.Contains(out, "true") {
				t.Errorf("perf report does not show %s samples of true:\n%s", tt.event, out)
			}
			if got := countSamples(t, path); got != n {
				t.Errorf("perf report --stats: %d samples, want %d", got, n)
			}
			lines := scriptLines(t, path)
			if len(lines) != n {
				t.Errorf("perf script: %d lines, want %d; first: %q", len(lines), n, lines[:min(3, len(lines))])
			}
			if len(lines) > 0 && (!strings.Contains(lines[0], "true") || !strings.Contains(lines[0], tt.event) || !strings.Contains(lines[0], "/usr/bin/true")) {
				t.Errorf("perf script line %q: want comm, event and dso", lines[0])
			}
		})
	}
}

func TestPerfReadsTwoEventsWithIdentifier(t *testing.T) {
	perfTool(t)
	st := perf.SampleIdentifier | perf.SampleIP | perf.SampleTID | perf.SampleTime | perf.SampleCPU | perf.SamplePeriod
	clock := cpuClockAttr(st)
	clock.Flags |= perf.FlagExcludeKernel | perf.FlagExcludeHV
	task := clock
	task.Config = perf.SWTaskClock
	task.Flags &^= perf.FlagMmap | perf.FlagComm | perf.FlagMmap2 | perf.FlagCommExec
	ids := []uint64{101, 102, 201, 202, 203}
	s := synthetic{
		attrs: []EventAttr{
			{Attr: clock, IDs: ids[:2], Name: "cpu-clock:u"},
			{Attr: task, IDs: ids[2:], Name: "task-clock:u"},
		},
		samples: 500,
		idOf: func(i int) uint64 {
			if i < 0 {
				return ids[0]
			}
			return ids[i%len(ids)]
		},
	}
	path, _ := writeRecording(t, s)

	p := parseFile(t, path)
	if len(p.attrs) != 2 || !slices.Equal(p.ids[0], ids[:2]) || !slices.Equal(p.ids[1], ids[2:]) {
		t.Errorf("attrs section: %d attrs, ids %v", len(p.attrs), p.ids)
	}
	out, stderr := runPerf(t, "report", "--stdio", "-i", path)
	checkQuiet(t, "perf report --stdio", stderr)
	for _, want := range []string{"Samples: 200  of event 'cpu-clock:u'", "Samples: 300  of event 'task-clock:u'"} {
		if !strings.Contains(out, want) {
			t.Errorf("perf report lacks %q:\n%s", want, out)
		}
	}
	counts := map[string]int{}
	for _, line := range scriptLines(t, path, "-F", "event,cpu") {
		counts[strings.Join(strings.Fields(line), " ")]++
	}
	want := map[string]int{
		"[000] cpu-clock:u:": 100, "[001] cpu-clock:u:": 100,
		"[000] task-clock:u:": 150, "[001] task-clock:u:": 150,
	}
	if !maps.Equal(counts, want) {
		t.Errorf("perf script -F event,cpu: %v, want %v", counts, want)
	}
}

func TestPerfHeaderShowsFeatures(t *testing.T) {
	perfTool(t)
	st := perf.SampleIP | perf.SampleTID | perf.SampleTime | perf.SamplePeriod
	s := synthetic{
		attrs:   []EventAttr{{Attr: cpuClockAttr(st), IDs: []uint64{17}, Name: "cpu-clock"}},
		samples: 10,
		idOf:    func(int) uint64 { return 17 },
	}
	s.attrs[0].Attr.Flags |= perf.FlagExcludeKernel
	path, f := writeRecording(t, s)
	f.Cmdline = []string{"/usr/bin/hwprof", "record", "-e", "cpu-clock", "--", "true"}
	f.SampleTimeFirst, f.SampleTimeLast = 2_000_000_000, 2_500_000_000
	path = rewriteFeatures(t, path, s, f)

	out, stderr := runPerf(t, "report", "--header-only", "-i", path)
	checkQuiet(t, "perf report --header-only", stderr)
	want := []string{
		"# hostname : " + f.Hostname + "\n",
		"# os release : " + f.OSRelease + "\n",
		"# perf version : " + f.Version + "\n",
		"# arch : " + f.Arch + "\n",
		fmt.Sprintf("# nrcpus online : %d\n", f.NrCPUsOnline),
		fmt.Sprintf("# nrcpus avail : %d\n", f.NrCPUsAvail),
		"# cpudesc : " + f.CPUDesc + "\n",
		"# cpuid : " + f.CPUID + "\n",
		fmt.Sprintf("# total memory : %d kB\n", f.TotalMemKB),
		"# cmdline : /usr/bin/hwprof record -e cpu-clock -- true \n",
		"# event : name = cpu-clock, , id = { 17 }, type = 1, size = 128, ",
		"# time of first sample : 2.000000\n",
		"# time of last sample : 2.500000\n",
		"# sample duration :    500.000 ms\n",
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("perf report --header-only lacks %q:\n%s", w, out)
		}
	}
	_, missing, _ := strings.Cut(out, "# missing features:")
	missing, _, _ = strings.Cut(missing, "\n")
	for _, feat := range []Feature{FeatBuildID, FeatHostname, FeatOSRelease, FeatVersion, FeatArch,
		FeatNrCPUs, FeatCPUDesc, FeatCPUID, FeatTotalMem, FeatCmdline, FeatEventDesc, FeatSampleTime} {
		if slices.Contains(strings.Fields(missing), feat.String()) {
			t.Errorf("perf lists %v as missing: %s", feat, missing)
		}
	}
	// perf 6.1 has no printer for HEADER_BUILD_ID; buildid-list reads it.
	bl, stderr := runPerf(t, "buildid-list", "-i", path)
	checkQuiet(t, "perf buildid-list", stderr)
	bid := f.BuildIDs[0]
	if w := bid.ID.String() + " " + bid.Path; !strings.Contains(bl, w) {
		t.Errorf("perf buildid-list = %q, want a line %q", bl, w)
	}
}

// rewriteFeatures writes the recording of s again, closing it with f.
func rewriteFeatures(t *testing.T, old string, s synthetic, f Features) string {
	t.Helper()
	path := old + ".2"
	m := textMapping(t, "/usr/bin/true", testBase)
	w, err := Create(path, s.attrs)
	must(t, err)
	writeSynthetic(t, w, s, m, s.samples)
	must(t, w.Close(f))
	return path
}

// An attr that samples BRANCH_STACK makes Close set the BRANCH_STACK
// feature; perf report switches to branch mode only when it is set.
func TestPerfReadsBranchStacks(t *testing.T) {
	perfTool(t)
	st := perf.SampleIP | perf.SampleTID | perf.SampleTime | perf.SamplePeriod | perf.SampleBranchStack
	attr := perf.Attr{
		Type: perf.TypeHardware, Config: perf.HWBranchInstructions, SamplePeriod: 10007,
		SampleType: st, ReadFormat: perf.FormatID | perf.FormatLost,
		BranchSampleType: perf.BranchUser | perf.BranchAnyCall,
		Flags: perf.FlagDisabled | perf.FlagInherit | perf.FlagMmap | perf.FlagComm |
			perf.FlagExcludeKernel | perf.FlagExcludeHV | perf.FlagSampleIDAll | perf.FlagMmap2,
	}
	const n, depth = 50, 4
	m := textMapping(t, "/usr/bin/true", testBase)
	for _, withFeature := range []bool{true, false} {
		name := "with BRANCH_STACK"
		if !withFeature {
			name = "feature bit cleared"
		}
		t.Run(name, func(t *testing.T) {
			path := dataPath(t)
			w, err := Create(path, []EventAttr{{Attr: attr, IDs: []uint64{5}, Name: "branches:u"}})
			must(t, err)
			if !w.branchStack {
				t.Fatal("writer does not plan the BRANCH_STACK feature")
			}
			w.branchStack = withFeature
			side := sampleID{pid: testPID, tid: testPID, time: testT0}
			must(t, w.WriteRecord(commRecord(st, side, "true")))
			must(t, w.WriteRecord(mmap2Record(t, st, side, m)))
			for i := range n {
				var br []branch
				for j := range depth {
					from := m.addr + 0x100 + uint64(j)*0x40
					br = append(br, branch{from: from, to: m.addr + 0x800 + uint64(i%3)*0x20})
				}
				s := sampleID{pid: testPID, tid: testPID, time: testT0 + 100 + uint64(i)}
				must(t, w.WriteRecord(branchSampleRecord(s, m.addr+0x900, 10007, br)))
			}
			f := CollectFeatures()
			f.BuildIDs = []BuildID{trueBuildID(t)}
			must(t, w.Close(f))
			if _, ok := parseFile(t, path).features[FeatBranchStack]; ok != withFeature {
				t.Fatalf("BRANCH_STACK feature present: %v", ok)
			}

			out, stderr := runPerf(t, "report", "--stdio", "-i", path)
			checkQuiet(t, "perf report --stdio", stderr)
			branchMode := strings.Contains(out, "Source Symbol") && strings.Contains(out, "Target Symbol")
			if branchMode != withFeature {
				t.Errorf("perf report in branch mode: %v, want %v:\n%s", branchMode, withFeature, out)
			}
			entries := 0
			for _, line := range scriptLines(t, path, "-F", "brstack") {
				entries += len(strings.Fields(line))
			}
			if entries != n*depth {
				t.Errorf("perf script -F brstack: %d branch entries, want %d", entries, n*depth)
			}
		})
	}
}
