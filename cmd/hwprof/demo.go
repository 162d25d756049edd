package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hwprof/hwprof/internal/record"
	"github.com/hwprof/hwprof/perf/event"
)

// cmdDemo records hwprof's built-in workload with the timer source and
// frame-pointer callchains, and shows what was recorded.
func cmdDemo(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("demo", "[-o FILE] [-scale N]", stderr)
	output := fs.String("o", "hwprof-demo.data", "write the recording to `FILE`")
	scale := fs.Int("scale", 1, "run the workload for `N` seconds of CPU time")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	switch {
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "hwprof demo: unexpected argument %q (the demo records its own workload; hwprof record -- CMD records a program)\n", fs.Arg(0))
		return exitUsage
	case *scale < 1:
		fmt.Fprintf(stderr, "hwprof demo: -scale %d: want 1 or more seconds\n", *scale)
		return exitUsage
	}
	self, err := os.Executable()
	if err != nil {
		return fail(stderr, fmt.Errorf("demo: find own executable: %w", err))
	}
	events, err := event.BuildAttrs(event.RecordConfig{
		Events: []string{"cpu-clock"}, CallGraph: "fp", Freq: 4000, Target: event.TargetCommand,
	})
	if err != nil {
		return fail(stderr, err)
	}
	o := record.Options{
		Events: events,
		Argv:   []string{self, workloadArg, strconv.Itoa(*scale) + "s"},
		Output: *output,
	}
	fmt.Fprintf(stdout, "hwprof demo: recording the built-in workload (cpu-clock at 4000 Hz, frame-pointer callchains)\n")
	code := runRecord(o, false, stderr)
	if code != 0 {
		return code
	}
	if _, err := os.Stat(*output); errors.Is(err, os.ErrNotExist) {
		return fail(stderr, fmt.Errorf("demo: %s was not written", *output))
	}
	return demoShow(*output, stdout, stderr)
}

// demoShow shows what the demo recorded in file: the report, then the
// flame graph written beside it. The flame graph reads the same file:
// its warnings are the report's, already said, and show only when it
// fails.
func demoShow(file string, stdout, stderr io.Writer) int {
	fmt.Fprintf(stdout, "hwprof demo: what was recorded (hwprof report -i %s --top 8 --contexts 5):\n\n", file)
	if code := cmdReport([]string{"-i", file, "--top", "8", "--contexts", "5"}, stdout, stderr); code != 0 {
		return code
	}
	fmt.Fprintf(stdout, "\nhwprof demo: %s is a perf.data file: perf report -i %s reads it too\n", file, file)
	page := strings.TrimSuffix(file, filepath.Ext(file)) + ".html"
	if page == file { // never over the recording
		page = file + ".html"
	}
	var flameErr bytes.Buffer
	if code := cmdFlamegraph([]string{"-i", file, "-o", page}, io.Discard, &flameErr); code != 0 {
		stderr.Write(flameErr.Bytes())
		return code
	}
	fmt.Fprintf(stdout, "hwprof demo: its flame graph is %s: open it in a browser (hwprof flamegraph -i %s -o %s)\n", page, file, page)
	return 0
}
