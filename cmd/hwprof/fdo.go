package main

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/hwprof/hwprof/internal/engine"
	"github.com/hwprof/hwprof/internal/output"
	"github.com/hwprof/hwprof/internal/record"
	"github.com/hwprof/hwprof/internal/uprobe"
	"github.com/hwprof/hwprof/report/autofdo"
)

// cmdFdo records what a sample profile for clang's -fprofile-sample-use
// needs and writes it (report/autofdo): a timer run with frame-pointer
// stacks and the leaf repair, then an exact run of the program's hottest
// functions only (bounded by --max-slowdown), both kept beside the profile.
func cmdFdo(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("fdo", "[-o FILE] [--hot N] [--max-slowdown N] [--object PATH] -- CMD [ARGS]", stderr)
	out := fs.String("o", "prog.afdo", "write the sample profile to `FILE`; the recordings go to FILE.timer.data and FILE.exact.data")
	hot := fs.Int("hot", 20, "probe at most `N` functions in the exact run: the hottest of the timer run, those that took 95% of the program's own time")
	slow := fs.Int("max-slowdown", 10, "stop the exact run, keeping its counts, once its probes make the program `N` times slower (0: no limit)")
	object := fs.String("object", "", "profile the object `PATH` (a path as recorded or a base name; default: the program)")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	usage := func(msg string) int {
		fmt.Fprintf(stderr, "hwprof fdo: %s\n", msg)
		return exitUsage
	}
	switch {
	case fs.NArg() == 0:
		return usage("no program to run (-- CMD [ARGS])")
	case *hot <= 0:
		return usage("--hot must be positive")
	case *slow < 0:
		return usage("--max-slowdown must not be negative")
	case *out == "" || *out == output.Stdout:
		return usage("-o FILE is required (a file: the recordings are named after it)")
	}
	if _, err := output.Check(*out); err != nil {
		return fail(stderr, err)
	}
	cmd := fs.Args()
	timer, exact := *out+".timer.data", *out+".exact.data"
	if code, st := recordCmd(append([]string{"-q", "-g", "-o", timer, "--"}, cmd...), stdout, stderr); code != 0 {
		return programFailed(stderr, "timer", timer, code, st)
	}
	p, err := loadProfile([]string{timer}, engine.LoadOptions{})
	if p == nil {
		return fail(stderr, err)
	}
	names, err := autofdo.Hot(p, *object, *hot, 0.95)
	if err != nil {
		return fail(stderr, fmt.Errorf("%s: %w", timer, err))
	}
	if len(names) == 0 {
		return fail(stderr, fmt.Errorf("%s: no function of the program was sampled (did it run long enough?)", timer))
	}
	for i, n := range names {
		names[i] = regexp.QuoteMeta(n)
	}
	fmt.Fprintf(stderr, "hwprof: fdo: counting the calls of the %d hottest functions\n", len(names))
	filter := "^(" + strings.Join(names, "|") + ")$"
	code, st := recordCmd(append([]string{"-q", "--source", "exact", "--max-slowdown", strconv.Itoa(*slow), "--probe-filter", filter, "-o", exact, "--"}, cmd...), stdout, stderr)
	if code != 0 {
		return programFailed(stderr, "exact", exact, code, st)
	}
	partial := ""
	if st.Stop == record.StopLimit {
		// Its counts are of the run's first part: in a program with
		// phases, other functions' than the timer's whole run.
		// Its way out in fdo's flags, not record's.
		why := strings.TrimSuffix(st.Limit, "; "+uprobe.LimitAdvice)
		fmt.Fprintf(stderr, "hwprof: fdo: the exact run stopped early (%s): its calls are of the run's first part, and give only the shares "+
			"of each call site's callees; --hot N probes fewer functions, --max-slowdown 0 runs it whole\n", why)
		partial = exact
	}
	return runAutoFDO([]string{timer, exact}, engine.LoadOptions{}, *object, *out, false, partial, stdout, stderr)
}

// programFailed says why fdo stops after a recording that exited with
// code, when the code is the program's status (hwprof record exits with
// it, the recording kept): a run that failed is no run to optimize for.
// A failure of the recording itself was said by record.
func programFailed(stderr io.Writer, run, file string, code int, st record.Stats) int {
	if st.ExitCode == code {
		fmt.Fprintf(stderr, "hwprof: fdo: the program ended with status %d in the %s run: no profile written (the recording is kept in %s)\n", code, run, file)
	}
	return code
}
