package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/hwprof/hwprof/internal/source"
	"github.com/hwprof/hwprof/internal/testprog"
)

// perfAttrs returns, for each ARGS of argss, the attr block `perf record
// -vv ARGS -- true` prints first (perf prints them before an open fails on
// a machine without the PMU). The perf commands run all at once: each
// spends about a second waiting before it exits (its side-band thread's
// poll timeout), a quarter of that computing.
func perfAttrs(t *testing.T, argss [][]string) []string {
	t.Helper()
	dir := t.TempDir()
	outs := make([][]byte, len(argss))
	var wg sync.WaitGroup
	for i, args := range argss {
		cmd := exec.Command("perf", append(append([]string{"record", "-vv"}, args...), "-o", filepath.Join(dir, fmt.Sprintf("p%d.data", i)), "--", "true")...)
		cmd.Env = append(os.Environ(), "DEBUGINFOD_URLS=")
		wg.Go(func() { outs[i], _ = cmd.CombinedOutput() })
	}
	wg.Wait()
	blocks := make([]string, len(argss))
	for i, out := range outs {
		blocks[i] = perfAttrBlock(t, argss[i], out)
	}
	return blocks
}

// perfAttrBlock returns the first attr block of the output of `perf
// record -vv ARGS`.
func perfAttrBlock(t *testing.T, args []string, out []byte) string {
	t.Helper()
	var b strings.Builder
	in := false
	for line := range strings.Lines(string(out)) {
		switch {
		case strings.TrimSpace(line) == "perf_event_attr:":
			in = true
		case in && strings.HasPrefix(line, "-----"):
			return b.String() // the first block: the event as perf first tries it
		}
		if in {
			b.WriteString(line)
		}
	}
	t.Fatalf("perf record -vv %q printed no attr:\n%s", args, out)
	return ""
}

// `hwprof record --source S --print-attr` prints what `perf record -vv`
// prints for the source's equivalent perf options, for this machine's CPU
// and for models given with --cpu.
func TestSourcePrintAttrMatchesPerf(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("perf"); err != nil {
		t.Skip("perf not installed")
	}
	// The lbr source keeps each entry's branch type where the running
	// kernel has it (PERF_SAMPLE_BRANCH_TYPE_SAVE, Linux 4.14): perf's
	// -j then asks for it too.
	facts := source.Gather()
	anyCall := "any_call,u"
	if facts.KernelAtLeast(source.SaveTypeKernel) {
		anyCall += ",save_type"
	}
	cases := []struct {
		args []string // after record --print-attr
		perf []string
	}{
		// The adaptive period (the default without -c/-F) starts the hardware
		// sources at their planned period and records each sample's period:
		// perf's -P; and the activation key's caller-saved registers.
		{[]string{"--source", "lbr", "--cpu", "GenuineIntel-6-5E"}, []string{"-e", "r02c4:u", "-c", "100003", "-P", "-j", anyCall, "-g", keyRegs}},
		{[]string{"--source", "lbr", "--cpu", "GenuineIntel-6-3C"}, []string{"-e", "r02c4:u", "-c", "100003", "-P", "-j", anyCall, "-g", keyRegs}},
		{[]string{"--source", "lbr", "--cpu", "AuthenticAMD-25-61"}, []string{"-e", "cycles:u", "-c", "1000003", "-P", "-j", anyCall, "-g", keyRegs}},
		{[]string{"--source", "lbr", "--cpu", "GenuineIntel-6-5E", "--no-adaptive"}, []string{"-e", "r02c4:u", "-c", "100003", "-j", anyCall, "-g", leafRegs}},
		{[]string{"--source", "lbr", "--cpu", "GenuineIntel-6-55-7", "-c", "20011", "--call-graph", "dwarf"},
			[]string{"-e", "r02c4:u", "-c", "20011", "-j", anyCall, "--call-graph", "dwarf"}},
		{[]string{"--source", "lbr", "--cpu", "GenuineIntel-6-7E", "-j", "any,u"}, []string{"-e", "r02c4:u", "-c", "100003", "-P", "-j", "any,u", "-g", keyRegs}},
		{[]string{"--source", "calls", "--cpu", "GenuineIntel-6-8F"}, []string{"-e", "r02c4:upp", "-c", "10007", "-P", "-g", keyRegs}},
		// The timer's adaptive cpu-clock also samples STREAM_ID, which no
		// perf option asks for: compared without adaptation.
		{[]string{"--source", "timer", "--no-adaptive"}, []string{"-e", "cpu-clock", "-g", leafRegs}},
		{[]string{"--source", "timer", "-F", "999"}, []string{"-e", "cpu-clock", "-g", "-F", "999", leafRegs}},
	}
	var perfArgs [][]string
	for _, tc := range cases {
		perfArgs = append(perfArgs, tc.perf)
	}
	wants := perfAttrs(t, perfArgs)
	for i, tc := range cases {
		r := hwprof(t, append(append([]string{"record", "--print-attr"}, tc.args...), "--", "true")...)
		if r.code != 0 {
			t.Errorf("%q: exit %d: %s", tc.args, r.code, r.stderr)
			continue
		}
		got := r.stdout
		if slices.Contains(tc.perf, leafRegs) || slices.Contains(tc.perf, keyRegs) {
			got = withoutLeafStack(t, tc.args, got)
		}
		if want := wants[i]; got != want {
			t.Errorf("%q:\nhwprof:\n%sperf record -vv %s:\n%s", tc.args, got, strings.Join(tc.perf, " "), want)
		}
	}
}

// On a machine without a hardware PMU (such as this project's VMs) the lbr
// and calls sources fail with what is missing and what works instead.
func TestSourceUnavailable(t *testing.T) {
	if _, err := os.Stat("/sys/bus/event_source/devices/cpu"); err == nil {
		t.Skip("this machine has a cpu PMU: the hardware sources may work")
	}
	for _, src := range []string{"lbr", "calls"} {
		r := hwprof(t, "record", "--source", src, "-o", filepath.Join(t.TempDir(), "x.data"), "--", "true")
		if r.code != exitUsage {
			t.Errorf("--source %s: exit %d, want %d", src, r.code, exitUsage)
		}
		for _, want := range []string{"source " + src + " does not work here", "no hardware PMU", "/sys/bus/event_source/devices", "--source timer"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("--source %s: message lacks %q:\n%s", src, want, r.stderr)
			}
		}
	}
	// --print-attr still shows what would be opened, with a note.
	r := hwprof(t, "record", "--source", "lbr", "--print-attr", "--", "true")
	if r.code != 0 || !strings.Contains(r.stdout, "branch_sample_type") || !strings.Contains(r.stderr, "does not work here") {
		t.Errorf("print-attr of an unavailable source: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

func TestSourceFlagConflicts(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--source", "timer", "-e", "cycles"}, "both choose the events"},
		{[]string{"--source", "timer", "-j", "any_call"}, "-j adds a branch stack"},
		{[]string{"--source", "calls", "-b", "--cpu", "GenuineIntel-6-5E", "--print-attr"}, "-b adds a branch stack"},
		{[]string{"--source", "exact", "-c", "1000"}, "does not apply"},
		{[]string{"--source", "exact", "-g"}, "does not apply"},
		{[]string{"--source", "pebs"}, "unknown source"},
		{[]string{"--cpu", "GenuineIntel-6-5E"}, "--print-attr only"},
		{[]string{"--source", "lbr", "--cpu", "Intel-x", "--print-attr"}, "cpu id"},
	} {
		r := hwprof(t, append(append([]string{"record", "-o", filepath.Join(t.TempDir(), "x.data")}, tc.args...), "--", "true")...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.msg) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tc.args, r.code, r.stderr, exitUsage, tc.msg)
		}
	}
}

// Without -e and --source, hwprof records with the default source and says
// which and why in one line (not with -q); the timer source records here.
func TestSourceDefault(t *testing.T) {
	t.Parallel() // its own programs and files
	needPerfEvents(t)
	dir := t.TempDir()
	r := hwprof(t, "record", "-o", filepath.Join(dir, "a.data"), "--", "true")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var line string
	for l := range strings.Lines(r.stderr) {
		if strings.HasPrefix(l, "hwprof: source ") {
			if line != "" {
				t.Errorf("two source lines:\n%s", r.stderr)
			}
			line = l
		}
	}
	if line == "" {
		t.Fatalf("no line saying which source was chosen:\n%s", r.stderr)
	}
	if _, err := os.Stat("/sys/bus/event_source/devices/cpu"); err != nil && !strings.Contains(line, "source timer, ") {
		t.Errorf("without a cpu PMU the default should be timer: %s", line)
	}
	q := hwprof(t, "record", "-q", "-o", filepath.Join(dir, "b.data"), "--", "true")
	if q.code != 0 || strings.Contains(q.stderr, "source") {
		t.Errorf("-q: exit %d, stderr %q", q.code, q.stderr)
	}
	timer := hwprof(t, "record", "--source", "timer", "-o", filepath.Join(dir, "c.data"), "--", hwprofBin, workloadArg, "300ms")
	if timer.code != 0 || !strings.Contains(timer.stderr, "source timer: software cpu-clock") {
		t.Errorf("--source timer: exit %d: %s", timer.code, timer.stderr)
	}
	if n := samplesWritten(t, timer.stderr); n == 0 {
		t.Errorf("--source timer recorded no samples:\n%s", timer.stderr)
	}
}

// --source exact records here (uprobes work on these VMs as root), with
// the source line saying so.
func TestSourceExactRecords(t *testing.T) {
	needUprobes(t)
	bin := testprog.Build(t, "c/fig1.c", "-O0")
	dir := t.TempDir()
	r := hwprof(t, "record", "--source", "exact", "-o", filepath.Join(dir, "x.data"), "--", bin, "3")
	if r.code != 0 || !strings.Contains(r.stderr, "source exact: uprobe events") {
		t.Fatalf("exit %d:\n%s", r.code, r.stderr)
	}
	// work calls shortA and shortB once per round, and main and work run
	// once (3 ms of CPU: at least one round)
	rounds := roundsRun(t, r.stdout)
	if n := samplesWritten(t, r.stderr); uint64(n) < 2*rounds+2 {
		t.Errorf("%d samples, want at least %d probe hits (%d rounds):\n%s", n, 2*rounds+2, rounds, r.stderr)
	}
}

// leafRegs is the perf option for the user registers the frame-pointer
// sources sample with their stack copy (source.LeafRegsUser).
const leafRegs = "--user-regs=ip,sp,bp,bx,r12,r13,r14,r15"

// keyRegs is leafRegs with the caller-saved registers that an event whose
// period is tuned also samples for the activation key
// (record.ScratchRegsUser).
const keyRegs = leafRegs + ",ax,cx,dx,si,di,r8,r9,r10,r11"

// withoutLeafStack removes the small user-stack copy of the leaf repair
// (source.LeafStackBytes), which no perf option adds to a frame-pointer
// callchain, from a printed attr, after checking it is there.
func withoutLeafStack(t *testing.T, args []string, attr string) string {
	t.Helper()
	var b strings.Builder
	for line := range strings.Lines(attr) {
		if f := strings.Fields(line); len(f) != 2 || f[0] != "sample_stack_user" {
			b.WriteString(strings.Replace(line, "|STACK_USER", "", 1))
		}
	}
	if v, _ := attrField(attr, "sample_stack_user"); v != strconv.Itoa(source.LeafStackBytes) {
		t.Errorf("%q: no sample_stack_user %d in:\n%s", args, source.LeafStackBytes, attr)
	}
	return b.String()
}

// attrField returns the value of field name in an attr printed as perf
// record -vv prints it ("  name   value" lines).
func attrField(attr, name string) (string, bool) {
	for line := range strings.Lines(attr) {
		if f := strings.Fields(line); len(f) == 2 && f[0] == name {
			return f[1], true
		}
	}
	return "", false
}

// --leaf-copy sets the stack copy of every frame-pointer call graph, the
// sources' and -e's (0: none, and no user registers either: perf's attr),
// and refuses sizes the kernel would not take and events it does not
// apply to.
func TestLeafCopyFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string // after record --print-attr
		want string   // sample_stack_user, "" for none
		regs bool     // REGS_USER sampled
	}{
		{[]string{"--source", "timer"}, strconv.Itoa(source.LeafStackBytes), true},
		{[]string{"--source", "timer", "--leaf-copy", "64"}, "64", true},
		{[]string{"--source", "timer", "--leaf-copy", "1024"}, "1024", true},
		{[]string{"--source", "timer", "--leaf-copy", "0", "--no-adaptive"}, "", false},
		{[]string{"--source", "timer", "--leaf-copy", "0", "-F", "4000"}, "", false},
		{[]string{"--source", "timer", "-g", "--leaf-copy", "256"}, "256", true},
		{[]string{"--source", "timer", "--call-graph", "fp,64"}, strconv.Itoa(source.LeafStackBytes), true},
		// perf's flags: a frame-pointer call graph takes the copy too
		{[]string{"-e", "cpu-clock", "-g"}, strconv.Itoa(source.LeafStackBytes), true},
		{[]string{"-e", "cpu-clock", "-g", "--leaf-copy", "64"}, "64", true},
		{[]string{"-e", "cpu-clock", "-g", "--leaf-copy", "0", "--no-adaptive"}, "", false},
		{[]string{"-e", "cpu-clock", "--call-graph", "fp", "--leaf-copy", "0", "-c", "10000"}, "", false},
		{[]string{"-e", "cpu-clock"}, "", false},
		{[]string{"-e", "cpu-clock:k", "-g"}, "", false},
		{[]string{"-e", "cpu-clock", "--call-graph", "dwarf,4096"}, "4096", true},
	} {
		r := hwprof(t, append(append([]string{"record", "--print-attr"}, tc.args...), "--", "true")...)
		if r.code != 0 {
			t.Fatalf("%q: exit %d: %s", tc.args, r.code, r.stderr)
		}
		got, ok := attrField(r.stdout, "sample_stack_user")
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("%q: sample_stack_user %q, want %q:\n%s", tc.args, got, tc.want, r.stdout)
		}
		if regs := strings.Contains(r.stdout, "REGS_USER"); regs != tc.regs {
			t.Errorf("%q: REGS_USER sampled %v, want %v:\n%s", tc.args, regs, tc.regs, r.stdout)
		}
	}
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--leaf-copy", "12"}, "multiple of 8"},
		{[]string{"--leaf-copy", "40000"}, "at most 32768"},
		{[]string{"--leaf-copy", "0"}, "without the registers and stack word of its activation key"},
		{[]string{"-e", "cpu-clock", "-g", "--leaf-copy", "0"}, "without the registers and stack word of its activation key"},
		{[]string{"-e", "cpu-clock", "--leaf-copy", "64"}, "no event records one: add -g"},
		{[]string{"--source", "timer", "--call-graph", "dwarf", "--leaf-copy", "64"}, "no event records one"},
		{[]string{"--source", "exact", "--leaf-copy", "64"}, "--source exact copies the return address only"},
	} {
		r := hwprof(t, append(append([]string{"record", "--print-attr"}, tc.args...), "--", "true")...)
		if r.code == 0 || !strings.Contains(r.stderr, tc.msg) {
			t.Errorf("%q: exit %d, want an error saying %q: %s", tc.args, r.code, tc.msg, r.stderr)
		}
	}
}

// hwprof check tries the events record opens by default: its flags are
// record's, defaults included (--leaf-copy's is not its zero value), so
// the events are the same.
func TestCheckTriesRecordDefaults(t *testing.T) {
	var rec recordFlags
	fs := flag.NewFlagSet("record", flag.ContinueOnError)
	rec.register(fs)
	if err := fs.Parse([]string{"--source", "timer"}); err != nil {
		t.Fatal(err)
	}
	rec.set = setFlags(fs)
	want, _, err := rec.sourceOptions([]string{"true"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	try, err := tryFlags(source.Timer)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := try.sourceOptions([]string{"true"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Events) != len(want.Events) || len(got.Events) == 0 {
		t.Fatalf("check builds %d events, record %d", len(got.Events), len(want.Events))
	}
	for i := range want.Events {
		if g, w := fmt.Sprintf("%+v", got.Events[i].Attr), fmt.Sprintf("%+v", want.Events[i].Attr); g != w {
			t.Errorf("event %d: check tries\n%s\nrecord opens\n%s", i, g, w)
		}
	}
	if a := want.Events[0].Attr; a.SampleStackUser != source.LeafStackBytes {
		t.Errorf("record's timer event copies %d bytes of stack, want %d", a.SampleStackUser, source.LeafStackBytes)
	}
}
