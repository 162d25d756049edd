package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hwprof/hwprof/internal/engine"
	"github.com/hwprof/hwprof/internal/launch"
	"github.com/hwprof/hwprof/internal/record"
	"github.com/hwprof/hwprof/internal/source"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/profile"
)

// compareFlags are the options of `hwprof compare`.
type compareFlags struct {
	sources   string
	reference string
	dir       string
	top       int
	quiet     bool
	exact     exactFlags
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
// Every source is recorded in its own run of the program (also the timer
// beside a hardware source: one run for both is not done yet), with the
// events `hwprof record --source S` uses. Each recording is folded by
// engine.Load, and the profiles are aligned and measured by
// profile.AlignKinds (edges by caller and callee name and the call site's
// object and offset, functions by name). Each source is measured by its
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
	facts := source.Gather()
	sources, err := c.plan(facts)
	if err != nil {
		fmt.Fprintf(stderr, "hwprof compare: %v\n", err)
		return exitUsage
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return fail(stderr, err)
	}
	profiles := make([]*profile.Profile, len(sources))
	var files []string
	for _, run := range groupRuns(sources) {
		names := make([]string, len(run))
		for i, src := range run {
			names[i] = src.String()
		}
		path := filepath.Join(c.dir, strings.Join(names, "+")+".data")
		events, err := c.record(run, facts, argv, path, stderr)
		if err != nil {
			return fail(stderr, fmt.Errorf("compare: recording with %s: %w", strings.Join(names, "+"), err))
		}
		files = append(files, path)
		for i, src := range run {
			lo := engine.LoadOptions{}
			if len(run) > 1 {
				lo.Event = events[i] // one source's event of a shared run
			}
			k := slices.Index(sources, src)
			if profiles[k], err = engine.Load(path, lo); err != nil {
				return fail(stderr, fmt.Errorf("compare: reading %s: %w", path, err))
			}
		}
	}
	names, ps, kinds := dcgColumns(sources, profiles)
	fmt.Fprintf(stdout, "recordings: %s\n\n", strings.Join(files, ", "))
	printComparison(stdout, names, profile.AlignKinds(ps, kinds), c.top)
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

// dcgColumns returns the columns compare shows: each source's DCG as the
// papers define it (Profile.DCGKind: call counts, or the top edge of each
// sample), and beside each sampled source its adjacent-frame edges, named
// SOURCE/adj, which weigh inclusive time rather than calls.
func dcgColumns(sources []source.Source, profiles []*profile.Profile) ([]string, []*profile.Profile, []profile.DCGKind) {
	var names []string
	var ps []*profile.Profile
	var kinds []profile.DCGKind
	for i, p := range profiles {
		names, ps, kinds = append(names, sources[i].String()), append(ps, p), append(kinds, p.DCGKind())
	}
	for i, p := range profiles {
		if i > 0 && p.DCGKind() == profile.TopEdges {
			names, ps, kinds = append(names, sources[i].String()+"/adj"), append(ps, p), append(kinds, profile.AdjacentFrames)
		}
	}
	return names, ps, kinds
}

// plan returns the sources to record, the reference first, each checked to
// work here.
func (c *compareFlags) plan(facts source.Facts) ([]source.Source, error) {
	ref, err := source.Parse(c.reference)
	if err != nil {
		return nil, fmt.Errorf("--reference: %w", err)
	}
	verdicts := source.Assess(facts)
	var others []source.Source
	if c.sources == "" {
		def, _ := source.Choose(verdicts)
		others = []source.Source{def}
		if def != source.Timer {
			others = append(others, source.Timer)
		}
	} else {
		for name := range strings.SplitSeq(c.sources, ",") {
			s, err := source.Parse(strings.TrimSpace(name))
			if err != nil {
				return nil, fmt.Errorf("--sources: %w", err)
			}
			others = append(others, s)
		}
	}
	all := []source.Source{ref}
	for _, s := range others {
		if !slices.Contains(all, s) {
			all = append(all, s)
		}
	}
	if len(all) < 2 {
		return nil, fmt.Errorf("nothing to compare: give --sources other than the reference %s", ref)
	}
	for _, s := range all {
		if v := verdicts[slices.IndexFunc(verdicts, func(v source.Verdict) bool { return v.Source == s })]; !v.OK {
			return nil, fmt.Errorf("source %s does not work here: %s; %s", s, v.Why, v.Instead)
		}
	}
	return all, nil
}

// groupRuns says which sources are recorded in one run: exact alone
// (every call traps, which would slow the program under the others), all
// the others together, so that they see the same execution and the
// machine's load cannot tell them apart.
func groupRuns(sources []source.Source) [][]source.Source {
	var runs [][]source.Source
	var shared []source.Source
	for _, s := range sources {
		if s == source.Exact {
			runs = append(runs, []source.Source{s})
		} else {
			shared = append(shared, s)
		}
	}
	if len(shared) > 0 {
		runs = append(runs, shared)
	}
	return runs
}

// record runs the program once, recording with the sources of run into
// path. It returns the name of each source's first event, by which its
// samples are told apart in the file.
func (c *compareFlags) record(run []source.Source, facts source.Facts, argv []string, path string, stderr io.Writer) ([]string, error) {
	o := record.Options{Argv: argv, Output: path}
	var events []string
	var first []int // each source's first event in o.Events
	for _, src := range run {
		var evs []perf.Event
		if src == source.Exact {
			var err error
			if evs, err = c.exact.events(argv, nil, stderr); err != nil {
				return nil, err
			}
			o.ShareRing = true
		} else {
			setup, err := source.Plan(src, facts)
			if err != nil {
				return nil, err
			}
			if evs, err = perf.BuildAttrs(setup.Config); err != nil {
				return nil, err
			}
			source.AddLeafCopy(evs)
		}
		if len(evs) == 0 {
			return nil, fmt.Errorf("source %s: no events to open", src)
		}
		if slices.Contains(events, evs[0].Name) {
			return nil, fmt.Errorf("sources %v share the event %s: record them apart", run, evs[0].Name)
		}
		events = append(events, evs[0].Name)
		first = append(first, len(o.Events))
		o.Events = append(o.Events, evs...)
	}
	names := make([]string, len(run))
	for i, s := range run {
		names[i] = s.String()
	}
	src := strings.Join(names, "+") // for the messages below
	if !c.quiet {
		o.Notice = func(msg string) { fmt.Fprintln(stderr, "hwprof compare: "+msg) }
	}
	st, err := record.Record(o)
	for i, ei := range first {
		if ei < len(st.Events) {
			events[i] = st.Events[ei].Name // as opened: a user-only fallback adds :u
		}
	}
	if err != nil {
		var ee *launch.ExecError
		if errors.As(err, &ee) || st.Records == 0 {
			return nil, err
		}
		fmt.Fprintf(stderr, "hwprof compare: %s: %v (the recording is kept)\n", src, err)
	}
	if !c.quiet {
		fmt.Fprintf(stderr, "hwprof compare: %-5s %d samples, %d lost, in %.2fs -> %s\n",
			src, st.Samples, st.Lost+st.LostSamples, st.Duration.Seconds(), path)
	}
	if st.ExitCode != 0 {
		fmt.Fprintf(stderr, "hwprof compare: warning: the program exited with status %d under %s\n", st.ExitCode, src)
	}
	return events, nil
}

// printComparison writes the table of the reference's top edges with
// every source's share, then each source's agreement with the reference
// (profile.Alignment, whose first profile is the reference).
func printComparison(w io.Writer, names []string, a *profile.Alignment, top int) {
	rows := a.TopEdges(0, top)
	fmt.Fprintln(w, "each source's dynamic call graph (DCG), edges weighted by:")
	for i, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, dcgText(a.Kinds[i]))
	}
	fmt.Fprintf(w, "\ntop %d call edges of %s, with each source's share of its own total:\n\n", len(rows), names[0])
	fmt.Fprintf(w, "%-52s %-28s", "caller -> callee", "call site")
	for _, n := range names {
		fmt.Fprintf(w, " %9s", n)
	}
	fmt.Fprintln(w)
	for _, r := range rows {
		fmt.Fprintf(w, "%-52s %-28s", clip(r.Edge.Caller+" -> "+r.Edge.Callee, 52), clip(siteLabel(r.Edge), 28))
		for i := range names {
			fmt.Fprintf(w, " %8.2f%%", 100*a.Shares[i][r.Edge])
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "\nagreement with %s (overlap: sum of min shares over common edges; hot: share of %s's edges >= %.1f x its hottest also hot in the source; correlation of calls per function over %d functions):\n\n",
		names[0], names[0], profile.HotThreshold, len(a.Funcs))
	fmt.Fprintf(w, "%-10s %8s %16s %8s %8s %8s %6s\n", "source", "overlap", "overlap(no site)", "hot", "pearson", "spearman", "edges")
	for i := 1; i < len(names); i++ {
		s := a.Agreement(i)
		fmt.Fprintf(w, "%-10s %7.1f%% %15.1f%% %8.2f %8s %8s %6d\n", names[i], 100*s.Overlap, 100*s.OverlapNoSites,
			s.HotCoverage, fmtCorr(s.Pearson), fmtCorr(s.Spearman), s.Edges)
	}
}

// dcgText says what the edges of a DCG of kind k weigh.
func dcgText(k profile.DCGKind) string {
	switch k {
	case profile.CallCounts:
		return "the calls counted"
	case profile.TopEdges:
		return "at each sample, the edge into the running function (caller -> it), by period: the papers' timer DCG"
	case profile.AdjacentFrames:
		return "every adjacent caller -> callee pair of each sample's stack, by period (inclusive time, not calls; shown beside)"
	}
	return k.String()
}

func siteLabel(k profile.EdgeKey) string {
	if k.Object == "" {
		return fmt.Sprintf("%#x", k.Offset)
	}
	return fmt.Sprintf("%s+%#x", filepath.Base(k.Object), k.Offset)
}

func fmtCorr(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.3f", v)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}
