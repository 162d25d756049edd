package main

import (
	"fmt"
	"io"
	"slices"

	"github.com/hwprof/hwprof/internal/source"
	"github.com/hwprof/hwprof/perf"
)

func cmdCheck(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("check", "", stderr)
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	f := source.Gather()
	printFacts(stdout, &f)
	fmt.Fprintln(stdout)
	vs := source.Assess(f)
	fmt.Fprintln(stdout, "sample sources:")
	for _, v := range vs {
		state := "works"
		if !v.OK {
			state = "not here"
		}
		fmt.Fprintf(stdout, "  %-6s %-8s %s\n", v.Source, state, v.Why)
		if !v.OK {
			fmt.Fprintf(stdout, "  %-6s %-8s %s\n", "", "", v.Instead)
		}
	}
	choice, why := source.Choose(vs)
	fmt.Fprintf(stdout, "\ndefault source: %s; %s\n", choice, why)
	return 0
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
	if f.PMUErr != nil {
		fmt.Fprintf(w, "PMUs              unreadable: %v\n", f.PMUErr)
		return
	}
	fmt.Fprintf(w, "PMUs in %s:\n", perf.SysfsPMURoot)
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
