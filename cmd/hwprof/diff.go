package main

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hwprof/hwprof/internal/engine"
	"github.com/hwprof/hwprof/internal/output"
	"github.com/hwprof/hwprof/profile"
	"github.com/hwprof/hwprof/report"
	"github.com/hwprof/hwprof/report/flamegraph"
)

// diffFormats are the formats of hwprof diff --format.
var diffFormats = []string{"text", "json", "flamegraph"}

// cmdDiff reads two recordings and prints the functions and call edges
// whose shares changed most from the first to the second (report.Diff),
// or draws their differential flame graph.
func cmdDiff(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("diff", "[--format text|json|flamegraph] [-o FILE] [--top N] [--weight cpu|calls|off-cpu|wall] BASE NEW", stderr)
	format := fs.String("format", "", "output `format`: text, json or flamegraph (an HTML page; the default when -o FILE ends in .html)")
	out := fs.String("o", "", "write to `FILE` (an existing regular file becomes FILE.old; default: standard output)")
	top := fs.Int("top", 20, "show the `N` functions and edges that changed most (0: all; json: all unless given)")
	weight := fs.String("weight", "time", "compare functions by `WEIGHT`: cpu (or time: the samples), calls (when both recordings count calls), "+
		"off-cpu (the time off the CPU: both recorded --off-cpu) or wall (on and off the CPU)")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "hwprof diff: %s\n", fmt.Sprintf(format, a...))
		return exitUsage
	}
	if fs.NArg() != 2 {
		return usage("give two recordings: hwprof diff BASE NEW")
	}
	if *format == "" {
		*format = "text"
		if strings.HasSuffix(strings.ToLower(*out), ".html") {
			*format = "flamegraph"
		}
	}
	if !slices.Contains(diffFormats, *format) {
		return usage("unknown --format %q (%s)", *format, strings.Join(diffFormats, ", "))
	}
	wf, err := parseWeight(*weight)
	if err != nil {
		return usage("%v", err)
	}
	fw := wf.flame
	if *top < 0 {
		return usage("--top must not be negative")
	}
	if *format == "json" && !setFlags(fs)["top"] {
		*top = 0
	}
	if *out != "" && *out != output.Stdout {
		if _, err := output.Check(*out); err != nil {
			return fail(stderr, err)
		}
	}
	var ps [2]*profile.Profile
	status := 0
	for i, in := range fs.Args() {
		p, err := loadProfile([]string{in}, engine.LoadOptions{})
		if p == nil {
			return fail(stderr, err)
		}
		// err, if any, stopped reading: it is among the warnings, and
		// the profile is incomplete
		if err != nil || p.Recording.Incomplete {
			status = exitError
		}
		for _, w := range p.Warnings {
			fmt.Fprintf(stderr, "hwprof: warning: %s: %s\n", in, w)
		}
		ps[i] = p
	}
	// the time off the CPU is checked by weighted: a recording with no
	// sampled time can have it
	if err := checkWeight(fs, fw, fs.Args(), ps[:]...); wf.measure == profile.Sampled && err != nil {
		return fail(stderr, err)
	}
	for i := range ps {
		if ps[i], err = wf.weighted(ps[i], fs.Arg(i)); err != nil {
			return fail(stderr, err)
		}
	}
	render := func(w io.Writer) error {
		if *format == "flamegraph" {
			return report.DiffFlamegraph(w, ps[0], ps[1], flamegraph.Options{Weight: fw})
		}
		d, err := report.NewDiff(ps[0], ps[1], fw)
		if err != nil {
			return err
		}
		if *format == "json" {
			return d.JSON(w, allIfZero(*top))
		}
		return d.Text(w, allIfZero(*top))
	}
	if err := writeReport(*out, stdout, render); err != nil {
		return fail(stderr, err)
	}
	if *out != "" && *out != output.Stdout && *format == "flamegraph" {
		fmt.Fprintf(stderr, "hwprof diff: differential flame graph of %s against %s written to %s\n", fs.Arg(1), fs.Arg(0), *out)
	}
	return status
}

// writeComparePages writes, for every source after the reference
// (profiles[0]), the differential flame graph of its profile against the
// reference's into dir as SOURCE-vs-REFERENCE.html, and returns the
// paths written.
func writeComparePages(dir string, names []string, profiles []*profile.Profile) ([]string, error) {
	var paths []string
	for i := 1; i < len(profiles); i++ {
		path := filepath.Join(dir, names[i]+"-vs-"+names[0]+".html")
		err := writeReport(path, nil, func(w io.Writer) error {
			return report.DiffFlamegraph(w, profiles[0], profiles[i], flamegraph.Options{})
		})
		if err != nil {
			return paths, fmt.Errorf("compare: differential flame graph of %s: %w", names[i], err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}
