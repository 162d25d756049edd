package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/hwprof/hwprof/internal/testprog"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/event"
	"github.com/hwprof/hwprof/perf/perfdata"
)

// The tests of this file run hwprof as an ordinary user (uid and gid
// 65534, no groups, no capabilities), as a newcomer does, and derive what
// must happen from this machine's kernel.perf_event_paranoid, read here
// and never changed (other tests run at the same time).

const nobody = 65534

// capDACOverride is CAP_DAC_OVERRIDE of <linux/capability.h>: with it
// alone an ordinary user may write tracefs, and nothing else changes.
const capDACOverride = 1

// identity is who hwprof runs as.
type identity struct {
	name string
	caps []uintptr // ambient capabilities
}

var (
	ordinary = identity{name: "ordinary user"}
	// tracefsUser is an ordinary user whom an administrator let write
	// tracefs (here through CAP_DAC_OVERRIDE, which changes nothing of
	// what perf_event_open allows).
	tracefsUser = identity{name: "ordinary user with tracefs access", caps: []uintptr{capDACOverride}}
)

// needRootToDrop skips where the test cannot switch to another uid.
func needRootToDrop(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("not root: cannot run hwprof as another, unprivileged uid")
	}
}

// paranoidLevel reads kernel.perf_event_paranoid, skipping where the
// kernel has no perf events.
func paranoidLevel(t *testing.T) int {
	t.Helper()
	p, err := perf.Paranoid()
	if err != nil {
		t.Skipf("no perf events in this kernel: %v", err)
	}
	return p
}

// userDir is a temporary directory the unprivileged uid may write.
func userDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	openToAll(t, dir)
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}

// openToAll lets the unprivileged uid reach and execute path, made by the
// tests: it and the directories above it up to the temporary directory
// (0700 when the tests make them) become 0755.
func openToAll(t *testing.T, path string) {
	t.Helper()
	tmp := filepath.Clean(os.TempDir())
	for p := filepath.Clean(path); p != tmp && strings.HasPrefix(p, tmp+"/"); p = filepath.Dir(p) {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// userProgram builds testdata/c/timed.c (it runs for 300 ms of CPU) where
// the unprivileged uid can run it.
func userProgram(t *testing.T) string {
	t.Helper()
	bin := testprog.Build(t, "c/timed.c", "-O1", "-fno-omit-frame-pointer")
	openToAll(t, bin)
	openToAll(t, hwprofBin)
	return bin
}

// hwprofAs runs hwprof as id in dir.
func hwprofAs(t *testing.T, id identity, dir string, args ...string) result {
	t.Helper()
	cmd := exec.Command(hwprofBin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Credential:  &syscall.Credential{Uid: nobody, Gid: nobody, Groups: []uint32{}},
		AmbientCaps: id.caps,
	}
	return runCmd(t, cmd)
}

const userOnlyNote = "recording user space only"

// An ordinary user records a program as perf record lets them: at
// paranoid 2 user space only, saying so once, and the file holds the
// attr that was opened; at 3 and above not at all, with an error naming
// the sysctl value and the capability that would allow it.
func TestRecordAsOrdinaryUser(t *testing.T) {
	needRootToDrop(t)
	p := paranoidLevel(t)
	prog := userProgram(t)
	dir := userDir(t)
	out := filepath.Join(dir, "u.data")
	r := hwprofAs(t, ordinary, dir, "record", "--source", "timer", "-o", out, "--", prog)
	t.Logf("paranoid %d:\n%s", p, r.stderr)
	if p > perf.ParanoidUser {
		if r.code == 0 {
			t.Fatalf("recorded at perf_event_paranoid %d without CAP_PERFMON", p)
		}
		for _, want := range []string{"kernel.perf_event_paranoid=2", "CAP_PERFMON"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("the error does not name %q:\n%s", want, r.stderr)
			}
		}
		return
	}
	if r.code != 0 {
		t.Fatalf("exit %d at perf_event_paranoid %d:\n%s", r.code, p, r.stderr)
	}
	wantUser := p > perf.ParanoidKernel
	if n := strings.Count(r.stderr, userOnlyNote); n != map[bool]int{true: 1, false: 0}[wantUser] {
		t.Errorf("the user-only note appears %d times at paranoid %d:\n%s", n, p, r.stderr)
	}
	if wantUser && !strings.Contains(r.stderr, "kernel.perf_event_paranoid=1") {
		t.Errorf("the note does not say what would add the kernel:\n%s", r.stderr)
	}
	rd, err := perfdata.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	attrs := rd.Attrs()
	if len(attrs) != 1 {
		t.Fatalf("%d events in the file", len(attrs))
	}
	a := attrs[0]
	if a.Attr.Flags.Has(perf.FlagExcludeKernel) != wantUser || a.Attr.Flags.Has(perf.FlagExcludeHV) != wantUser {
		t.Errorf("file attr flags %#x: exclude_kernel/exclude_hv should be %v at paranoid %d", a.Attr.Flags, wantUser, p)
	}
	if wantUser && a.Name != "cpu-clock:u" {
		t.Errorf("event named %q in the file, want perf's cpu-clock:u", a.Name)
	}
	var s perf.Sample
	samples := 0
	for rd.Next() {
		if rd.Record().Type() != perf.RecordSample {
			continue
		}
		if err := rd.DecodeSample(&s); err != nil {
			t.Fatal(err)
		}
		samples++
		if wantUser && rd.Record().Header().CPUMode() != perf.MiscUser {
			t.Fatalf("a kernel sample (cpu mode %d) in a user-only recording", rd.Record().Header().CPUMode())
		}
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	if samples == 0 || samples != samplesWritten(t, r.stderr) {
		t.Errorf("%d samples in the file, hwprof said %d", samples, samplesWritten(t, r.stderr))
	}
	if perfOK(t) {
		pr := exec.Command("perf", "evlist", "-f", "-v", "-i", out)
		evl, err := pr.CombinedOutput()
		if err != nil {
			t.Fatalf("perf evlist: %v\n%s", err, evl)
		}
		if wantUser != strings.Contains(string(evl), "exclude_kernel: 1") {
			t.Errorf("perf reads the attr as:\n%s", evl)
		}
	}
}

func perfOK(t *testing.T) bool {
	_, err := exec.LookPath("perf")
	return err == nil
}

// verdictRE matches a source's line of hwprof check.
var verdictRE = regexp.MustCompile(`(?m)^  (lbr|calls|timer|exact) +(works|not here) +(.*)$`)

// checkVerdicts parses hwprof check's output: for each source, whether it
// works and its lines (the verdict and those under it).
func checkVerdicts(t *testing.T, out string) map[string]struct {
	ok    bool
	lines string
} {
	t.Helper()
	v := map[string]struct {
		ok    bool
		lines string
	}{}
	locs := verdictRE.FindAllStringSubmatchIndex(out, -1)
	for i, m := range locs {
		end := len(out)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		if k := strings.Index(out[m[0]:end], "\n\n"); k >= 0 {
			end = m[0] + k
		}
		v[out[m[2]:m[3]]] = struct {
			ok    bool
			lines string
		}{out[m[4]:m[5]] == "works", out[m[0]:end]}
	}
	if len(v) != 4 {
		t.Fatalf("check gave verdicts for %d sources:\n%s", len(v), out)
	}
	return v
}

// hwprof check's verdicts are what hwprof record then does, source by
// source, for an ordinary user and for one allowed to write tracefs: a
// source works in check exactly when recording with it succeeds, and
// check says "user space only" exactly when record does.
func TestCheckAgreesWithRecord(t *testing.T) {
	needRootToDrop(t)
	p := paranoidLevel(t)
	prog := userProgram(t)
	for _, id := range []identity{ordinary, tracefsUser} {
		t.Run(strings.ReplaceAll(id.name, " ", "_"), func(t *testing.T) {
			dir := userDir(t)
			c := hwprofAs(t, id, dir, "check")
			if c.code != 0 {
				t.Fatalf("check: exit %d\n%s", c.code, c.stderr)
			}
			verdicts := checkVerdicts(t, c.stdout)
			for _, src := range []string{"lbr", "calls", "timer", "exact"} {
				args := []string{"record", "--source", src, "-o", filepath.Join(dir, src+".data")}
				if src == "exact" {
					// a few probes: closing each takes the kernel a grace period
					args = append(args, "--probe-filter", "^(f|main)$")
				}
				r := hwprofAs(t, id, dir, append(args, "--", prog)...)
				v := verdicts[src]
				if v.ok != (r.code == 0) {
					t.Errorf("paranoid %d: check says %s works=%v, record exits %d:\ncheck:\n%s\nrecord:\n%s", p, src, v.ok, r.code, v.lines, r.stderr)
					continue
				}
				if r.code == 0 && strings.Contains(v.lines, userOnlyNote) != strings.Contains(r.stderr, userOnlyNote) {
					t.Errorf("paranoid %d: %s: check and record disagree on user space only:\ncheck:\n%s\nrecord:\n%s", p, src, v.lines, r.stderr)
				}
				t.Logf("%s: works=%v", src, v.ok)
			}
			// What this machine's facts make of it.
			if p <= perf.ParanoidUser && !verdicts["timer"].ok {
				t.Errorf("paranoid %d: the timer does not work for an ordinary user:\n%s", p, verdicts["timer"].lines)
			}
			if p > perf.ParanoidUser && verdicts["timer"].ok {
				t.Errorf("paranoid %d: the timer works without CAP_PERFMON:\n%s", p, verdicts["timer"].lines)
			}
			if id.caps == nil && verdicts["exact"].ok {
				t.Errorf("exact works for an ordinary user although tracefs is root's:\n%s", verdicts["exact"].lines)
			}
			if id.caps == nil && !verdicts["exact"].ok && !strings.Contains(verdicts["exact"].lines, "root") {
				t.Errorf("exact's verdict does not say tracefs is root's:\n%s", verdicts["exact"].lines)
			}
		})
	}
}

// Every permission error an ordinary user meets names what would fix it.
func TestPermissionErrorsNameTheFix(t *testing.T) {
	needRootToDrop(t)
	p := paranoidLevel(t)
	prog := userProgram(t)
	dir := userDir(t)
	out := filepath.Join(dir, "e.data")
	for _, tc := range []struct {
		name string
		args []string
		fail bool     // the open must fail at this paranoid level
		want []string // what the error names
	}{
		{"kernel only", []string{"-e", "cpu-clock:k"}, p > perf.ParanoidKernel,
			[]string{"sysctl kernel.perf_event_paranoid=1", "CAP_PERFMON"}},
		{"user", []string{"-e", "cpu-clock:u"}, p > perf.ParanoidUser,
			[]string{"sysctl kernel.perf_event_paranoid=2", "CAP_PERFMON"}},
		{"exact on root's tracefs", []string{"--source", "exact"}, true,
			[]string{"root", "tracefs"}},
		{"rings beyond the locked-memory allowance", []string{"-e", "cpu-clock:u", "-m", "64M"}, true,
			[]string{"kernel.perf_event_mlock_kb", "CAP_IPC_LOCK", "-m"}},
	} {
		r := hwprofAs(t, ordinary, dir, append(append(append([]string{"record"}, tc.args...), "-o", out, "--"), prog)...)
		t.Logf("%s: exit %d\n%s", tc.name, r.code, r.stderr)
		if !tc.fail {
			if r.code != 0 {
				t.Errorf("%s: exit %d at paranoid %d:\n%s", tc.name, r.code, p, r.stderr)
			}
			continue
		}
		if r.code == 0 {
			t.Errorf("%s: recorded at paranoid %d:\n%s", tc.name, p, r.stderr)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%s: the error does not name %q:\n%s", tc.name, w, r.stderr)
			}
		}
	}
	// Attaching to a process of another user (pid 1, root's).
	r := hwprofAs(t, ordinary, dir, "record", "-e", "cpu-clock:u", "-p", "1", "--duration", "100ms", "-o", out)
	t.Logf("attach to pid 1: exit %d\n%s", r.code, r.stderr)
	if r.code == 0 {
		t.Errorf("an ordinary user recorded pid 1:\n%s", r.stderr)
	} else if !strings.Contains(r.stderr, "CAP_SYS_PTRACE") && !strings.Contains(r.stderr, "kernel.perf_event_paranoid=") {
		t.Errorf("attaching to root's pid 1: the error names no fix:\n%s", r.stderr)
	}
}

// hwprof unmounts the tracefs it mounted, and only that one: in a private
// mount namespace without tracefs, recording with the exact source mounts
// it and leaves none behind, and so does check; where tracefs is mounted
// (the system's), it stays.
func TestTracefsUnmountedAfterExact(t *testing.T) {
	needRootToDrop(t) // mounting needs root as much
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("no unshare(1) to make a private mount namespace")
	}
	if _, err := os.Stat(filepath.Join(event.SysfsPMURoot, "uprobe")); err != nil {
		t.Skipf("no uprobe PMU: %v", err)
	}
	prog := testprog.Build(t, "c/timed.c", "-O1", "-fno-omit-frame-pointer")
	out := filepath.Join(t.TempDir(), "ns.data")
	// Prints the number of tracefs mounts before, after record and after
	// check, one per line, then record's output.
	script := `
tracefs() { grep -c ' - tracefs ' /proc/self/mountinfo; }
if [ "$1" = unmounted ]; then
	umount -a -t tracefs 2>/dev/null
	umount -a -t debugfs 2>/dev/null  # its tracing directory mounts tracefs on access
fi
tracefs
"$HWPROF" record --source exact --probe-filter '^(f|main)$' -o "$OUT" -- "$PROG" 2>"$OUT.log"
rc=$?
tracefs
"$HWPROF" check >/dev/null
tracefs
cat "$OUT.log"
exit $rc
`
	for _, start := range []string{"unmounted", "mounted"} {
		cmd := exec.Command(unshare, "-m", "--propagation", "private", "sh", "-c", script, "sh", start)
		cmd.Env = append(os.Environ(), "HWPROF="+hwprofBin, "OUT="+out, "PROG="+prog)
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", start, err, b)
		}
		lines := strings.SplitN(string(b), "\n", 4)
		if len(lines) < 4 {
			t.Fatalf("%s: output:\n%s", start, b)
		}
		before, afterRecord, afterCheck := lines[0], lines[1], lines[2]
		if n := samplesWritten(t, lines[3]); n == 0 {
			t.Errorf("%s: nothing recorded:\n%s", start, lines[3])
		}
		t.Logf("%s: tracefs mounts %s before, %s after record, %s after check", start, before, afterRecord, afterCheck)
		if start == "unmounted" && (before != "0" || afterRecord != "0" || afterCheck != "0") {
			t.Errorf("tracefs mounts: %s before, %s after record, %s after check; want none left", before, afterRecord, afterCheck)
		}
		if start == "mounted" && (before == "0" || afterRecord != before || afterCheck != before) {
			t.Errorf("the system's tracefs: %s mounts before, %s after record, %s after check", before, afterRecord, afterCheck)
		}
	}
}
