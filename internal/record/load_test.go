package record

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hwprof/hwprof/internal/source"
	"github.com/hwprof/hwprof/internal/testprog"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/tuning"
)

// hogC spins until the wall-clock seconds given as its argument have
// passed: a CPU-bound process beside the recording (the test kills it
// sooner).
const hogC = `#include <stdlib.h>
#include <time.h>
int main(int argc, char **argv) {
	time_t end = time(0) + atoi(argv[1]);
	volatile unsigned long s = 0;
	while (time(0) < end)
		for (int i = 0; i < 1000000; i++) s += i;
	return 0;
}
`

// TestAdaptiveLoadIsNotCost is issue 34's "load is not cost": the default
// policy records the same program (bench-adaptive.sh's recurse, one
// thread, 1 s of its CPU time) alone and with a CPU-bound process per CPU
// beside it, and the period must not grow because of them: a busy
// machine slows the program and hwprof alike but makes no sample cost the
// program more. The periods compared are those of each thread's last
// sample (their PERIOD fields) and every change's. (On recurse, whose
// drains are cheap, the former budget of 2% held the period in a trial
// too; the case it failed, SQLite's dear drains beside CPU-bound
// processes, is tuning's TestParity "a hog beside the program".)
func TestAdaptiveLoadIsNotCost(t *testing.T) {
	needPerfEvents(t)
	prog := testprog.Build(t, "c/adaptive_recurse.c", "-O2", "-g", "-fno-omit-frame-pointer")
	hog := testprog.BuildText(t, "hog.c", hogC, "-O1")
	// the longest period of the recording, and whether a change grew it
	// for cost
	record := func(name string) (uint64, bool) {
		events, p, tuned := adaptiveCPUClockWith(t, tuning.DefaultPolicy(), func(evs []perf.Event) { source.AddLeafCopy(evs, source.LeafStackBytes) })
		out := filepath.Join(t.TempDir(), name+".data")
		st := recordAdaptive(t, Options{Events: events, Argv: []string{prog, "1"}, Output: out, Adaptive: &p, Tuned: tuned})
		longest, cost := events[0].Attr.SamplePeriod, false
		for _, c := range st.Periods {
			t.Logf("%s: %.3fs period %d: %s", name, c.Time.Seconds(), c.Period, c.Reason)
			longest = max(longest, c.Period)
			cost = cost || strings.Contains(c.Reason, "cost the program more")
		}
		for _, tp := range st.ThreadPeriods {
			longest = max(longest, tp.Period)
		}
		t.Logf("%s: %d samples in %.2fs; %s", name, st.Samples, st.Duration.Seconds(), strings.Join(st.Trades, ""))
		return longest, cost
	}
	alone, aloneCost := record("alone")

	var hogs []*exec.Cmd
	for range runtime.NumCPU() {
		h := exec.Command(hog, "120")
		if err := h.Start(); err != nil {
			t.Fatal(err)
		}
		hogs = append(hogs, h)
	}
	loaded, loadedCost := record("with hogs")
	var hogCPU time.Duration
	for _, h := range hogs {
		h.Process.Kill()
		h.Wait()
		hogCPU += h.ProcessState.UserTime()
	}
	t.Logf("%d hogs used %.2fs of CPU beside the program", len(hogs), hogCPU.Seconds())

	if limit := uint64(float64(alone) * (1 + tuning.DefaultPolicy().MinChange)); loaded > limit {
		t.Errorf("with a CPU-bound process per CPU beside it the period grew to %d, alone at most %d", loaded, alone)
	}
	if loadedCost && !aloneCost {
		t.Errorf("with the hogs the period grew for cost, alone it did not")
	}
}
