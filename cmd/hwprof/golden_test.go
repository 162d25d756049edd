package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/hwprof/hwprof/buildid"
	"github.com/hwprof/hwprof/internal/fixtures"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/perfdata"
	"github.com/hwprof/hwprof/perf/synth"
	"github.com/hwprof/hwprof/symbolize"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// goldenModes are the commands and options whose output is kept in
// testdata/golden/<name>.txt: one section per input, each with the exit
// status, the start of stderr, the number of lines and a SHA-256 of
// stdout, and its first goldenHead lines (the files stay small while the
// hash covers all of it; paths of the test's files are written as $N).
var goldenModes = []struct {
	name string
	args []string
}{
	{"report-text", []string{"report"}},
	{"report-json", []string{"report", "--format", "json"}},
	{"script", []string{"script"}},
	{"script-F-perf-fields", []string{"script", "-F", "comm,pid,tid,cpu,time,period,event,ip,sym,symoff,dso,brstack"}},
	{"dump", []string{"dump"}},
}

const (
	goldenHead   = 12  // lines of stdout kept
	goldenStderr = 6   // lines of stderr kept
	goldenWidth  = 160 // bytes of a line kept
)

// goldenInput is one recording the golden commands read, with the
// options that find its objects.
type goldenInput struct {
	name string // section name: the fixture's path under the fixtures folder, or "synthetic"
	file string
	args []string // for report and script: where objects are looked for
}

// TestGolden runs report (text, JSON), script (default, perf's -F
// fields) and dump over a synthetic recording this test writes and over
// every recording in ../shared/fixtures (skipped, with the reason, when
// that folder is absent), and compares each output with its golden file.
// Objects are looked for under an empty --symfs (so no file of this
// machine is read for a recording made elsewhere), except the profiled
// programs the fixture folder holds. With -update the golden files are
// rewritten.
func TestGolden(t *testing.T) {
	t.Parallel()
	checkPretendKernel(t)
	tmp := t.TempDir()
	syn := goldenSynthetic(t, tmp)
	t.Run("synthetic", func(t *testing.T) { checkGolden(t, "synthetic", []goldenInput{syn}, tmp) })
	t.Run("fixtures", func(t *testing.T) {
		fx := fixtures.Dir(t)
		checkGolden(t, "fixtures", fixtureInputs(t, fx, tmp), tmp, fx)
	})
}

// fixtureInputs lists every recording of EXPECTED.tsv with the options
// that find its objects.
func fixtureInputs(t *testing.T, fx, tmp string) []goldenInput {
	empty := filepath.Join(tmp, "empty-symfs")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	auto := filepath.Join(fx, "autofdo")
	lbrSymfs := filepath.Join(tmp, "lbr-symfs")
	fixtures.Place(t, filepath.Join(auto, "test.binary"), filepath.Join(lbrSymfs, "export/hda3/tmp/test.binary"))
	propeller := filepath.Join(auto, "propeller_sample_1.bin")
	bid, err := buildid.Read(propeller)
	id := bid.String()
	if err != nil || id == "" {
		t.Fatalf("build-id of %s: %q, %v", propeller, id, err)
	}
	debugDir := filepath.Join(tmp, "debug-dir")
	fixtures.Place(t, propeller, filepath.Join(debugDir, id))
	special := map[string][]string{
		"autofdo/test.lbr":                     {"--symfs", lbrSymfs},
		"autofdo/propeller_sample_1.perfdata1": {"--symfs", empty, "--debug-dir", debugDir},
	}
	f, err := os.Open(filepath.Join(fx, "EXPECTED.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var in []goldenInput
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, _, _ := strings.Cut(sc.Text(), "\t")
		if name == "" || name == "file" {
			continue
		}
		args, ok := special[name]
		if !ok {
			args = []string{"--symfs", empty}
		}
		in = append(in, goldenInput{name: name, file: filepath.Join(fx, name), args: args})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(in) == 0 {
		t.Fatal("no recordings listed in EXPECTED.tsv")
	}
	return in
}

// checkGolden runs every mode over the inputs and compares (or, with
// -update, writes) testdata/golden/<set>-<mode>.txt. Each path in hide
// is printed as $N in the golden text.
func checkGolden(t *testing.T, set string, inputs []goldenInput, hide ...string) {
	for _, m := range goldenModes {
		t.Run(m.name, func(t *testing.T) {
			var b strings.Builder
			for _, in := range inputs {
				args := append(append(append([]string(nil), m.args...), "-i", in.file), in.args...)
				if m.name == "dump" {
					args = append(append([]string(nil), m.args...), "-i", in.file)
				}
				r := hwprof(t, args...)
				writeGoldenSection(&b, in.name, r, hide)
			}
			path := filepath.Join("testdata", "golden", set+"-"+m.name+".txt")
			compareGolden(t, path, b.String())
		})
	}
}

func writeGoldenSection(b *strings.Builder, name string, r result, hide []string) {
	clean := func(s string) string {
		for i, h := range hide {
			s = strings.ReplaceAll(s, h, fmt.Sprintf("$%d", i))
		}
		// the regular expressions only where they can match (each
		// ReplaceAllString copies the whole output, matched or not)
		if strings.Contains(s, "hwprof-vdso-") {
			s = vdsoFileRE.ReplaceAllString(s, "hwprof-vdso-N.so")
		}
		if strings.Contains(s, "the running kernel") {
			s = runningKernelRE.ReplaceAllString(s, "the running kernel $$KERNEL_BUILD_ID")
		}
		for _, m := range machineFacts() {
			s = strings.ReplaceAll(s, m[0], m[1])
		}
		return s
	}
	fmt.Fprintf(b, "=== %s\nexit %d\n", name, r.code)
	errLines := lines(clean(r.stderr))
	fmt.Fprintf(b, "stderr: %d lines\n", len(errLines))
	for _, l := range errLines[:min(len(errLines), goldenStderr)] {
		fmt.Fprintf(b, "! %s\n", l)
	}
	stdout := clean(r.stdout)
	out := lines(stdout)
	fmt.Fprintf(b, "stdout: %d lines, sha256 %x\n", len(out), sha256.Sum256([]byte(stdout)))
	for _, l := range out[:min(len(out), goldenHead)] {
		if len(l) > goldenWidth {
			l = l[:goldenWidth] + "..."
		}
		fmt.Fprintf(b, "| %s\n", l)
	}
}

// vdsoFileRE matches the temporary file the vdso is written to.
var vdsoFileRE = regexp.MustCompile(`hwprof-vdso-[0-9]+\.so`)

// runningKernelRE matches what a warning says of the running kernel's
// build-id: the id (none when the kernel has no build-id note), or why it
// is unknown.
var runningKernelRE = regexp.MustCompile(`the running kernel(?:'s is unknown \([^)]*\)| [0-9a-f]*)`)

// machineFacts are the running kernel's release and the host's name (as
// uname(2) gives them, where hwprof takes them from), and what the golden
// files say instead, so that they hold on another machine
// (TestGoldenOnAnotherKernel checks that they do).
func machineFacts() [][2]string {
	var out [][2]string
	var uts unix.Utsname
	if unix.Uname(&uts) != nil {
		return nil
	}
	if rel := unix.ByteSliceToString(uts.Release[:]); rel != "" {
		out = append(out, [2]string{"this is " + rel, "this is $RELEASE"})
	}
	if host := unix.ByteSliceToString(uts.Nodename[:]); host != "" {
		out = append(out, [2]string{"this is " + host, "this is $HOST"})
	}
	return out
}

func lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// compareGolden compares got with the file at path section by section
// (sections start with "=== "), naming the inputs that differ.
func compareGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) == got {
		return
	}
	ws, gs := goldenSections(string(want)), goldenSections(got)
	bad := 0
	for name, g := range gs {
		if w, ok := ws[name]; !ok {
			t.Errorf("%s: %s is new:\n%s", path, name, g)
		} else if w != g {
			if bad++; bad <= 5 {
				t.Errorf("%s: %s differs:\n--- want\n%s--- got\n%s", path, name, w, g)
			}
		}
	}
	for name := range ws {
		if _, ok := gs[name]; !ok {
			t.Errorf("%s: %s is gone", path, name)
		}
	}
	if bad > 5 {
		t.Errorf("%s: %d sections differ", path, bad)
	}
}

func goldenSections(s string) map[string]string {
	out := map[string]string{}
	for _, sec := range strings.Split(s, "=== ")[1:] {
		name, _, _ := strings.Cut(sec, "\n")
		out[name] = "=== " + sec
	}
	return out
}

// goldenSynthetic writes a recording of one process whose samples are
// in JIT code named by a perf map, in a program file that is absent, in
// the kernel (named by a kallsyms under the --symfs) and in no mapping,
// with frame-pointer callchains; and the --symfs that names them.
func goldenSynthetic(t *testing.T, tmp string) goldenInput {
	t.Helper()
	const (
		pid     = 4242
		jit     = 0x7f0000000000
		prog    = 0x400000
		kernel  = 0xffffffff81000000
		progBin = "/opt/synthetic/bin/prog"
	)
	symfs := filepath.Join(tmp, "synthetic-symfs")
	write := func(name, text string) {
		p := filepath.Join(symfs, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(symbolize.PerfMapPath(pid), "7f0000001000 100 jit_hot\n7f0000001100 80 jit_cold\n7f0000002000 40 jit_stub\n")
	write("proc/kallsyms", "ffffffff81000000 T _text\nffffffff81001000 T do_syscall_64\nffffffff81002000 T schedule\nffffffff81003000 T _etext\n")

	st := perf.SampleIP | perf.SampleTID | perf.SampleTime | perf.SampleCPU | perf.SamplePeriod | perf.SampleCallchain
	attr := perf.Attr{Type: perf.TypeSoftware, Config: perf.SWCPUClock, SamplePeriod: 10000, SampleType: st,
		Flags: perf.FlagSampleIDAll | perf.FlagMmap2}
	path := filepath.Join(tmp, "synthetic.data")
	w, err := perfdata.Create(path, []perfdata.EventAttr{{Attr: attr, IDs: []uint64{1}, Name: "cpu-clock"}})
	if err != nil {
		t.Fatal(err)
	}
	rec := func(b []byte) {
		t.Helper()
		if err := w.WriteRecord(b); err != nil {
			t.Fatal(err)
		}
	}
	sid := synth.SampleID{PID: pid, TID: pid, Time: 1}
	rec(synth.AppendComm(nil, synth.Thread{PID: pid, TID: pid, Comm: "synthetic"}, st, sid))
	rec(synth.AppendKernelMmap(nil, synth.KernelText{Start: kernel, End: kernel + 0x3000, RefSym: "_text", RefAddr: kernel},
		st, synth.SampleID{PID: ^uint32(0), TID: ^uint32(0), Time: 1}))
	rec(synth.AppendMmap2(nil, pid, pid, synth.Mapping{Start: prog, End: prog + 0x2000, Prot: unix.PROT_READ | unix.PROT_EXEC,
		Flags: unix.MAP_PRIVATE, Path: progBin}, st, sid))
	rec(synth.AppendMmap2(nil, pid, pid, synth.Mapping{Start: jit, End: jit + 0x10000, Prot: unix.PROT_READ | unix.PROT_EXEC,
		Flags: unix.MAP_PRIVATE, Path: "//anon"}, st, sid))
	stacks := [][]uint64{
		{perf.ContextUser, jit + 0x1010, jit + 0x2008, prog + 0x123, prog + 0x456},
		{perf.ContextUser, jit + 0x1120, jit + 0x2008, prog + 0x123, prog + 0x456},
		{perf.ContextKernel, kernel + 0x2010, kernel + 0x1040, perf.ContextUser, prog + 0x200, prog + 0x456},
		{perf.ContextUser, prog + 0x300, prog + 0x456},
		{perf.ContextUser, 0x10000, prog + 0x456}, // in no mapping
	}
	for i := range 40 {
		rec(syntheticSample(stacks[i*7%len(stacks)], pid, 1_000_000_000+uint64(i)*1_000_000, uint32(i%2), 10000))
	}
	zeroID, err := buildid.New(make([]byte, 20)) // perf's all-zero id: no build-id
	if err != nil {
		t.Fatal(err)
	}
	f := perfdata.Features{BuildIDs: []perfdata.BuildID{{PID: -1, Misc: 2, Path: progBin, ID: zeroID}}}
	if err := w.Close(f); err != nil {
		t.Fatal(err)
	}
	return goldenInput{name: "synthetic", file: path, args: []string{"--symfs", symfs}}
}

// pretendKernelEnv, in the environment of a test process, is the build-id
// TestGoldenOnAnotherKernel gave the running kernel for it.
const pretendKernelEnv = "HWPROF_TEST_PRETEND_KERNEL"

// TestGoldenOnAnotherKernel runs TestGolden again on a machine that
// pretends to be another: in a mount and UTS namespace where the running
// kernel has another build-id (/sys/kernel/notes), or none at all, another
// release (setarch --uname-2.6: uname(2) says 2.6.N, and
// /proc/sys/kernel/osrelease the same) and another host name. The goldens
// must hold there unchanged: they depend on no fact of this host.
func TestGoldenOnAnotherKernel(t *testing.T) {
	t.Parallel()
	if os.Getenv(pretendKernelEnv) != "" {
		t.Skip("this process is the pretended machine")
	}
	if os.Geteuid() != 0 {
		t.Skip("not root: cannot bind-mount over /sys/kernel/notes")
	}
	if err := exec.Command("unshare", "--mount", "--uts", "true").Run(); err != nil {
		t.Skipf("unshare --mount --uts does not work here: %v", err)
	}
	var uts unix.Utsname
	if err := unix.Uname(&uts); err != nil {
		t.Fatal(err)
	}
	arch := unix.ByteSliceToString(uts.Machine[:])
	rel, err := exec.Command("setarch", arch, "--uname-2.6", "uname", "-r").Output()
	if err != nil {
		t.Skipf("setarch %s --uname-2.6 does not work here: %v", arch, err)
	}
	release := strings.TrimSpace(string(rel))
	dir := t.TempDir()
	releaseFile := filepath.Join(dir, "osrelease")
	if err := os.WriteFile(releaseFile, []byte(release+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := make([]byte, 20)
	for i := range other {
		other[i] = byte(0xa0 + i)
	}
	for _, tc := range []struct {
		name string
		id   []byte // nil: the kernel has no build-id note
	}{{"other-build-id", other}, {"no-build-id", nil}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			notes := filepath.Join(dir, tc.name+".notes")
			if err := os.WriteFile(notes, kernelNotes(tc.id), 0o644); err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf("%x", tc.id)
			if tc.id == nil {
				want = "none"
			}
			cmd := exec.Command("unshare", "--mount", "--uts", "--propagation", "private", "sh", "-c",
				`mount --bind "$1" /sys/kernel/notes && mount --bind "$2" /proc/sys/kernel/osrelease && hostname pretend-host && shift 2 && exec "$@"`,
				"sh", notes, releaseFile, "setarch", arch, "--uname-2.6", os.Args[0], "-test.run", "^TestGolden$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), pretendKernelEnv+"="+want+" "+release)
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "--- PASS: TestGolden ") || !strings.Contains(string(out), "on a pretended kernel: build-id "+want) {
				t.Fatalf("TestGolden on a kernel with build-id %s, release %s, host pretend-host: %v\n%s", want, release, err, out)
			}
		})
	}
}

// checkPretendKernel fails the test when this process was to run on a
// pretended kernel (TestGoldenOnAnotherKernel) and hwprof would see
// another one.
func checkPretendKernel(t *testing.T) {
	env := os.Getenv(pretendKernelEnv)
	if env == "" {
		return
	}
	want, wantRelease, _ := strings.Cut(env, " ")
	id, err := buildid.Kernel()
	got := id.String()
	if id.IsZero() {
		got = "none"
	}
	var uts unix.Utsname
	unix.Uname(&uts)
	release, host := unix.ByteSliceToString(uts.Release[:]), unix.ByteSliceToString(uts.Nodename[:])
	if err != nil || got != want || host != "pretend-host" || release != wantRelease {
		t.Fatalf("the pretended kernel is not in place: build-id %s (%v), want %s; release %s, want %s; host %s", got, err, want, release, wantRelease, host)
	}
	t.Logf("on a pretended kernel: build-id %s, release %s, host %s", got, release, host)
}

// kernelNotes is /sys/kernel/notes of a kernel with build-id id (nil: a
// kernel with only its "Linux" note).
func kernelNotes(id []byte) []byte {
	note := func(name string, typ uint32, desc []byte) []byte {
		b := binary.LittleEndian.AppendUint32(nil, uint32(len(name)+1))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(desc)))
		b = binary.LittleEndian.AppendUint32(b, typ)
		b = append(b, name...)
		b = append(b, make([]byte, 4-len(name)%4)...) // NUL, padded to 4
		b = append(b, desc...)
		return append(b, make([]byte, (4-len(desc)%4)%4)...)
	}
	b := note("Linux", 6, []byte("Linux\x00\x00\x00")) // a kernel's other notes come first
	if id != nil {
		b = append(b, note("GNU", 3, id)...) // NT_GNU_BUILD_ID
	}
	return b
}

// syntheticSample is a SAMPLE record of the sample type IP, TID, TIME,
// CPU, PERIOD, CALLCHAIN: a sample in process pid (its main thread) at
// time t on cpu, of period, whose callchain is chain (a context marker
// first, PERF_CONTEXT_KERNEL or _USER, which sets the record's misc; the
// sampled IP second).
func syntheticSample(chain []uint64, pid uint32, t uint64, cpu uint32, period uint64) []byte {
	le := binary.LittleEndian
	misc := uint16(perf.MiscUser)
	if chain[0] == perf.ContextKernel {
		misc = perf.MiscKernel
	}
	b := make([]byte, 8, 48+8*len(chain))
	le.PutUint32(b[0:], uint32(perf.RecordSample))
	le.PutUint16(b[4:], misc)
	b = le.AppendUint64(b, chain[1])
	b = le.AppendUint32(b, pid)
	b = le.AppendUint32(b, pid)
	b = le.AppendUint64(b, t)
	b = le.AppendUint32(b, cpu)
	b = le.AppendUint32(b, 0) // res
	b = le.AppendUint64(b, period)
	b = le.AppendUint64(b, uint64(len(chain)))
	for _, c := range chain {
		b = le.AppendUint64(b, c)
	}
	le.PutUint16(b[6:], uint16(len(b)))
	return b
}
