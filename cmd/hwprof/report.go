package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/hwprof/hwprof/internal/diag"
	"github.com/hwprof/hwprof/internal/engine"
	"github.com/hwprof/hwprof/internal/output"
	"github.com/hwprof/hwprof/profile"
	"github.com/hwprof/hwprof/report"
	"github.com/hwprof/hwprof/report/flamegraph"
	"github.com/hwprof/hwprof/symbolize/debuginfod"
)

// cmdReport reads a recording into a profile (engine.Load) and prints it:
// text by default, or JSON (docs/REPORT-JSON.md), a flame-graph page or
// folded stacks (package report). A file that ends early or holds a
// corrupt record is reported up to there; its warnings and exit status
// follow package diag's rule, as in every reading command.
func cmdReport(args []string, stdout, stderr io.Writer) int {
	return runReport("report", "text", args, stdout, stderr)
}

// cmdFlamegraph is hwprof report --format flamegraph.
func cmdFlamegraph(args []string, stdout, stderr io.Writer) int {
	return runReport("flamegraph", "flamegraph", args, stdout, stderr)
}

// reportFormats are the formats of --format.
var reportFormats = []string{"text", "json", "flamegraph", "folded", "pprof", "pgo", "autofdo", "autofdo-gcov", "bolt"}

func runReport(name, defFormat string, args []string, stdout, stderr io.Writer) int {
	formats := "[--format text|json|flamegraph|folded|pprof|pgo|autofdo|autofdo-gcov|bolt] [--object PATH] [--pgo] [--pgo-weight calls|time] "
	if name == "flamegraph" {
		formats = ""
	}
	fs := newFlagSet(name, "[-i FILE]... "+formats+"[-o FILE] [--top N] [--contexts N] [--weight time|calls] [--pid P[,P]] [--tid T[,T]] [--comm NAME[,NAME]] [--srcline] [--symfs DIR] [--debug-dir DIR] [--offline] [-j N] [--dedup-ratio RR]", stderr)
	var in inputs
	fs.Var(&in, "i", inputsUsage)
	format := fs.String("format", defFormat, "output `format`: text, json, flamegraph (an HTML page), folded (stacks for flamegraph.pl), pprof (gzipped profile.proto: -o FILE.pb.gz), pgo (a pprof for go build -pgo), autofdo (an LLVM sample profile for clang -fprofile-sample-use) autofdo-gcov (for gcc -fauto-profile) or bolt (.fdata for llvm-bolt -data=)")
	object := fs.String("object", "", "autofdo, bolt: profile the object `PATH` (a path as recorded or a base name; default: the program)")
	pgo := fs.Bool("pgo", false, "the same as --format pgo")
	pgoWeight := fs.String("pgo-weight", "", "pprof and pgo: what call edges weigh, `calls` (measured call counts) or time (default: calls when the source counts them)")
	out := fs.String("o", "", "write to `FILE` (an existing regular file becomes FILE.old; default: standard output)")
	weight := fs.String("weight", "time", weightUsage)
	top := fs.Int("top", 20, "show the `N` hottest functions and edges (0: all; json: all unless given)")
	contexts := fs.Int("contexts", 10, "show the `N` hottest calling contexts (0: all; json: all unless given)")
	pids := fs.String("pid", "", "keep only the samples of processes `P[,P...]`")
	tids := fs.String("tid", "", "keep only the samples of threads `T[,T...]`")
	comms := fs.String("comm", "", "keep only the samples of processes named `NAME[,NAME...]` (their command name, as perf report --comms)")
	srcline := fs.Bool("srcline", false, "give call sites their source lines from separate debug files too (debug packages: slower), and their inlined frames")
	symfs := fs.String("symfs", "", "look for every object under `DIR`, as perf's --symfs")
	debugDir := fs.String("debug-dir", "", "a `DIR` of binaries and debug files named by build-id")
	offline := fs.Bool("offline", false, offlineUsage)
	workers := fs.Int("j", 0, "fold with `N` workers (0: one per CPU)")
	dedup := fs.Float64("dedup-ratio", 0, "fold only this share `RR` in (0,1] of stacks already seen, weighted 1/RR (0: all)")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "hwprof %s: unexpected argument %q\n", name, fs.Arg(0))
		return exitUsage
	}
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "hwprof %s: %s\n", name, fmt.Sprintf(format, a...))
		return exitUsage
	}
	if *pgo {
		*format = "pgo"
	}
	if name == "flamegraph" && *format != "flamegraph" {
		given := "--format " + *format
		if *pgo {
			given = "--pgo"
		}
		return usage("%s: hwprof flamegraph draws a flame graph; hwprof report %s writes that", given, given)
	}
	if !slices.Contains(reportFormats, *format) {
		return usage("unknown --format %q (%s)", *format, strings.Join(reportFormats, ", "))
	}
	if _, err := pprofOptions(nil, false, *pgoWeight); err != nil {
		return usage("%v", err)
	}
	wf, err := parseWeight(*weight)
	if err != nil {
		return usage("%v", err)
	}
	fw := wf.flame
	if *top < 0 || *contexts < 0 || *workers < 0 {
		return usage("--top, --contexts and -j must not be negative")
	}
	if *dedup < 0 || *dedup > 1 {
		return usage("--dedup-ratio %v is not in (0, 1]", *dedup)
	}
	paths, err := in.paths()
	if err != nil {
		return usage("%v", err)
	}
	o := engine.LoadOptions{SymFS: *symfs, SiteLines: *srcline || isPProf(*format), Workers: *workers, DedupRatio: *dedup}
	filter := processFilter{pids: *pids, tids: *tids, comms: *comms}
	if filter.pidList, err = parseIDList("--pid", *pids); err == nil {
		filter.tidList, err = parseIDList("--tid", *tids)
	}
	if err != nil {
		return usage("%v", err)
	}
	if *comms != "" {
		filter.commList = strings.Split(*comms, ",")
	}
	o.PIDs, o.TIDs, o.Comms = filter.pidList, filter.tidList, filter.commList
	// The JSON report is whole unless bounded on purpose: scripts read it.
	if given := setFlags(fs); *format == "json" {
		if !given["top"] {
			*top = 0
		}
		if !given["contexts"] {
			*contexts = 0
		}
	}
	if *debugDir != "" {
		o.DebugDirs = []string{*debugDir}
	}
	o.DebugDirs = withBuildIDCache(o.DebugDirs)
	o.Debuginfod = debuginfod.FromEnv(*offline)
	if *out != "" && *out != output.Stdout {
		if _, err := output.Check(*out); err != nil {
			return fail(stderr, err)
		}
	}
	if *format == "autofdo" || *format == "autofdo-gcov" {
		return runAutoFDO(paths, o, *object, *out, *format == "autofdo-gcov", "", stdout, stderr)
	}
	if *format == "bolt" {
		return runBOLT(paths, o, *object, *out, stdout, stderr)
	}
	p, err := loadProfile(paths, o)
	if p == nil {
		return fail(stderr, err)
	}
	// A filter that keeps nothing is an error, after the warnings (a
	// recording read only in part may be why).
	if filter.on() {
		warnings, err := filter.check(&p.Recording)
		if err != nil {
			diag.Print(stderr, p.Warnings, p.Recording.Incomplete)
			return fail(stderr, err)
		}
		p.Warnings = append(p.Warnings, warnings...)
	}
	// err, if any, stopped reading: it is among the warnings, and the
	// profile is incomplete.
	status := diag.Print(stderr, p.Warnings, p.Recording.Incomplete)
	// the time off the CPU is checked by weighted: a recording with no
	// sampled time can have it
	if err := checkWeight(fs, fw, []string{""}, p); wf.measure == profile.Sampled && err != nil {
		return fail(stderr, err)
	}
	// pprof has every weight, as sample types: --weight picks the first;
	// the flame graph has them all too, on a switch: --weight picks the
	// one it opens on.
	var defType string
	if isPProf(*format) || *format == "flamegraph" {
		if _, err := wf.weighted(p, ""); err != nil {
			return fail(stderr, err)
		}
		if wf.measure != profile.Sampled {
			defType = wf.measure.String() // pprof's sample types of the same names
		}
	} else if p, err = wf.weighted(p, ""); err != nil {
		return fail(stderr, err)
	}
	render := func(w io.Writer) error {
		switch *format {
		case "json":
			return report.JSON(w, p, report.Options{Top: allIfZero(*top), Contexts: allIfZero(*contexts)})
		case "flamegraph":
			return report.Flamegraph(w, p, flamegraph.Options{Weight: report.MeasureWeight(wf.measure, fw)})
		case "folded":
			return report.Folded(w, p, fw)
		case "pprof", "pgo":
			return writePProf(w, p, *format == "pgo", *pgoWeight, defType, stderr)
		}
		return report.Text(w, p, report.Options{Top: allIfZero(*top), Contexts: allIfZero(*contexts)})
	}
	if err := writeReport(*out, stdout, render); err != nil {
		return fail(stderr, err)
	}
	return status
}

// weightFlag is --weight: the weight a flame graph or folded stacks show
// (time or calls), and what the profile measures (profile.Measure: the
// samples, for time, cpu and calls; the time off the CPU; wall time).
type weightFlag struct {
	flame   flamegraph.Weight
	measure profile.Measure
}

const weightUsage = "the `WEIGHT` reported: cpu (or time: the samples), calls (for a source that counts calls; flamegraph and folded), " +
	"off-cpu (the time threads spent off the CPU: record --off-cpu) or wall (on and off the CPU together)"

// parseWeight reads --weight.
func parseWeight(s string) (weightFlag, error) {
	switch s {
	case "time", "cpu":
		return weightFlag{flame: flamegraph.WeightTime}, nil
	case "calls":
		return weightFlag{flame: flamegraph.WeightCalls}, nil
	case "off-cpu":
		return weightFlag{flame: flamegraph.WeightTime, measure: profile.OffCPUTime}, nil
	case "wall":
		return weightFlag{flame: flamegraph.WeightTime, measure: profile.WallTime}, nil
	}
	return weightFlag{}, fmt.Errorf("unknown --weight %q (cpu, time, calls, off-cpu or wall)", s)
}

// weighted returns p measured as --weight asks (report.Weighted).
func (w weightFlag) weighted(p *profile.Profile, name string) (*profile.Profile, error) {
	q, err := report.Weighted(p, w.measure)
	if err != nil {
		if name != "" {
			name += ": "
		}
		return nil, fmt.Errorf("--weight %s: %s%w", w.measure, name, err)
	}
	return q, nil
}

// writeReport writes a report through render to path by internal/output's
// rules (a regular file is rotated to .old, a device written as it is),
// or to stdout when path is "" or "-". A report that cannot be written
// leaves the previous file in place.
func writeReport(path string, stdout io.Writer, render func(io.Writer) error) error {
	if path == "" || path == output.Stdout {
		w := bufio.NewWriterSize(stdout, 1<<16)
		if err := render(w); err != nil {
			return err
		}
		return w.Flush()
	}
	o, err := output.Open(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(o.File, 1<<16)
	err = render(w)
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		return errors.Join(err, o.Discard())
	}
	return o.Close()
}

// allIfZero turns the flags' 0 (all) into package report's -1.
func allIfZero(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// checkWeight refuses a --weight that a recording lacks (calls of a timer
// recording, time of an exact one), as --pgo-weight calls is refused,
// rather than drawing or comparing the other weight: the weight asked
// for, or calls by default. names are the names an error gives ps ("" for
// report's one).
func checkWeight(fs *flag.FlagSet, fw flamegraph.Weight, names []string, ps ...*profile.Profile) error {
	if fw != flamegraph.WeightCalls && !setFlags(fs)["weight"] {
		return nil
	}
	for i, p := range ps {
		if err := report.CheckWeight(p, fw); err != nil {
			name := names[i]
			if name != "" {
				name += ": "
			}
			other := map[flamegraph.Weight]string{flamegraph.WeightCalls: "time", flamegraph.WeightTime: "calls"}[fw]
			return fmt.Errorf("--weight %s: %s%w: use --weight %s", fw, name, err, other)
		}
	}
	return nil
}
