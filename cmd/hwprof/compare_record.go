package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hwprof/hwprof/internal/engine"
	"github.com/hwprof/hwprof/internal/launch"
	"github.com/hwprof/hwprof/internal/record"
	"github.com/hwprof/hwprof/internal/source"
	"github.com/hwprof/hwprof/internal/uprobe"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/event"
	"github.com/hwprof/hwprof/profile"
)

// recordSources records argv in c.dir, once per run of source.Runs, and
// loads each source's profile (engine.Load; one source's event of a shared
// run). It returns the profiles in the order of sources and the files
// written.
func (c *compareFlags) recordSources(sources []source.Source, facts source.Facts, argv []string, stderr io.Writer) ([]*profile.Profile, []string, error) {
	if err := makeDir(c.dir); err != nil {
		return nil, nil, fmt.Errorf("compare: -o %s: %w", c.dir, err)
	}
	profiles := make([]*profile.Profile, len(sources))
	var files []string
	for _, run := range source.Runs(sources) {
		names := make([]string, len(run))
		for i, src := range run {
			names[i] = src.String()
		}
		path := filepath.Join(c.dir, strings.Join(names, "+")+".data")
		events, err := c.record(run, facts, argv, path, stderr)
		if err != nil {
			return nil, nil, fmt.Errorf("compare: recording with %s: %w", strings.Join(names, "+"), err)
		}
		files = append(files, path)
		for i, src := range run {
			lo := engine.LoadOptions{}
			if len(run) > 1 {
				lo.Event = events[i] // one source's event of a shared run
			}
			k := slices.Index(sources, src)
			if profiles[k], err = engine.Load(path, lo); err != nil {
				return nil, nil, fmt.Errorf("compare: reading %s: %w", path, err)
			}
		}
	}
	return profiles, files, nil
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
			objs, err := []*uprobe.Object(nil), error(nil)
			if evs, objs, err = c.exact.events(argv, nil, stderr); err != nil {
				return nil, err
			}
			c.probed, c.probes = uprobe.Names(objs)
			o.ShareRing = true
			o.Watch = c.exact.watch() // the expected slowdown; --max-slowdown
		} else {
			setup, err := source.Plan(src, facts)
			if err != nil {
				return nil, err
			}
			if evs, err = event.BuildAttrs(setup.Config); err != nil {
				return nil, err
			}
			source.AddLeafCopy(evs, source.LeafStackBytes)
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
	switch {
	case st.Stop == record.StopLimit:
		fmt.Fprintf(stderr, "hwprof compare: warning: %s: recording stopped early: %s; the comparison is on that part of the run\n", src, st.Limit)
	case st.ExitCode != 0:
		fmt.Fprintf(stderr, "hwprof compare: warning: the program exited with status %d under %s\n", st.ExitCode, src)
	}
	return events, nil
}

// makeDir makes the directory dir, or takes it as it is, but not its
// parents: a mistyped path is an error, as an output file's is, not a
// tree of directories.
func makeDir(dir string) error {
	err := os.Mkdir(dir, 0o755)
	if errors.Is(err, os.ErrExist) {
		if st, serr := os.Stat(dir); serr == nil && !st.IsDir() {
			return errors.New("not a directory")
		}
		return nil
	}
	return err
}
