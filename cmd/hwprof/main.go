package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/hwprof/hwprof/internal/selfexec"
)

// Exit codes of hwprof's own errors; in command mode hwprof exits with the
// program's status instead.
const (
	exitError = 1 // the operation failed
	exitUsage = 2 // bad flags or arguments
)

// errUsage marks an error in the command line: printed, then exit 2.
var errUsage = errors.New("usage")

type command struct {
	name  string
	short string
	run   func(args []string, stdout, stderr io.Writer) int
}

var commands []command

func init() {
	commands = []command{
		{"record", "record a program (-- CMD) or running processes (-p) to perf.data", cmdRecord},
		{"report", "fold a recording into functions, call edges and contexts (text, or --format json, flamegraph, folded)", cmdReport},
		{"flamegraph", "draw a recording as a flame graph (report --format flamegraph; -o FILE.html)", cmdFlamegraph},
		{"diff", "show the functions and call edges whose shares changed most between two recordings (-o FILE.html: a differential flame graph)", cmdDiff},
		{"merge", "merge recordings of many runs or machines into one pprof profile (-o FILE.pb.gz)", cmdMerge},
		{"push", "send recordings to an OpenTelemetry Collector as OTLP profiles (--otlp URL)", cmdPush},
		{"fdo", "record a program twice (timer, then exact calls of its hottest functions) and write a sample profile for clang -fprofile-sample-use", cmdFdo},
		{"script", "print every sample with its symbolized stack, like perf script", cmdScript},
		{"compare", "record a program with several sources and show how far each is from the reference (exact)", cmdCompare},
		{"check", "show the PMUs, permissions and sample sources of this machine", cmdCheck},
		{"demo", "record the built-in call-heavy workload and show what was recorded", cmdDemo},
		{"dump", "print a perf.data file record by record, or its header and counts (--stats)", cmdDump},
		{"version", "print hwprof's version", cmdVersion},
		{"help", "show this help", cmdHelp},
	}
}

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// init keeps the main goroutine on the main thread into main, where a
// launcher trampoline must exec (see launch.Main and
// runtime.LockOSThread); main lets go of it for everything else.
func init() { runtime.LockOSThread() }

func main() {
	if code, ok := selfexec.Run(os.Args); ok {
		os.Exit(code)
	}
	runtime.UnlockOSThread()
	if len(os.Args) >= 2 && os.Args[1] == workloadArg {
		runWorkload(os.Args[2:])
		return
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "-h", "--help", "-help":
		name = "help"
	case "--version", "-version", "-V":
		name = "version"
	}
	for _, c := range commands {
		if c.name == name {
			return c.run(args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "hwprof: unknown command %q (see hwprof -h)\n", args[0])
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: hwprof COMMAND [options]")
	fmt.Fprintln(w)
	width := 0
	for _, c := range commands {
		width = max(width, len(c.name))
	}
	for _, c := range commands {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.name, c.short)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, `Run "hwprof COMMAND -h" for a command's options.`)
}

// cmdHelp prints the list of commands, or with a command's name that
// command's options (hwprof help record is hwprof record -h).
func cmdHelp(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || len(args) == 1 && slices.Contains([]string{"-h", "--help", "-help"}, args[0]) {
		usage(stdout)
		return 0
	}
	for _, c := range commands {
		if len(args) == 1 && c.name == args[0] && c.name != "help" {
			return c.run([]string{"-h"}, stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "hwprof help: unknown command %q (see hwprof -h)\n", strings.Join(args, " "))
	return exitUsage
}

func cmdVersion(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("version", "", stderr)
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if noArgs(fs, stderr) {
		fmt.Fprintln(stdout, "hwprof", version)
		return 0
	}
	return exitUsage
}

// noArgs reports whether fs, parsed, was given no arguments besides its
// flags; when it was, it says the first one on stderr.
func noArgs(fs *flag.FlagSet, stderr io.Writer) bool {
	if fs.NArg() == 0 {
		return true
	}
	fmt.Fprintf(stderr, "hwprof %s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
	return false
}

// newFlagSet makes a FlagSet that reports errors instead of exiting, with
// a usage line for the command and a --version flag. Parse it with
// parseFlags: the FlagSet itself prints nothing.
func newFlagSet(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // parseFlags prints errors and help
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: %s\n\noptions:\n", strings.TrimSpace("hwprof "+name+" "+synopsis))
		printFlags(fs.Output(), fs) // help.go
	}
	fs.Bool("version", false, "print hwprof's version and exit")
	return fs
}

// parseFlags parses a command's arguments. It returns ok false and the
// exit code when the command is to end here: 0 after -h/--help (the
// usage, on stdout) or --version, exitUsage after a bad flag (one line
// on stderr that points to -h).
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (code int, ok bool) {
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(stdout)
		fs.Usage()
		fs.SetOutput(io.Discard)
		return 0, false
	}
	if err != nil {
		fmt.Fprintf(stderr, "hwprof %s: %s (see hwprof %s -h)\n", fs.Name(), flagError(fs, err), fs.Name())
		return exitUsage, false
	}
	if v := fs.Lookup("version"); v != nil && v.Value.String() == "true" {
		return cmdVersion(nil, stdout, stderr), false
	}
	if err := checkDirFlags(fs); err != nil {
		fmt.Fprintf(stderr, "hwprof %s: %v\n", fs.Name(), err)
		return exitUsage, false
	}
	return 0, true
}

// dirFlags are the flags, in every command that has them, whose value
// is a directory to look for files in: one that is not there is a
// mistake, which would only show as objects without symbols.
var dirFlags = []string{"symfs", "debug-dir"}

// checkDirFlags checks that each of fs's dirFlags given names a
// directory.
func checkDirFlags(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(fl *flag.Flag) {
		dir := fl.Value.String()
		if err != nil || !slices.Contains(dirFlags, fl.Name) || dir == "" {
			return
		}
		if st, serr := os.Stat(dir); serr != nil {
			err = fmt.Errorf("--%s %s: %w", fl.Name, dir, serr)
		} else if !st.IsDir() {
			err = fmt.Errorf("--%s %s: not a directory", fl.Name, dir)
		}
	})
	return err
}

// parseErrorRE matches the error package flag gives for a value its own
// types cannot parse, which says only "parse error".
var parseErrorRE = regexp.MustCompile(`^(invalid value ".*" for flag -(\S+)): parse error$`)

// flagError is err of fs.Parse, with what the flag wants in place of
// "parse error" (--duration 10 does not say that a duration has a unit).
func flagError(fs *flag.FlagSet, err error) string {
	m := parseErrorRE.FindStringSubmatch(err.Error())
	if m == nil {
		return err.Error()
	}
	g, ok := fs.Lookup(m[2]).Value.(flag.Getter)
	if !ok {
		return err.Error()
	}
	switch g.Get().(type) {
	case time.Duration:
		return m[1] + ": want a duration with its unit, such as 10s, 500ms or 1m30s"
	case int, int64:
		return m[1] + ": want a whole number"
	case uint, uint64:
		return m[1] + ": want a whole number, 0 or more"
	case float64:
		return m[1] + ": want a number"
	}
	return err.Error()
}

// fail prints err as "hwprof: err" and returns the exit code for it.
func fail(stderr io.Writer, err error) int {
	if errors.Is(err, errUsage) {
		return exitUsage
	}
	fmt.Fprintf(stderr, "hwprof: %v\n", err)
	return exitError
}
