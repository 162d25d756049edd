package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hwprof/hwprof/ccmap"
	"github.com/hwprof/hwprof/internal/engine"
)

// -h and --help print the usage on stdout and exit 0, at the top level
// and for every command; --version prints the version.
func TestHelpAndVersion(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"help"}} {
		r := hwprof(t, args...)
		if r.code != 0 || !strings.Contains(r.stdout, "usage: hwprof COMMAND") || r.stderr != "" {
			t.Errorf("hwprof %q: exit %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
		}
	}
	for _, c := range commands {
		if c.name == "help" || c.name == "version" {
			continue
		}
		for _, h := range []string{"-h", "--help"} {
			r := hwprof(t, c.name, h)
			if r.code != 0 || !strings.HasPrefix(r.stdout, "usage: hwprof "+c.name) || r.stderr != "" {
				t.Errorf("hwprof %s %s: exit %d, stdout %q, stderr %q", c.name, h, r.code, r.stdout, r.stderr)
			}
		}
	}
	for _, args := range [][]string{{"--version"}, {"version"}, {"record", "--version"}, {"report", "--version"}} {
		r := hwprof(t, args...)
		if r.code != 0 || r.stdout != "hwprof "+version+"\n" {
			t.Errorf("hwprof %q: exit %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
		}
	}
}

// A flag that does not exist is one line that points to -h.
func TestUnknownFlagOneLine(t *testing.T) {
	for _, cmd := range []string{"record", "report", "script", "dump", "compare", "check", "demo", "diff"} {
		r := hwprof(t, cmd, "-x")
		want := "hwprof " + cmd + ": flag provided but not defined: -x (see hwprof " + cmd + " -h)\n"
		if r.code != exitUsage || r.stderr != want || r.stdout != "" {
			t.Errorf("hwprof %s -x: exit %d, stderr %q, stdout %q; want exit 2 and %q", cmd, r.code, r.stderr, r.stdout, want)
		}
	}
}

// --adaptive's policy is shown and accepted in the form that parses; one
// written after a space is refused, not run as the program, and a bad one
// says what is wrong with it.
func TestAdaptiveFlagForms(t *testing.T) {
	h := hwprof(t, "record", "-h")
	if !strings.Contains(h.stdout, "--adaptive=MIN,MAX,BUDGET") || strings.Contains(h.stdout, "-adaptive MIN") {
		t.Errorf("record -h does not show --adaptive=MIN,MAX,BUDGET:\n%s", h.stdout)
	}
	out := filepath.Join(t.TempDir(), "never.data")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--adaptive", "2%,20%,5%"}, "write --adaptive=2%,20%,5%"},
		{[]string{"--adaptive", "2%,20%,5%", "--", "true"}, "write --adaptive=2%,20%,5%"},
		{[]string{"--adaptive=foo", "--", "true"}, `"foo" is not a number`},
		{[]string{"--adaptive=20%,10%", "--", "true"}, "0 < min < max < 100%"},
		{[]string{"--adaptive=1%,15%,1%,9", "--", "true"}, "want min,max,budget"},
	} {
		r := hwprof(t, append([]string{"record", "-o", out}, tc.args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) || strings.Contains(r.stderr, "boolean") {
			t.Errorf("record %q: exit %d, stderr %q; want exit 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("record %q wrote %s", tc.args, out)
		}
	}
}

// busyLoop starts a shell copied under a name of its own, spinning until
// the test ends; it returns its pid and comm. The name is prefix and a
// random suffix, so that no other process (another run of the suite) has
// it; prefix has at most 8 characters (a comm keeps 15).
func busyLoop(t *testing.T, prefix string) (int, string) {
	t.Helper()
	name := fmt.Sprintf("%s-%06x", prefix, rand.Uint32()&0xffffff)
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	data, err := os.ReadFile(sh)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-c", "while :; do :; done")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	// Wait until it runs under its own name (exec done).
	for range 200 {
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/comm"); err == nil && strings.TrimSpace(string(b)) == name {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return cmd.Process.Pid, name
}

// perfPIDs counts the samples perf script reads from file per pid, with
// the comm perf names each pid by.
func perfPIDs(t *testing.T, file string) (map[int]int, map[int]string, bool) {
	t.Helper()
	if _, err := exec.LookPath("perf"); err != nil {
		return nil, nil, false
	}
	out, err := exec.Command("perf", "script", "-F", "comm,pid", "-i", file).Output()
	if err != nil {
		t.Fatalf("perf script -i %s: %v", file, err)
	}
	counts, comms := map[int]int{}, map[int]string{}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		pid, err := strconv.Atoi(f[len(f)-1])
		if err != nil {
			t.Fatalf("perf script line %q", line)
		}
		counts[pid]++
		comms[pid] = strings.Join(f[:len(f)-1], " ")
	}
	return counts, comms, true
}

type processesJSON struct {
	Recording struct {
		Samples   uint64 `json:"samples"`
		Processes []struct {
			PID     int     `json:"pid"`
			Comm    *string `json:"comm"`
			Samples uint64  `json:"samples"`
			Share   float64 `json:"share"`
		} `json:"processes"`
	} `json:"recording"`
	Functions []struct {
		Name string `json:"name"`
	} `json:"functions"`
	Edges    []json.RawMessage `json:"edges"`
	Contexts []json.RawMessage `json:"contexts"`
}

func reportProcesses(t *testing.T, args ...string) processesJSON {
	t.Helper()
	r := hwprof(t, append([]string{"report", "--format", "json"}, args...)...)
	if r.code != 0 {
		t.Fatalf("report %q: exit %d\n%s", args, r.code, r.stderr)
	}
	var rep processesJSON
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("report %q: %v", args, err)
	}
	return rep
}

// -p PID -- CMD records PID while CMD runs; CMD's status is hwprof's.
func TestRecordPIDWithTimer(t *testing.T) {
	t.Parallel()
	needPerfEvents(t)
	pid, _ := busyLoop(t, "hw-spin")
	dir := t.TempDir()
	out := filepath.Join(dir, "p.data")
	start := time.Now()
	r := hwprof(t, "record", "-o", out, "-p", strconv.Itoa(pid), "--", "sleep", "1")
	if r.code != 0 {
		t.Fatalf("record -p %d -- sleep 1: exit %d\n%s", pid, r.code, r.stderr)
	}
	if d := time.Since(start); d < time.Second {
		t.Errorf("record -p -- sleep 1 returned after %v", d)
	}
	n := samplesWritten(t, r.stderr)
	if n == 0 {
		t.Fatalf("no samples of the spinning pid %d in a second", pid)
	}
	if counts, _, ok := perfPIDs(t, out); ok {
		if counts[pid] != n || len(counts) != 1 {
			t.Errorf("perf script reads %v, hwprof says %d samples of pid %d", counts, n, pid)
		}
	}
	r = hwprof(t, "record", "-q", "-o", out, "-p", strconv.Itoa(pid), "--", "sh", "-c", "sleep 0.2; exit 3")
	if r.code != 3 {
		t.Errorf("record -p -- sh -c 'exit 3': exit %d, want 3\n%s", r.code, r.stderr)
	}
	r = hwprof(t, "record", "-q", "-o", out, "-p", strconv.Itoa(pid), "--duration", "300ms", "--", "sleep", "30")
	if r.code != 0 {
		t.Errorf("record -p --duration 300ms -- sleep 30: exit %d, want 0 (the recording ended the timer)\n%s", r.code, r.stderr)
	}
}

// -a records every process: a workload running beside the recording is in
// the file under its pid and comm (from /proc), perf script reads the
// file, and report --pid/--tid/--comm pick it out (a --comm that matches
// nothing is an error).
func TestRecordSystemWide(t *testing.T) {
	t.Parallel()
	needPerfEvents(t)
	pid, comm := busyLoop(t, "hw-sysw")
	out := filepath.Join(t.TempDir(), "a.data")
	r := hwprof(t, "record", "-a", "-o", out, "--", "sleep", "1")
	// The checks below read the file: the loop need not spin through them.
	syscall.Kill(pid, syscall.SIGKILL)
	if r.code != 0 {
		t.Fatalf("record -a -- sleep 1: exit %d\n%s", r.code, r.stderr)
	}
	n := samplesWritten(t, r.stderr)
	counts, comms, perfOK := perfPIDs(t, out)
	if perfOK {
		total := 0
		for _, c := range counts {
			total += c
		}
		if total != n {
			t.Errorf("perf script reads %d samples, hwprof says %d", total, n)
		}
		if counts[pid] == 0 || comms[pid] != comm {
			t.Fatalf("perf script has %d samples of pid %d named %q, want some named %s", counts[pid], pid, comms[pid], comm)
		}
	}
	all := reportProcesses(t, "-i", out)
	if len(all.Recording.Processes) < 2 {
		t.Fatalf("a system-wide recording lists %d processes", len(all.Recording.Processes))
	}
	var mine uint64
	var shares float64
	for _, p := range all.Recording.Processes {
		shares += p.Share
		if p.PID == pid {
			mine = p.Samples
			if p.Comm == nil || *p.Comm != comm {
				t.Errorf("pid %d is named %v, want %s", pid, p.Comm, comm)
			}
		}
	}
	if mine == 0 || shares < 0.999 || shares > 1.001 {
		t.Fatalf("processes: pid %d has %d samples, shares sum to %v", pid, mine, shares)
	}
	if perfOK && int(mine) != counts[pid] {
		t.Errorf("report counts %d samples of pid %d, perf script %d", mine, pid, counts[pid])
	}
	for _, f := range [][]string{{"--pid", strconv.Itoa(pid)}, {"--tid", strconv.Itoa(pid)}, {"--comm", comm}, {"--comm", "no-such-comm," + comm, "--pid", strconv.Itoa(pid)}} {
		one := reportProcesses(t, append([]string{"-i", out}, f...)...)
		ps := one.Recording.Processes
		if one.Recording.Samples != mine || len(ps) != 1 || ps[0].PID != pid || ps[0].Share != 1 {
			t.Errorf("report %q: %d samples, processes %+v; want %d samples of pid %d alone", f, one.Recording.Samples, ps, mine, pid)
		}
	}
	// A filter that matches nothing says so, with the names there are
	// (the busiest: the test's own program need not be among them).
	none := hwprof(t, "report", "--format", "json", "-i", out, "--comm", "no-such-comm")
	if none.code != exitError || none.stdout != "" ||
		!regexp.MustCompile(`--comm no-such-comm matches no sample: the recording's samples are of \d+ command names: \S+ \(\d+ samples\)`).MatchString(none.stderr) {
		t.Errorf("report --comm no-such-comm: exit %d, %d bytes of output, stderr %q; want %d, none, and the names there are",
			none.code, len(none.stdout), none.stderr, exitError)
	}
	// The text header lists the processes, the largest share first (the
	// test's own program need not be among the ten shown: a loaded
	// machine runs many others).
	top := all.Recording.Processes[0]
	for _, p := range all.Recording.Processes {
		if p.Share > top.Share {
			top = p
		}
	}
	txt := hwprof(t, "report", "-i", out)
	if txt.code != 0 || !regexp.MustCompile(`processes: \d+ `).MatchString(txt.stdout) ||
		!regexp.MustCompile(`\d samples  pid `+strconv.Itoa(top.PID)+` `).MatchString(txt.stdout) {
		t.Errorf("text report of a system-wide recording does not list the processes:\n%.2000s", txt.stdout)
	}
}

// statusRE matches the live status line.
var statusRE = regexp.MustCompile(`\r\x1b\[Khwprof: \d+\.\ds, \d+ samples, \d+ lost, cpu-clock period \d+`)

// On a terminal, a long recording shows a status line, erased before the
// summary; not with -q, and not when stderr is a file.
func TestRecordStatusLine(t *testing.T) {
	t.Parallel()
	needPerfEvents(t)
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("no script(1) to run hwprof on a pseudo-terminal")
	}
	dir := t.TempDir()
	run := func(quiet bool) string {
		q := ""
		if quiet {
			q = " -q"
		}
		cmdline := hwprofBin + " record" + q + " -a --duration 2200ms -o " + filepath.Join(dir, "s.data")
		out, err := exec.Command("script", "-qec", cmdline, "/dev/null").CombinedOutput()
		if err != nil {
			t.Fatalf("script -qec %q: %v\n%q", cmdline, err, out)
		}
		return string(out)
	}
	out := run(false)
	lines := statusRE.FindAllString(out, -1)
	if len(lines) < 2 {
		t.Fatalf("%d status lines on a terminal in 2.2s, want at least 2:\n%q", len(lines), out)
	}
	if !strings.Contains(out, "\r\x1b[Khwprof: recording stopped after --duration 2.2s; the processes go on\r\nhwprof: recorded ") {
		t.Errorf("the status line is not erased before the summary:\n%q", out)
	}
	if q := run(true); strings.Contains(q, "\x1b[K") {
		t.Errorf("status line with -q:\n%q", q)
	}
	// stderr to a file: no status line.
	f, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(hwprofBin, "record", "-a", "--duration", "1500ms", "-o", filepath.Join(dir, "f.data"))
	cmd.Stderr = f
	if err := cmd.Run(); err != nil {
		t.Fatalf("record -a --duration 1500ms: %v", err)
	}
	b, _ := os.ReadFile(f.Name())
	if strings.Contains(string(b), "\x1b[K") || !strings.Contains(string(b), "recorded ") {
		t.Errorf("stderr to a file:\n%q", b)
	}
}

// --format json lists every function, edge and context of the profile
// unless --top or --contexts bound them.
func TestReportJSONWhole(t *testing.T) {
	t.Parallel()
	needPerfEvents(t)
	out := filepath.Join(t.TempDir(), "w.data")
	r := hwprof(t, "record", "-q", "-g", "--duration", "1500ms", "-o", out, "--", hwprofBin, workloadArg, "1000")
	if r.code != 0 {
		t.Fatalf("record: exit %d\n%s", r.code, r.stderr)
	}
	p, err := engine.Load(out, engine.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	funcs := map[ccmap.FuncID]bool{}
	for _, f := range p.Map.Functions(ccmap.Self) {
		if f.Self > 0 || f.Total > 0 {
			funcs[f.Func] = true
		}
	}
	contexts := 0
	for _, c := range p.Map.HotContexts(ccmap.Self, 0) {
		if c.Self > 0 {
			contexts++
		}
	}
	if len(funcs) <= 20 || contexts <= 10 {
		t.Fatalf("the recording has only %d functions and %d contexts: too few to tell a whole report from a cut one", len(funcs), contexts)
	}
	whole := reportProcesses(t, "-i", out)
	if len(whole.Functions) != len(funcs) || len(whole.Contexts) != contexts {
		t.Errorf("json: %d functions, %d contexts; the profile has %d and %d", len(whole.Functions), len(whole.Contexts), len(funcs), contexts)
	}
	if len(whole.Edges) <= 20 {
		t.Errorf("json: only %d edges", len(whole.Edges))
	}
	cut := reportProcesses(t, "-i", out, "--top", "5", "--contexts", "3")
	if len(cut.Functions) != 5 || len(cut.Edges) != 5 || len(cut.Contexts) != 3 {
		t.Errorf("json --top 5 --contexts 3: %d functions, %d edges, %d contexts", len(cut.Functions), len(cut.Edges), len(cut.Contexts))
	}
}
