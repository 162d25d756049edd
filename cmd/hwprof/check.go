package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/hwprof/hwprof/internal/record"
	"github.com/hwprof/hwprof/internal/source"
	"github.com/hwprof/hwprof/internal/uprobe"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/event"
)

// cmdCheck shows the machine's facts and, for each sample source, whether
// it works here. The verdict comes from doing what record does: the
// source's events are built by record's own code and opened by the
// recorder's (internal/record.TryOpen) on a program that is never run,
// then closed; the reasoning of internal/source explains a failure.
func cmdCheck(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("check", "", stderr)
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if !noArgs(fs, stderr) {
		return exitUsage
	}
	f := source.Gather()
	printFacts(stdout, &f)
	fmt.Fprintln(stdout)
	vs := source.Assess(f)
	tried := make([]tryResult, len(vs))
	var working []string
	for i, v := range vs {
		tried[i] = trySource(v)
		if tried[i].ok {
			working = append(working, v.Source.String())
		}
	}
	fmt.Fprintln(stdout, "sample sources (each tried: its events opened as hwprof record would, then closed):")
	for i, v := range vs {
		t := tried[i]
		state := "works"
		if !t.ok {
			state = "not here"
		}
		fmt.Fprintf(stdout, "  %-6s %-8s %s\n", v.Source, state, t.why)
		for _, l := range t.more {
			fmt.Fprintf(stdout, "  %-6s %-8s %s\n", "", "", l)
		}
		if !t.ok {
			fmt.Fprintf(stdout, "  %-6s %-8s %s\n", "", "", source.Instead(working))
		}
	}
	choice, why := source.Choose(vs)
	fmt.Fprintf(stdout, "\ndefault source: %s: %s\n", choice, why)
	if i := slices.IndexFunc(vs, func(v source.Verdict) bool { return v.Source == choice }); !tried[i].ok {
		fmt.Fprintf(stdout, "but it did not open here: give %s\n", source.Instead(working))
	}
	fmt.Fprintf(stdout, "\noff-cpu (record --off-cpu): %s\n", tryOffCPU(&f))
	return 0
}

// tryOffCPU opens the events of `hwprof record --off-cpu` (with the
// timer source) as trySource does and says what such a recording has
// here.
func tryOffCPU(f *source.Facts) string {
	self, err := os.Executable()
	if err != nil {
		return fmt.Sprintf("not tried: cannot find hwprof's own binary: %v", err)
	}
	rf, err := tryFlags(source.Timer)
	if err == nil {
		rf.offCPU = true
		var o record.Options
		if o, _, err = rf.sourceOptions([]string{self}, io.Discard); err == nil {
			_, err = record.TryOpen(o)
		}
	}
	switch {
	case err != nil:
		return "not here: " + err.Error()
	case f.UserOnly():
		return fmt.Sprintf("intervals only: every interval a thread spends off the CPU, without the stack it blocked in "+
			"(perf_event_paranoid is %d and hwprof runs without CAP_PERFMON: the kernel takes no context-switch sample "+
			"for an event that excludes the kernel; perf_event_paranoid 1 or CAP_PERFMON gives the stacks)", f.Paranoid)
	}
	return "works: every interval a thread spends off the CPU, with the stack it blocked in, the kernel's part saying why"
}

// tryResult is a source's verdict from trying it.
type tryResult struct {
	ok   bool
	why  string   // the first line: what works, or what is missing
	more []string // further lines: the open's error, the fallback
}

// trySource builds source v.Source's events as `hwprof record --source S`
// does (for the exact source, one probe on main.main of hwprof's own
// binary) and opens them as the recorder does. A source that internal/source judges
// not to work is tried all the same, but record refuses it, so it is
// "not here" whatever the open says.
func trySource(v source.Verdict) tryResult {
	self, err := os.Executable()
	if err != nil {
		return tryResult{why: fmt.Sprintf("cannot find hwprof's own binary to try the events on: %v", err)}
	}
	var r tryResult
	rf, err := tryFlags(v.Source)
	var o record.Options
	if err == nil {
		o, _, err = rf.sourceOptions([]string{self}, io.Discard)
	}
	var st record.Stats
	if err == nil {
		st, err = record.TryOpen(o)
	}
	uprobe.DropOwn() // nothing is left when TryOpen ran; the exact source's probe when it did not
	switch {
	case err != nil && !v.OK:
		r.why = v.Why
		if !strings.Contains(err.Error(), v.Why) {
			r.more = []string{"trying it: " + err.Error()}
		}
	case err != nil:
		r.why = err.Error()
	case !v.OK:
		r.why = v.Why
		r.more = []string{"hwprof record refuses it for that reason, although its events opened here: " +
			"hwprof's rule is wrong for this machine (please report it)"}
	default:
		r.ok = true
		r.why = v.Why
		if len(st.UserOnly) > 0 {
			p, _ := perf.Paranoid()
			r.more = []string{perf.UserOnlyNote(p)}
		}
	}
	return r
}

// tryFlags are the record flags check tries source s with: record's own
// flags and defaults, as `hwprof record -q --source S --probe-filter
// '^main\.main$'` parses them (an exact source that probes main.main
// only), building the events for trying (trying).
func tryFlags(s source.Source) (recordFlags, error) {
	var rf recordFlags
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	rf.register(fs)
	if err := fs.Parse([]string{"-q", "--source", s.String(), "--probe-filter", `^main\.main$`}); err != nil {
		return rf, err
	}
	rf.set = setFlags(fs)
	rf.trying = true
	return rf, nil
}

func printFacts(w io.Writer, f *source.Facts) {
	fmt.Fprintf(w, "kernel            %s\n", f.Kernel)
	if f.CPUModel != "" {
		fmt.Fprintf(w, "cpu               %s\n", f.CPUModel)
	}
	if f.ParanoidErr != nil {
		fmt.Fprintf(w, "perf_event_paranoid  unreadable: %v\n", f.ParanoidErr)
	} else {
		fmt.Fprintf(w, "perf_event_paranoid  %d\n", f.Paranoid)
	}
	fmt.Fprintf(w, "privileges        root=%v CAP_PERFMON=%v\n", f.Root, f.CapPerfmon)
	if f.TracefsErr != nil {
		fmt.Fprintf(w, "tracefs           %v\n", f.TracefsErr)
	} else {
		fmt.Fprintf(w, "tracefs           uprobes can be defined\n")
	}
	if f.PMUErr != nil {
		fmt.Fprintf(w, "PMUs              unreadable: %v\n", f.PMUErr)
		return
	}
	fmt.Fprintf(w, "PMUs in %s:\n", event.SysfsPMURoot)
	names := make([]string, 0, len(f.PMUs))
	for n := range f.PMUs {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		p := f.PMUs[n]
		extra := ""
		if d := p.BranchDepth(); d > 0 {
			extra += fmt.Sprintf(" LBR depth %d", d)
		}
		if c := p.CPUName(); c != "" {
			extra += " model " + c
		}
		if len(p.Formats) > 0 {
			extra += fmt.Sprintf(" %d format fields", len(p.Formats))
		}
		fmt.Fprintf(w, "  %-12s type %-3d%s\n", n, p.Type, extra)
	}
}
