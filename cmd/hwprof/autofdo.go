package main

import (
	"fmt"
	"io"

	"github.com/hwprof/hwprof/internal/diag"
	"github.com/hwprof/hwprof/internal/engine"
	"github.com/hwprof/hwprof/report/autofdo"
)

// runAutoFDO writes the sample profile (report/autofdo) of one program
// of the recordings paths, each loaded on its own with its sampled
// instructions: a timer recording's samples and an exact recording's
// calls are counts of different kinds, which autofdo.Combine puts
// together.
// With gcc it writes GCC's format (autofdo.WriteGCOV) instead of LLVM's.
// partial names the recording of paths, if any, whose calls are of the
// first part of its run only (autofdo.Counts.Partial).
func runAutoFDO(paths []string, o engine.LoadOptions, object, out string, gcc bool, partial string, stdout, stderr io.Writer) int {
	o.SiteLines, o.Instrs = true, true
	var counts []autofdo.Counts
	status := 0
	for _, path := range paths {
		p, err := loadProfile([]string{path}, o)
		if p == nil {
			return fail(stderr, err)
		}
		status = max(status, diag.Print(stderr, p.Warnings, p.Recording.Incomplete))
		c, err := autofdo.FromProfile(p, object)
		if err != nil {
			return fail(stderr, fmt.Errorf("%s: %w", path, err))
		}
		c.Partial = path == partial
		counts = append(counts, c)
	}
	prof := autofdo.Combine(counts)
	if len(prof.Funcs) == 0 {
		return fail(stderr, fmt.Errorf("autofdo: no samples or calls with source lines in the program (is it built with -g?)"))
	}
	if prof.OtherObjects > 0 || prof.NoLine > 0 {
		fmt.Fprintf(stderr, "hwprof: autofdo: %d functions; left out: %d samples or calls in other objects, %d without a source line\n",
			len(prof.Funcs), prof.OtherObjects, prof.NoLine)
	}
	write := autofdo.WriteText
	if gcc {
		write = autofdo.WriteGCOV
	}
	if err := writeReport(out, stdout, func(w io.Writer) error { return write(w, prof) }); err != nil {
		return fail(stderr, err)
	}
	return status
}

// runBOLT writes BOLT's profile (autofdo.WriteBOLT) of one program of
// one recording: its branches when it has branch stacks (LBR), else
// its sampled instructions.
func runBOLT(paths []string, o engine.LoadOptions, object, out string, stdout, stderr io.Writer) int {
	if len(paths) != 1 {
		return fail(stderr, fmt.Errorf("bolt: one recording (-i FILE), not %d", len(paths)))
	}
	o.SiteLines, o.Instrs = true, true
	p, err := loadProfile(paths, o)
	if p == nil {
		return fail(stderr, err)
	}
	status := diag.Print(stderr, p.Warnings, p.Recording.Incomplete)
	var st autofdo.BOLTStats
	err = writeReport(out, stdout, func(w io.Writer) error {
		var err error
		st, err = autofdo.WriteBOLT(w, p, object)
		return err
	})
	if err != nil {
		return fail(stderr, fmt.Errorf("bolt: %w", err))
	}
	kind := "sampled addresses (no LBR)"
	if st.LBR {
		kind = "branches"
	}
	fmt.Fprintf(stderr, "hwprof: bolt: %d %s in %d functions; left out: %d in other objects or outside symbols\n", st.Records, kind, st.Funcs, st.Left)
	return status
}
