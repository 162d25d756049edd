package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/hwprof/hwprof/internal/source"
	"github.com/hwprof/hwprof/profile"
	"github.com/hwprof/hwprof/report"
)

// compareFlags are the options of `hwprof compare`.
type compareFlags struct {
	sources   string
	reference string
	dir       string
	top       int
	quiet     bool
	exact     exactFlags
	// what the exact source probed, once recorded: the functions' names
	// and their number
	probed map[string]bool
	probes int
}

func (c *compareFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.sources, "sources", "", "compare these sources `LIST` (comma-separated: lbr, calls, timer, exact); "+
		"default: the default source of hwprof record, and timer")
	fs.StringVar(&c.reference, "reference", "exact", "the source taken as the truth: `SOURCE`")
	fs.StringVar(&c.dir, "o", "hwprof-compare", "keep the recordings in `DIR` as SOURCE.data (existing ones become .old)")
	fs.IntVar(&c.top, "top", 15, "show the reference's `N` hottest edges")
	fs.BoolVar(&c.quiet, "q", false, "print only the comparison")
}

// cmdCompare records a program once per source and prints how far each
// source's call edges are from the reference's.
//
// The exact source is recorded in a run of its own, every other source
// in one shared run (source.Runs), with the events `hwprof record --source
// S` uses (recordSources, compare_record.go). Each source's samples are
// folded by engine.Load, and the profiles are aligned and measured by
// profile.AlignKindsTo (edges by caller and callee name and the call site's
// object and offset, functions by name), on what the reference measured
// when it is exact: the calls into the functions it probed (scope). Each source is measured by its
// DCG as the papers define it (profile.DCGKind): the calls counted, or
// for the timer the top edge of each sample; a sampled source's
// adjacent-frame edges are shown beside, as SOURCE/adj.
func cmdCompare(args []string, stdout, stderr io.Writer) int {
	var c compareFlags
	fs := newFlagSet("compare", "[--sources timer,lbr] [--reference exact] [-o DIR] -- CMD [ARGS]", stderr)
	c.register(fs)
	c.exact.register(fs)
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	argv := fs.Args()
	if len(argv) == 0 {
		fmt.Fprintln(stderr, "hwprof compare: give the program to run: hwprof compare -- ./app")
		return exitUsage
	}
	if err := c.exact.check(); err != nil {
		fmt.Fprintf(stderr, "hwprof compare: %v\n", err)
		return exitUsage
	}
	facts := source.Gather()
	sources, err := c.plan(facts)
	if err != nil {
		fmt.Fprintf(stderr, "hwprof compare: %v\n", err)
		return exitUsage
	}
	profiles, files, err := c.recordSources(sources, facts, argv, stderr)
	if err != nil {
		return fail(stderr, err)
	}
	names := make([]string, len(sources))
	for i, src := range sources {
		names[i] = src.String()
	}
	names, ps, kinds := profile.DCGColumns(names, profiles)
	fmt.Fprintf(stdout, "recordings: %s\n\n", strings.Join(files, ", "))
	scope, note := c.scope(sources[0])
	report.Comparison(stdout, names, profile.AlignKindsTo(ps, kinds, scope), c.top, note)
	pages, err := writeComparePages(c.dir, names, profiles)
	if len(pages) > 0 {
		fmt.Fprintf(stdout, "\ndifferential flame graphs against %s (red: a larger share than %s gives, blue: smaller): %s\n",
			names[0], names[0], strings.Join(pages, ", "))
	}
	if err != nil {
		return fail(stderr, err)
	}
	return 0
}

// scope is what the comparison is restricted to, and the sentence that
// says so: with the exact source as the reference, the calls into the
// functions it probed (every source's edges into others are left out);
// nil and "" otherwise.
func (c *compareFlags) scope(ref source.Source) (map[string]bool, string) {
	if ref != source.Exact || c.probed == nil {
		return nil, ""
	}
	how := "every function of the program"
	switch {
	case c.exact.filter != "":
		how = "--probe-filter " + c.exact.filter
	case c.exact.objects != "":
		how = "every function of the program and of --probe-objects"
	}
	return c.probed, fmt.Sprintf("compared on what exact measured: the calls into the %d functions it probed (%s); "+
		"every source's edges into other functions are left out, and shares are of the calls or time left", c.probes, how)
}

// plan returns the sources to record, the reference first, each checked to
// work here (source.Compared).
func (c *compareFlags) plan(facts source.Facts) ([]source.Source, error) {
	ref, err := source.Parse(c.reference)
	if err != nil {
		return nil, fmt.Errorf("--reference: %w", err)
	}
	var others []source.Source
	if c.sources != "" {
		for name := range strings.SplitSeq(c.sources, ",") {
			s, err := source.Parse(strings.TrimSpace(name))
			if err != nil {
				return nil, fmt.Errorf("--sources: %w", err)
			}
			others = append(others, s)
		}
	}
	return source.Compared(source.Assess(facts), ref, others)
}
