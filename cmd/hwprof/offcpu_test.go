package main

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/internal/testprog"
	"github.com/hwprof/hwprof/perf"
)

// offReport is what the off-CPU tests read of a JSON report.
type offReport struct {
	Recording struct {
		OffCPUNS *uint64 `json:"offcpu_ns"`
		OffCPU   *struct {
			Intervals uint64 `json:"intervals"`
			NoStack   uint64 `json:"no_stack"`
			StackLost uint64 `json:"stack_lost"`
			Reasons   []struct {
				Reason string `json:"reason"`
				NS     uint64 `json:"ns"`
			} `json:"reasons"`
			Threads []struct {
				TID    uint32 `json:"tid"`
				LifeNS uint64 `json:"life_ns"`
				OnNS   uint64 `json:"on_ns"`
				OffNS  uint64 `json:"off_ns"`
			} `json:"threads"`
		} `json:"offcpu"`
		Measure string `json:"measure"`
	} `json:"recording"`
	Functions []struct {
		Name          string  `json:"name"`
		OffCPUTotalNS *uint64 `json:"offcpu_total_ns"`
	} `json:"functions"`
}

func readOffReport(t *testing.T, data string, args ...string) offReport {
	t.Helper()
	r := hwprof(t, append([]string{"report", "-i", data, "--format", "json"}, args...)...)
	if r.code != 0 {
		t.Fatalf("report: exit %d\n%s", r.code, r.stderr)
	}
	var rep offReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("report JSON: %v", err)
	}
	if rep.Recording.OffCPUNS == nil || rep.Recording.OffCPU == nil {
		t.Fatalf("the report has no time off the CPU:\n%s", r.stderr)
	}
	return rep
}

// waitTruths reads the totals testdata/c/waits.c measured of its waits
// ("NAME NANOSECONDS COUNT").
func waitTruths(t *testing.T, stdout string) map[string]uint64 {
	t.Helper()
	truth := map[string]uint64{}
	for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
		f := strings.Fields(l)
		if len(f) == 3 && strings.HasPrefix(f[0], "wait_") {
			ns, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil {
				t.Fatalf("waits printed %q", l)
			}
			truth[f[0]] = ns
		}
	}
	if len(truth) != 4 {
		t.Fatalf("waits printed %q, want four totals", stdout)
	}
	return truth
}

// TestOffCPUKnownWaits records testdata/c/waits.c, whose threads wait in
// functions of their own for times the program measures itself (sleeps,
// a pipe fed on a schedule, a mutex another thread holds, a child), and
// checks each waiting function's time off the CPU within 2% of the
// program's own measure, every thread's time on and off the CPU against
// its life, and the reasons the kernel frames give, with frame pointers
// (the leaf repair puts back the callers libc's routines without frame
// pointers hide: the lock wait is two calls deep in libc) and with DWARF.
func TestOffCPUKnownWaits(t *testing.T) {
	needPerfEvents(t)
	if p, err := perf.Paranoid(); err == nil && p > perf.ParanoidKernel && os.Geteuid() != 0 {
		t.Skipf("perf_event_paranoid %d and not root: the kernel gives no context-switch samples (the stacks)", p)
	}
	t.Parallel()
	prog := testprog.Build(t, "c/waits.c", "-O1", "-g", "-fno-omit-frame-pointer", "-pthread")
	for _, tc := range []struct {
		name  string
		graph []string
		funcs []string
		tol   float64
	}{
		{"fp", nil, []string{"wait_sleep", "wait_pipe", "wait_mutex", "wait_child"}, 0.02},
		// 4 KiB a sample: a ring of 8 MiB, as the DWARF unwinding tests
		// take, so that a recorder starved on a busy machine loses none
		{"dwarf", []string{"--call-graph", "dwarf,4096", "-m", "8M"}, []string{"wait_sleep", "wait_pipe", "wait_mutex", "wait_child"}, 0.02},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "w.data")
			args := append([]string{"record", "-q", "--off-cpu", "-o", data}, tc.graph...)
			r := hwprofExec(t, append(args, "--", prog, "1")...)
			if r.code != 0 {
				t.Fatalf("record: exit %d\n%s", r.code, r.stderr)
			}
			truth := waitTruths(t, r.stdout)
			rep := readOffReport(t, data)
			t.Logf("%d intervals, %d whose stack sample was lost", rep.Recording.OffCPU.Intervals, rep.Recording.OffCPU.StackLost)
			got := map[string]uint64{}
			for _, f := range rep.Functions {
				if f.OffCPUTotalNS != nil {
					got[f.Name] = *f.OffCPUTotalNS
				}
			}
			for _, fn := range tc.funcs {
				dev := (float64(got[fn]) - float64(truth[fn])) / float64(truth[fn])
				t.Logf("%-10s off the CPU %12d ns, the program measured %12d ns: %+.3f%%", fn, got[fn], truth[fn], 100*dev)
				if math.Abs(dev) > tc.tol {
					t.Errorf("%s: %d ns off the CPU, the program measured %d ns (%+.2f%%, more than %.0f%%)", fn, got[fn], truth[fn], 100*dev, 100*tc.tol)
				}
			}
			off := rep.Recording.OffCPU
			for _, th := range off.Threads {
				if th.LifeNS == 0 {
					continue
				}
				if acc := float64(th.OnNS+th.OffNS) / float64(th.LifeNS); acc < 0.99 || acc > 1.0001 {
					t.Errorf("thread %d: on %d + off %d ns is %.2f%% of its life %d ns", th.TID, th.OnNS, th.OffNS, 100*acc, th.LifeNS)
				}
			}
			reasons := map[string]uint64{}
			for _, rr := range off.Reasons {
				reasons[rr.Reason] = rr.NS
			}
			for _, want := range []string{"sleep", "pipe", "child", "futex"} {
				if reasons[want] < truth["wait_pipe"]/2 {
					t.Errorf("reason %s: %d ns; reasons %v", want, reasons[want], reasons)
				}
			}
		})
	}
}

// TestOffCPUWeights: the text report, the flame graph's folded stacks and
// pprof measure the time off the CPU with --weight off-cpu and wall; a
// recording without switch records refuses them, naming the flag to
// record with; perf reads the file (switch records and off-CPU samples).
func TestOffCPUWeights(t *testing.T) {
	needPerfEvents(t)
	t.Parallel()
	prog := testprog.Build(t, "c/waits.c", "-O1", "-g", "-fno-omit-frame-pointer", "-pthread")
	dir := t.TempDir()
	data := filepath.Join(dir, "w.data")
	if r := hwprofExec(t, "record", "-q", "--off-cpu", "-o", data, "--", prog, "0.3"); r.code != 0 {
		t.Fatalf("record: exit %d\n%s", r.code, r.stderr)
	}
	rep := readOffReport(t, data, "--weight", "off-cpu")
	if rep.Recording.Measure != "off-cpu" {
		t.Errorf("measure %q, want off-cpu", rep.Recording.Measure)
	}
	r := hwprof(t, "report", "-i", data, "--weight", "off-cpu", "--top", "0")
	if r.code != 0 || !strings.Contains(r.stdout, "shares of") || !strings.Contains(r.stdout, "nanoseconds off the CPU") || !strings.Contains(r.stdout, "wait_sleep") {
		t.Errorf("report --weight off-cpu: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "off-cpu by reason") {
		t.Errorf("the text report does not give the time by reason:\n%s", r.stdout)
	}
	folded := hwprof(t, "report", "-i", data, "--format", "folded", "--weight", "wall")
	if folded.code != 0 || !strings.Contains(folded.stdout, "wait_sleep;") {
		t.Errorf("folded --weight wall: exit %d\n%.2000s\n%s", folded.code, folded.stdout, folded.stderr)
	}
	pb := filepath.Join(dir, "w.pb.gz")
	if r := hwprof(t, "report", "-i", data, "--format", "pprof", "--weight", "off-cpu", "-o", pb); r.code != 0 {
		t.Fatalf("pprof: exit %d\n%s", r.code, r.stderr)
	}
	out, err := exec.Command("go", "tool", "pprof", "-raw", pb).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof -raw: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "cpu/nanoseconds samples/count off-cpu/nanoseconds[dflt] wall/nanoseconds") {
		t.Errorf("pprof sample types:\n%.1000s", out)
	}
	// perf reads it
	if perfBin, err := exec.LookPath("perf"); err == nil {
		out, err := exec.Command(perfBin, "script", "-i", data, "--show-switch-events", "-F", "comm,tid,event").CombinedOutput()
		if err != nil {
			t.Fatalf("perf script: %v\n%.2000s", err, out)
		}
		for _, want := range []string{"PERF_RECORD_SWITCH", "context-switches"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("perf script shows no %s:\n%.2000s", want, out)
			}
		}
	}
	// a recording without switch records
	plain, _ := workloadRecording(t)
	for _, w := range []string{"off-cpu", "wall"} {
		r := hwprof(t, "report", "-i", plain, "--weight", w)
		if r.code == 0 || !strings.Contains(r.stderr, "--weight "+w) || !strings.Contains(r.stderr, "record --off-cpu") {
			t.Errorf("--weight %s of a recording without switch records: exit %d\n%s", w, r.code, r.stderr)
		}
	}
}

// TestOffCPUDiffMerge: diff compares two off-CPU recordings by their time
// off the CPU, and merge adds them up (its pprof's off-cpu total is the
// sum of the two reports').
func TestOffCPUDiffMerge(t *testing.T) {
	needPerfEvents(t)
	t.Parallel()
	prog := testprog.Build(t, "c/waits.c", "-O1", "-g", "-fno-omit-frame-pointer", "-pthread")
	dir := t.TempDir()
	var datas []string
	var sum uint64
	for i := range 2 {
		data := filepath.Join(dir, strconv.Itoa(i)+".data")
		if r := hwprofExec(t, "record", "-q", "--off-cpu", "-o", data, "--", prog, "0.2"); r.code != 0 {
			t.Fatalf("record: exit %d\n%s", r.code, r.stderr)
		}
		sum += *readOffReport(t, data).Recording.OffCPUNS
		datas = append(datas, data)
	}
	d := hwprof(t, "diff", "--weight", "off-cpu", "--top", "0", datas[0], datas[1])
	if d.code != 0 || !strings.Contains(d.stdout, "wait_") {
		t.Errorf("diff --weight off-cpu: exit %d\n%s\n%s", d.code, d.stdout, d.stderr)
	}
	pb := filepath.Join(dir, "m.pb.gz")
	if r := hwprof(t, append([]string{"merge", "-o", pb}, datas...)...); r.code != 0 {
		t.Fatalf("merge: exit %d\n%s", r.code, r.stderr)
	}
	out, err := exec.Command("go", "tool", "pprof", "-sample_index=off-cpu", "-top", "-nodecount=1", "-unit=ns", pb).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof: %v\n%s", err, out)
	}
	want := "Total samples = " + strconv.FormatUint(sum, 10) + "ns"
	if !strings.Contains(string(out), want) {
		t.Errorf("merged pprof: want %q (the two recordings' off-CPU time):\n%s", want, out)
	}
}

// TestOffCPUAsOrdinaryUser records testdata/c/waits.c with --off-cpu as
// an ordinary user. At perf_event_paranoid 2 the kernel takes no
// context-switch sample for an event that excludes the kernel, so the
// recording has the switch records alone: every interval, each thread's
// time on and off the CPU against its life, and no stack (one
// "[off-CPU, no stack]" frame, said once); check says so. At 1 or below
// the stacks come too; above 2 nothing records.
func TestOffCPUAsOrdinaryUser(t *testing.T) {
	needRootToDrop(t)
	p := paranoidLevel(t)
	if p > perf.ParanoidUser {
		t.Skipf("perf_event_paranoid %d: an ordinary user records nothing (TestRecordAsOrdinaryUser covers it)", p)
	}
	prog := testprog.Build(t, "c/waits.c", "-O1", "-g", "-fno-omit-frame-pointer", "-pthread")
	openToAll(t, prog)
	openToAll(t, hwprofBin)
	dir := userDir(t)
	data := filepath.Join(dir, "w.data")
	r := hwprofAs(t, ordinary, dir, "record", "--off-cpu", "-o", data, "--", prog, "0.3")
	if r.code != 0 {
		t.Fatalf("record as an ordinary user: exit %d\n%s", r.code, r.stderr)
	}
	rep := readOffReport(t, data)
	off := rep.Recording.OffCPU
	withStacks := p <= perf.ParanoidKernel
	t.Logf("paranoid %d: %d intervals, %d without a stack, %d ns off the CPU", p, off.Intervals, off.NoStack, *rep.Recording.OffCPUNS)
	if off.Intervals == 0 {
		t.Fatal("no interval off the CPU")
	}
	if !withStacks && off.NoStack != off.Intervals {
		t.Errorf("%d of %d intervals without a stack at paranoid %d, want all", off.NoStack, off.Intervals, p)
	}
	if withStacks && off.NoStack*10 > off.Intervals {
		t.Errorf("%d of %d intervals without a stack at paranoid %d", off.NoStack, off.Intervals, p)
	}
	for _, th := range off.Threads {
		if th.LifeNS > 0 {
			if acc := float64(th.OnNS+th.OffNS) / float64(th.LifeNS); acc < 0.99 || acc > 1.0001 {
				t.Errorf("thread %d: on %d + off %d ns is %.2f%% of its life %d ns", th.TID, th.OnNS, th.OffNS, 100*acc, th.LifeNS)
			}
		}
	}
	truth := waitTruths(t, r.stdout)
	var waited uint64
	for _, ns := range truth {
		waited += ns
	}
	if *rep.Recording.OffCPUNS < waited {
		t.Errorf("%d ns off the CPU, less than the %d ns the program measured its waits took", *rep.Recording.OffCPUNS, waited)
	}
	c := hwprofAs(t, ordinary, dir, "check")
	want := map[bool]string{false: "intervals only", true: "works: every interval"}[withStacks]
	if !strings.Contains(c.stdout, "off-cpu (record --off-cpu): "+want) {
		t.Errorf("check as an ordinary user at paranoid %d does not say %q:\n%s", p, want, c.stdout)
	}
}

// TestOffCPUAttachIdle attaches to a process that sleeps through the whole
// recording (`record --off-cpu -p PID -- sleep 0.5`): it writes no record
// at all, yet its thread was off the CPU for the whole half second, which
// the recording's span (the perf clock when its events started and
// stopped) gives: life at least 0.45 s, all of it off the CPU, without a
// stack.
func TestOffCPUAttachIdle(t *testing.T) {
	needPerfEvents(t)
	t.Parallel()
	idle := exec.Command("sleep", "60")
	if err := idle.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { idle.Process.Kill(); idle.Wait() }()
	data := filepath.Join(t.TempDir(), "idle.data")
	pid := strconv.Itoa(idle.Process.Pid)
	if r := hwprof(t, "record", "-q", "--off-cpu", "-p", pid, "-o", data, "--", "sleep", "0.5"); r.code != 0 {
		t.Fatalf("record: exit %d\n%s", r.code, r.stderr)
	}
	off := readOffReport(t, data).Recording.OffCPU
	var found bool
	for _, th := range off.Threads {
		if strconv.Itoa(int(th.TID)) != pid {
			continue
		}
		found = true
		t.Logf("thread %d: life %d ns, on %d ns, off %d ns", th.TID, th.LifeNS, th.OnNS, th.OffNS)
		if th.LifeNS < 450e6 || th.OffNS*100 < th.LifeNS*99 {
			t.Errorf("thread %d: life %d ns with %d ns off the CPU; it slept through a 0.5 s recording", th.TID, th.LifeNS, th.OffNS)
		}
	}
	if !found {
		t.Errorf("the sleeping thread %s is not among the threads %+v", pid, off.Threads)
	}
	if off.NoStack != off.Intervals || off.Intervals == 0 {
		t.Errorf("%d intervals, %d without a stack: want the one whole wait, without a stack", off.Intervals, off.NoStack)
	}
}

// TestOffCPUSystemWideExits records -a --off-cpu while a shell starts and
// ends short processes: system-wide the kernel writes a task's EXIT record
// early in do_exit and then switches the dead task on (do_task_dead); no
// interval may begin there, where each used to run to the end of the
// recording.
func TestOffCPUSystemWideExits(t *testing.T) {
	needPerfEvents(t)
	if os.Geteuid() != 0 {
		t.Skip("-a needs root here")
	}
	// Not in parallel with the other off-CPU tests: when a CPU-wide
	// context-switch event and another on the same CPU sample one switch,
	// the kernel gives the second the first's sample id (the sample data
	// the software events share), and the file holds samples of an event
	// it does not have; perf record fails the same way ("failed to
	// process type: 9").
	data := filepath.Join(t.TempDir(), "a.data")
	script := "for i in 1 2 3 4 5 6 7 8 9 10; do /bin/true; sleep 0.02; done"
	if r := hwprof(t, "record", "-q", "--off-cpu", "-a", "-o", data, "--", "sh", "-c", script); r.code != 0 {
		t.Fatalf("record: exit %d\n%s", r.code, r.stderr)
	}
	r := hwprof(t, "report", "-i", data, "--format", "folded", "--weight", "off-cpu")
	if r.code != 0 {
		t.Fatalf("report: exit %d\n%s", r.code, r.stderr)
	}
	var total, dead uint64
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		i := strings.LastIndexByte(line, ' ')
		n, err := strconv.ParseUint(line[i+1:], 10, 64)
		if i < 0 || err != nil {
			t.Fatalf("folded line %q", line)
		}
		total += n
		if strings.Contains(line, "do_task_dead") {
			dead += n
		}
	}
	t.Logf("%d ns off the CPU, %d of them after an exit", total, dead)
	if total == 0 || dead > 0 {
		t.Errorf("%d ns off the CPU, %d ns of it in do_task_dead (a dead thread's)", total, dead)
	}
}
