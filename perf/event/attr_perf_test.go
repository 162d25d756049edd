package event_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/hwprof/hwprof/internal/perfflags"
	"github.com/hwprof/hwprof/perf"

	"github.com/hwprof/hwprof/internal/testenv"
	"github.com/hwprof/hwprof/perf/event"
)

// perfRows are perf record command lines (the options before "--"). Each
// is run through `perf record -vv` and through perfflags.Register+BuildAttrs,
// and the attr blocks must be equal line for line. perfArgs, when set, is
// what perf runs instead: perf 6.1 cannot open cpu/.../ where sysfs has
// no cpu PMU, so those rows compare with the equivalent rNNNN. "{PID}"
// stands for a running `sleep`.
//
// perf stops at the first event it cannot open at all (a hardware event
// other than cycles, which falls back to cpu-clock, or any event with a
// branch stack), so only the last event of a row may be one of those.
var perfRows = append([]perfRow{
	{name: "cycles", args: []string{"-e", "cycles"}},
	{name: "instructions-u", args: []string{"-e", "instructions:u"}},
	{name: "cpu-clock-g", args: []string{"-e", "cpu-clock", "-g"}},
	{name: "task-clock-c", args: []string{"-e", "task-clock", "-c", "10007"}},
	{name: "cycles-pp", args: []string{"-e", "cycles:pp"}},
	{name: "cycles-P", args: []string{"-e", "cycles:P"}},
	{name: "cycles-upp", args: []string{"-e", "cycles:upp"}},
	{name: "cycles-k", args: []string{"-e", "cycles:k"}},
	{name: "cycles-H", args: []string{"-e", "cycles:H"}},
	{name: "raw-r20c4", args: []string{"-e", "r20c4"}},
	{name: "cpu-pmu-as-raw", args: []string{"-e", "cpu/event=0xc4,umask=0x20/"}, perfArgs: []string{"-e", "r20c4"}},
	{name: "cpu-pmu-named-u", args: []string{"-e", "cpu/event=0xc4,umask=0x20,name=calls/u"}, perfArgs: []string{"-e", "r20c4:u"}},
	{name: "cpu-pmu-alias-pp", args: []string{"-e", "cpu/cpu-cycles/pp"}, perfArgs: []string{"-e", "r3c:pp"}},
	{name: "two-e", args: []string{"-e", "cycles", "-e", "instructions"}},
	{name: "comma-list", args: []string{"-e", "cpu-clock,page-faults"}},
	{name: "F-999", args: []string{"-e", "cpu-clock", "-F", "999"}},
	{name: "F-max", args: []string{"-e", "cpu-clock", "-F", "max"}},
	{name: "j-any_call-u", args: []string{"-e", "cycles", "-j", "any_call,u"}},
	{name: "j-any-k", args: []string{"-e", "cycles", "-j", "any,k"}},
	{name: "j-ind_call-save_type", args: []string{"-e", "cycles", "-j", "ind_call,save_type"}},
	{name: "j-u-only", args: []string{"-e", "cycles:u", "-j", "u"}},
	{name: "b", args: []string{"-e", "cycles", "-b"}},
	{name: "call-graph-lbr", args: []string{"-e", "cycles", "--call-graph", "lbr"}},
	{name: "call-graph-lbr-k-falls-back", args: []string{"-e", "cycles:k", "--call-graph", "lbr"}},
	{name: "call-graph-lbr-with-j", args: []string{"-e", "cycles", "--call-graph", "lbr", "-j", "any_call"}},
	{name: "call-graph-dwarf", args: []string{"-e", "cpu-clock", "--call-graph", "dwarf"}},
	{name: "call-graph-dwarf-4096-c", args: []string{"-e", "cpu-clock", "--call-graph", "dwarf,4096", "-c", "5000"}},
	{name: "call-graph-dwarf-rounded", args: []string{"-e", "cpu-clock", "--call-graph", "dwarf,4097"}},
	{name: "call-graph-dwarf-two", args: []string{"-e", "cpu-clock", "-e", "task-clock", "--call-graph", "dwarf"}},
	{name: "call-graph-fp-maxstack", args: []string{"-e", "cpu-clock", "--call-graph", "fp,100"}},
	{name: "lbr-source-shape", args: []string{"-e", "branches:u", "-j", "any_call,u", "-g"}},
	// hwprof's lbr and calls sources (internal/source.Plan) for a model
	// with BR_INST_RETIRED.NEAR_CALL in perf's tables, and the cycles
	// fallback of lbr.
	{name: "source-lbr-near-call", args: []string{"-e", "cpu/event=0xc4,umask=0x2,name=hwprof_calls/u", "-c", "100003", "-j", "any_call,u,save_type", "-g"},
		perfArgs: []string{"-e", "r02c4:u", "-c", "100003", "-j", "any_call,u,save_type", "-g"}},
	{name: "source-lbr-cycles", args: []string{"-e", "cycles:u", "-c", "1000003", "-j", "any_call,u,save_type", "-g"}},
	{name: "source-lbr-no-save-type", args: []string{"-e", "cpu/event=0xc4,umask=0x2,name=hwprof_calls/u", "-c", "100003", "-j", "any_call,u", "-g"},
		perfArgs: []string{"-e", "r02c4:u", "-c", "100003", "-j", "any_call,u", "-g"}},
	{name: "source-calls-pp", args: []string{"-e", "cpu/event=0xc4,umask=0x2,name=hwprof_calls/upp", "-c", "10007", "-g"},
		perfArgs: []string{"-e", "r02c4:upp", "-c", "10007", "-g"}},
	{name: "source-calls-atom-umask", args: []string{"-e", "cpu/event=0xc4,umask=0xf9,name=hwprof_calls/upp", "-c", "10007", "-g"},
		perfArgs: []string{"-e", "rf9c4:upp", "-c", "10007", "-g"}},
	{name: "page-faults", args: []string{"-e", "page-faults"}},
	{name: "context-switches", args: []string{"-e", "context-switches"}},
	{name: "ref-cycles", args: []string{"-e", "ref-cycles"}},
	{name: "bus-cycles", args: []string{"-e", "bus-cycles"}},
	{name: "bpf-output", args: []string{"-e", "bpf-output"}},
	{name: "sample-read", args: []string{"-e", "cpu-clock:S"}},
	{name: "no-inherit", args: []string{"-e", "cpu-clock", "--no-inherit"}},
	{name: "term-period-identifier", args: []string{"-F", "200", "-e", "cpu-clock", "-e", "cpu-clock/period=7/"}},
	{name: "term-time-branch", args: []string{"-e", "cpu-clock/time=0/", "-e", "cpu-clock/branch_type=u/"}},
	{name: "term-callgraph-over-global", args: []string{"--call-graph", "dwarf", "-e", "cpu-clock", "-e", "cpu-clock/call-graph=fp/"}},
	{name: "term-max-stack", args: []string{"-g", "-e", "cpu-clock", "-e", "cpu-clock/max-stack=3,stack-size=100/"}},
	{name: "term-dwarf-stack-size", args: []string{"-e", "cpu-clock/call-graph=dwarf,stack-size=1000,inherit=0/"}},
	{name: "term-stack-size-resets-global", args: []string{"-g", "-e", "cpu-clock", "-e", "cpu-clock/stack-size=100/"}},
	{name: "term-call-graph-no", args: []string{"-g", "-e", "cpu-clock", "-e", "cpu-clock/call-graph=no/"}},
	{name: "term-branch-type-with-j", args: []string{"-j", "any_call", "-e", "cpu-clock/branch_type=u/"}},
	{name: "term-freq-zero", args: []string{"-e", "cpu-clock/freq=0/"}},
	{name: "term-inherit-flags", args: []string{"--no-inherit", "-e", "cpu-clock", "-e", "cpu-clock/inherit/", "-e", "task-clock/no-inherit,overwrite/"}},
	{name: "sample-read-two", args: []string{"-e", "cpu-clock,cpu-clock:S"}},
	{name: "mods-DeIW", args: []string{"-e", "cycles:D", "-e", "cycles:eIW"}},
	{name: "mods-GH", args: []string{"-e", "cycles:GH"}},
	{name: "raw-with-terms", args: []string{"-e", "r1a8/period=1000/pp"}},
	{name: "cpu-pmu-flag-bits", args: []string{"-e", "cpu/cmask=1,inv,edge,event=0xc4/"}, perfArgs: []string{"-e", "r18400c4"}},
	{name: "cpu-pmu-period-name-k", args: []string{"-e", "cpu/event=0x3c,period=100000,name=x/k"}, perfArgs: []string{"-e", "r3c/period=100000/k"}},
	{name: "cpu-pmu-config1", args: []string{"-e", "cpu/ldlat=3,event=0xcd,umask=0x1/"}, perfArgs: []string{"-e", "r1cd/config1=3/"}},
	{name: "software-names", args: []string{"-e", "cpu-clock,task-clock,faults,minor-faults,major-faults,cs,cpu-migrations,migrations,alignment-faults,emulation-faults,dummy,cgroup-switches"}},
	{name: "p-pid", args: []string{"-p", "{PID}", "-e", "cpu-clock"}},
	{name: "p-pid-two", args: []string{"-p", "{PID}", "-e", "cpu-clock", "-e", "task-clock", "-g"}},
	{name: "a-system-wide", args: []string{"-a", "-e", "cpu-clock"}},
	{name: "a-two-dwarf", args: []string{"-a", "-e", "cpu-clock", "-e", "task-clock", "--call-graph", "dwarf"}},
	{name: "a-dummy-first", args: []string{"-a", "-e", "dummy,cpu-clock"}},
	{name: "a-period", args: []string{"-a", "-e", "cpu-clock", "-c", "1000"}},
}, append(sysfsRows(event.SysfsPMURoot), hardwareNameRows()...)...)

type perfRow struct {
	name     string
	args     []string
	perfArgs []string
	skip     string // why this host cannot have the row (a sysfs fact); "" runs it
}

// sysfsRows are the rows that name a PMU of sysfs under root: one of its
// event aliases (pmu/alias/u) and its "event" format term given twice
// (pmu/event=0x10,event=0x20,config1=3/: perf ORs repeated terms). Which
// PMUs and aliases a host offers differs from machine to machine, so the
// rows take the first in name order that sysfs lists, read here directly
// (not through DiscoverPMUs, which is under test); a row this host cannot
// have is skipped, with the reason.
func sysfsRows(root string) []perfRow {
	alias := perfRow{name: "sysfs-pmu-alias", skip: "no PMU under " + root + " lists an event alias in events/"}
	terms := perfRow{name: "sysfs-pmu-or-terms", skip: "no PMU under " + root + " has an \"event\" term in format/"}
	pmus, _ := os.ReadDir(root) // sorted by name
	for _, pmu := range pmus {
		dir := filepath.Join(root, pmu.Name())
		if alias.args == nil {
			events, _ := os.ReadDir(filepath.Join(dir, "events"))
			for _, e := range events {
				// .scale, .unit, .per-pkg and .snapshot describe an alias
				if !strings.Contains(e.Name(), ".") {
					alias.args, alias.skip = []string{"-e", pmu.Name() + "/" + e.Name() + "/u"}, ""
					break
				}
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "format", "event")); err == nil && terms.args == nil {
			terms.args, terms.skip = []string{"-e", pmu.Name() + "/event=0x10,event=0x20,config1=3/"}, ""
		}
	}
	return []perfRow{alias, terms}
}

// hardwareNameRows checks every hardware event name of perf's lexer, one
// per row.
func hardwareNameRows() []perfRow {
	var rows []perfRow
	for _, name := range event.HardwareEventNames() {
		rows = append(rows, perfRow{name: "hw-" + name, args: []string{"-e", name}})
	}
	slices.SortFunc(rows, func(a, b perfRow) int { return strings.Compare(a.name, b.name) })
	return rows
}

func TestAttrsMatchPerf(t *testing.T) {
	perfPath, err := exec.LookPath("perf")
	if err != nil {
		t.Skip("perf is not on PATH: no oracle to compare with")
	}
	sleep := exec.Command("sleep", "60")
	if err := sleep.Start(); err != nil {
		t.Fatalf("start sleep for -p rows: %v", err)
	}
	t.Cleanup(func() { sleep.Process.Kill(); sleep.Wait() })
	pid := strconv.Itoa(sleep.Process.Pid)
	outputs := runPerfRows(t, perfPath, pid)
	for i, row := range perfRows {
		t.Run(row.name, func(t *testing.T) {
			if row.skip != "" {
				t.Skip(row.skip)
			}
			args := substitute(row.args, pid)
			got, err := attrsFromArgs(args)
			if err != nil {
				t.Fatalf("hwprof: %v", err)
			}
			want := perfAttrBlocks(outputs[i])
			if diff := diffBlocks(want, got); diff != "" {
				t.Errorf("perf record -vv %s\n(- perf, + hwprof)\n%s\nfull perf output:\n%s",
					strings.Join(perfArgsOf(row.args, row.perfArgs, pid), " "), diff, outputs[i])
			}
		})
	}
}

func substitute(args []string, pid string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strings.ReplaceAll(a, "{PID}", pid)
	}
	return out
}

func perfArgsOf(args, perfArgs []string, pid string) []string {
	if perfArgs != nil {
		args = perfArgs
	}
	return substitute(args, pid)
}

// runPerfRows runs every row's perf command, twelve at a time: perf
// spends most of its second waiting (its side-band thread polls for a
// second before it exits) and about a quarter second computing, so twelve
// keep two CPUs busy where six left them half idle.
func runPerfRows(t *testing.T, perfPath, pid string) []string {
	dir := t.TempDir()
	outputs := make([]string, len(perfRows))
	sem := make(chan struct{}, 12)
	var wg sync.WaitGroup
	for i, row := range perfRows {
		if row.skip != "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			args := append([]string{"record", "-vv"}, perfArgsOf(row.args, row.perfArgs, pid)...)
			args = append(args, "-o", filepath.Join(dir, fmt.Sprintf("%d.data", i)), "--", "true")
			cmd := exec.Command(perfPath, args...)
			cmd.Env = append(os.Environ(), "DEBUGINFOD_URLS=")
			out, _ := cmd.CombinedOutput() // the opens of hardware events fail here; the blocks are printed first
			outputs[i] = string(out)
		}()
	}
	wg.Wait()
	return outputs
}

// attrsFromArgs parses perf record options through perfflags.Register on a
// fresh FlagSet (plus -p and -a, which the command owns) and prints the
// attrs BuildAttrs makes.
func attrsFromArgs(args []string) ([][]string, error) {
	var cfg event.RecordConfig
	fs := flag.NewFlagSet("record", flag.ContinueOnError)
	fs.SetOutput(new(bytes.Buffer))
	perfflags.Register(fs, &cfg)
	fs.Func("p", "pid", func(string) error { cfg.Target = event.TargetPIDs; return nil })
	fs.BoolFunc("a", "system wide", func(string) error { cfg.Target = event.TargetCPUs; return nil })
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	evs, err := event.BuildAttrs(cfg)
	if err != nil {
		return nil, err
	}
	var blocks [][]string
	for _, ev := range evs {
		var b bytes.Buffer
		if err := perf.FprintAttr(&b, &ev.Attr); err != nil {
			return nil, err
		}
		blocks = append(blocks, strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n"))
	}
	return blocks, nil
}

var openedRE = regexp.MustCompile(`= \d+$`)

// perfAttrBlocks extracts the attr block of each event from perf record
// -vv output: the first block per event. After a failed open perf prints
// more blocks for the same event (lower precise_ip, missing features, the
// cpu-clock fallback of cycles), which are skipped until an open
// succeeds. perf's side-band dummy event (watermark, bpf_event) is left
// out.
func perfAttrBlocks(out string) [][]string {
	var blocks [][]string
	var cur, pending []string
	inBlock, retry := false, false
	flush := func() {
		if pending != nil && !retry && !isSideBand(pending) {
			blocks = append(blocks, pending)
		}
		pending = nil
	}
	for _, line := range strings.Split(out, "\n") {
		switch {
		case line == "perf_event_attr:":
			flush()
			inBlock, cur = true, []string{line}
		case inBlock && strings.HasPrefix(line, "-----"):
			inBlock, pending = false, cur
		case inBlock:
			cur = append(cur, line)
		case strings.HasPrefix(line, "sys_perf_event_open failed"):
			flush()
			retry = true
		case strings.HasPrefix(line, "sys_perf_event_open"):
			flush()
			if openedRE.MatchString(line) {
				retry = false
			}
		}
	}
	flush()
	return blocks
}

func isSideBand(block []string) bool {
	for _, l := range block {
		if strings.HasPrefix(l, "  watermark ") {
			return true
		}
	}
	return false
}

// diffBlocks returns "" when the blocks are equal, else a line diff per
// event.
func diffBlocks(want, got [][]string) string {
	var b strings.Builder
	if len(want) != len(got) {
		fmt.Fprintf(&b, "perf printed %d event blocks, hwprof built %d\n", len(want), len(got))
	}
	for i := 0; i < max(len(want), len(got)); i++ {
		var w, g []string
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if d := testenv.LineDiff(w, g); d != "" {
			fmt.Fprintf(&b, "event %d:\n%s", i, d)
		}
	}
	return b.String()
}

// TestSysfsRows checks how the sysfs rows are derived from a PMU tree:
// aliases, not their .scale/.unit files, and a skip with the reason when
// the tree offers nothing.
func TestSysfsRows(t *testing.T) {
	root := t.TempDir()
	rows := sysfsRows(root)
	if len(rows) != 2 || rows[0].skip == "" || rows[1].skip == "" || rows[0].args != nil {
		t.Errorf("empty sysfs: rows %+v, want both skipped with a reason", rows)
	}
	for _, f := range []string{"aa/events/x.scale", "aa/events/x.unit", "bb/events/smi", "bb/format/event", "cc/events/tsc", "cc/format/event"} {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("event=0x04\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rows = sysfsRows(root)
	if got := strings.Join(rows[0].args, " "); got != "-e bb/smi/u" || rows[0].skip != "" {
		t.Errorf("alias row %q (skip %q), want -e bb/smi/u", got, rows[0].skip)
	}
	if got := strings.Join(rows[1].args, " "); got != "-e bb/event=0x10,event=0x20,config1=3/" || rows[1].skip != "" {
		t.Errorf("terms row %q (skip %q), want bb's event term", got, rows[1].skip)
	}
}
