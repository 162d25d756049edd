package main

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/hwprof/hwprof/internal/testenv"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/perfdata"
	"github.com/hwprof/hwprof/perf/synth"
)

// What a newcomer meets first: every bad input says what is wrong in
// one line with a non-zero exit, and a recording read in part is said
// once and ends with status 1, whichever command reads it.

// halfRecording writes the first half of the shared workload recording
// into dir: a perf.data file cut off in its data section, as a recording
// copied while it was written or a full disk leaves it.
func halfRecording(t *testing.T, dir string) string {
	t.Helper()
	full, _ := workloadRecording(t)
	b, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	half := filepath.Join(dir, "half.data")
	if err := os.WriteFile(half, b[:len(b)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	return half
}

// repeatedLine returns a line that stderr holds more than once ("" when
// none): every problem is said once.
func repeatedLine(stderr string) string {
	seen := map[string]bool{}
	for l := range strings.Lines(stderr) {
		if seen[l] {
			return strings.TrimSpace(l)
		}
		seen[l] = true
	}
	return ""
}

// A recording cut off is read up to the cut, said once, and exits 1, in
// every command that reads recordings, alone or merged with a whole one.
func TestFirstContactTruncated(t *testing.T) {
	t.Parallel()
	full, _ := workloadRecording(t)
	dir := t.TempDir()
	half := halfRecording(t, dir)
	for _, args := range [][]string{
		{"report", "-i", half},
		{"report", "-i", full, "-i", half},
		{"report", "-i", half, "-i", full, "--format", "json", "-o", filepath.Join(dir, "r.json")},
		{"diff", full, half},
		{"merge", "-o", filepath.Join(dir, "one.pb.gz"), half},
		{"merge", "-o", filepath.Join(dir, "two.pb.gz"), full, half},
	} {
		r := hwprof(t, args...)
		if n := strings.Count(r.stderr, "perf.data truncated"); r.code != exitError || n != 1 {
			t.Errorf("hwprof %q of a truncated recording: exit %d, %d warnings that it is truncated; want exit 1 and one\n%s", args, r.code, n, r.stderr)
		}
		if l := repeatedLine(r.stderr); l != "" {
			t.Errorf("hwprof %q says twice: %s", args, l)
		}
	}
}

// The demo shows its recording with report, then writes the flame graph
// from the same file: each warning of the file is said once (the flame
// graph said them again). The synthetic recording names a program and a
// kernel this machine does not have, so reading it warns, and exits 0.
func TestFirstContactDemoWarnsOnce(t *testing.T) {
	dir := t.TempDir()
	syn := goldenSynthetic(t, dir)
	var out, errb bytes.Buffer
	rep := hwprof(t, "report", "-i", syn.file, "--top", "8", "--contexts", "5")
	code := demoShow(syn.file, &out, &errb)
	if code != 0 || rep.code != 0 {
		t.Fatalf("demo's report of the synthetic recording: exit %d (report alone: %d)\n%s", code, rep.code, errb.String())
	}
	if !strings.Contains(rep.stderr, "warning") {
		t.Fatalf("report of the synthetic recording gives no warning to say once:\n%s", rep.stderr)
	}
	if errb.String() != rep.stderr {
		t.Errorf("the demo warns\n%s\nwhere its report warns\n%s", errb.String(), rep.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "synthetic.html")); err != nil {
		t.Errorf("no flame graph beside the recording: %v", err)
	}
}

// demo takes no arguments and at least a second of workload; anything
// else is a usage error, said before anything is recorded.
func TestFirstContactDemoUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"demo", "-scale", "0"}, "-scale 0: want 1 or more seconds"},
		{[]string{"demo", "-scale", "-1"}, "-scale -1: want 1 or more seconds"},
		{[]string{"demo", "./app"}, `unexpected argument "./app"`},
	} {
		usageError(t, tc.args, tc.want)
	}
}

// usageError runs hwprof args in this process and checks that it is a
// usage error: exit 2, nothing on stdout, one line on stderr holding
// want.
func usageError(t *testing.T, args []string, want string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	if code != exitUsage || !strings.Contains(errb.String(), want) || strings.Count(errb.String(), "\n") != 1 || out.Len() != 0 {
		t.Errorf("hwprof %q: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", args, code, out.String(), errb.String(), want)
	}
}

// A word a command does not take is an error, not ignored: hwprof
// script FILE is not hwprof script -i FILE.
func TestFirstContactUnexpectedArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"script", "app.data"}, `hwprof script: unexpected argument "app.data"`},
		{[]string{"check", "lbr"}, `hwprof check: unexpected argument "lbr"`},
		{[]string{"version", "x"}, `hwprof version: unexpected argument "x"`},
		{[]string{"version", "--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"help", "nosuch"}, `hwprof help: unknown command "nosuch"`},
		{[]string{"help", "--bogus"}, `hwprof help: unknown command "--bogus"`},
	} {
		usageError(t, tc.args, tc.want)
	}
}

// hwprof help COMMAND is hwprof COMMAND -h, as git and go do.
func TestFirstContactHelpCommand(t *testing.T) {
	for _, name := range []string{"record", "report", "script", "version"} {
		var out, errb, want bytes.Buffer
		code := run([]string{"help", name}, &out, &errb)
		run([]string{name, "-h"}, &want, io.Discard)
		if code != 0 || errb.Len() != 0 || out.String() != want.String() || !strings.HasPrefix(out.String(), "usage: hwprof "+name) {
			t.Errorf("hwprof help %s: exit %d, stderr %q, stdout\n%s\nwant hwprof %s -h's:\n%s", name, code, errb.String(), out.String(), name, want.String())
		}
	}
	var out bytes.Buffer
	if code := run([]string{"help"}, &out, io.Discard); code != 0 || !strings.Contains(out.String(), "usage: hwprof COMMAND") {
		t.Errorf("hwprof help: exit %d\n%s", code, out.String())
	}
}

// A flag's value that does not parse says what the flag wants: package
// flag says only "parse error", and a duration without its unit
// (--duration 10) is the usual mistake.
func TestFirstContactFlagValues(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"record", "--duration", "10", "--", "true"}, `invalid value "10" for flag -duration: want a duration with its unit, such as 10s`},
		{[]string{"record", "--otlp", "http://localhost:4318", "--interval", "x", "--", "true"}, `flag -interval: want a duration`},
		{[]string{"push", "--otlp", "http://localhost:4318", "--timeout", "5"}, `flag -timeout: want a duration`},
		{[]string{"report", "--top", "ten"}, `invalid value "ten" for flag -top: want a whole number`},
		{[]string{"record", "--max-stack", "-1", "--", "true"}, `flag -max-stack: want a whole number, 0 or more`},
		{[]string{"report", "--dedup-ratio", "half"}, `flag -dedup-ratio: want a number`},
		{[]string{"demo", "-scale", "abc"}, `flag -scale: want a whole number`},
		// errors of flags' own types are theirs
		{[]string{"record", "-c", "abc", "--", "true"}, "want a positive decimal period"},
	} {
		usageError(t, tc.args, tc.want)
	}
}

// hwprof -h lists the commands in two columns: every description starts
// in one column, whatever the length of the command's name
// (flamegraph's pushed its own to the right).
func TestFirstContactCommandList(t *testing.T) {
	var out bytes.Buffer
	if code := run([]string{"-h"}, &out, io.Discard); code != 0 {
		t.Fatalf("hwprof -h: exit %d", code)
	}
	col := map[int][]string{}
	for _, c := range commands {
		for l := range strings.Lines(out.String()) {
			if strings.HasPrefix(l, "  "+c.name+" ") {
				i := strings.Index(l, c.short)
				col[i] = append(col[i], c.name)
			}
		}
	}
	if len(col) != 1 || len(slices.Concat(slices.Collect(maps.Values(col))...)) != len(commands) {
		t.Errorf("the commands' descriptions start in columns %v (by column), want one column for all %d:\n%s", col, len(commands), out.String())
	}
}

// A recording named with -i that is missing, a directory or not a
// perf.data file is one line naming the file once, and exit 1, in every
// command that reads one.
func TestFirstContactBadInput(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.data")
	empty := filepath.Join(dir, "empty.data")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ in, want string }{
		{missing, "open " + missing + ": no such file or directory"},
		{dir, dir + ": read header: 0 bytes: read " + dir + ": is a directory"},
		{empty, empty + ": read header: 0 bytes: not a perf.data file"},
	} {
		for _, args := range [][]string{
			{"report", "-i", tc.in},
			{"flamegraph", "-i", tc.in, "-o", filepath.Join(dir, "f.html")},
			{"script", "-i", tc.in},
			{"dump", "-i", tc.in},
			{"diff", tc.in, tc.in},
			{"merge", "-o", filepath.Join(dir, "m.pb.gz"), tc.in},
		} {
			r := hwprof(t, args...)
			if r.code != exitError || !strings.Contains(r.stderr, tc.want) || strings.Count(r.stderr, "\n") != 1 ||
				strings.Contains(r.stderr, "open: open") {
				t.Errorf("hwprof %q: exit %d, stderr %q; want exit 1 and one line with %q", args, r.code, r.stderr, tc.want)
			}
		}
	}
}

// hwprof flamegraph is report --format flamegraph: another format is a
// usage error that names the command that writes it (it wrote JSON or a
// pprof profile in place of the page).
func TestFirstContactFlamegraphFormat(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"flamegraph", "--format", "json"}, "--format json: hwprof flamegraph draws a flame graph; hwprof report --format json writes that"},
		{[]string{"flamegraph", "--pgo", "-o", "default.pgo"}, "--pgo: hwprof flamegraph draws a flame graph; hwprof report --pgo writes that"},
	} {
		usageError(t, tc.args, tc.want)
	}
	var out bytes.Buffer
	run([]string{"flamegraph", "-h"}, &out, io.Discard)
	if usage, _, _ := strings.Cut(out.String(), "\n"); strings.Contains(usage, "--format") {
		t.Errorf("hwprof flamegraph's usage offers --format: %s", usage)
	}
}

// A pipe-mode recording (hwprof record -o - | hwprof report -i -, or
// perf's) names its kernel's functions as a file does: its OS release
// and host name come in HEADER_FEATURE records at the start of the
// stream, after the reader is opened, and were not looked at, so its
// kernel frames were [kernel.kallsyms] with a warning that the
// recording "does not say which kernel it was made on". The stream is
// written as made on this machine (its release and host name, asked of
// uname here); its kallsyms is a file under --symfs, as in
// goldenSynthetic.
func TestFirstContactPipeKernel(t *testing.T) {
	const (
		pid    = 4242
		kernel = 0xffffffff81000000
	)
	var uts unix.Utsname
	if err := unix.Uname(&uts); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	symfs := filepath.Join(dir, "symfs")
	if err := os.MkdirAll(filepath.Join(symfs, "proc"), 0o755); err != nil {
		t.Fatal(err)
	}
	kallsyms := "ffffffff81000000 T _text\nffffffff81001000 T do_syscall_64\nffffffff81002000 T schedule\nffffffff81003000 T _etext\n"
	if err := os.WriteFile(filepath.Join(symfs, "proc/kallsyms"), []byte(kallsyms), 0o644); err != nil {
		t.Fatal(err)
	}
	st := perf.SampleIP | perf.SampleTID | perf.SampleTime | perf.SampleCPU | perf.SamplePeriod | perf.SampleCallchain // syntheticSample's
	attr := perf.Attr{Type: perf.TypeSoftware, Config: perf.SWCPUClock, SamplePeriod: 10000, SampleType: st, Flags: perf.FlagSampleIDAll}
	var stream bytes.Buffer
	w, err := perfdata.NewPipeWriter(&stream, []perfdata.EventAttr{{Attr: attr, IDs: []uint64{1}, Name: "cpu-clock"}},
		perfdata.Features{OSRelease: unix.ByteSliceToString(uts.Release[:]), Hostname: unix.ByteSliceToString(uts.Nodename[:])})
	if err != nil {
		t.Fatal(err)
	}
	rec := func(b []byte) {
		t.Helper()
		if err := w.WriteRecord(b); err != nil {
			t.Fatal(err)
		}
	}
	rec(synth.AppendComm(nil, synth.Thread{PID: pid, TID: pid, Comm: "synthetic"}, st, synth.SampleID{PID: pid, TID: pid, Time: 1}))
	rec(synth.AppendKernelMmap(nil, synth.KernelText{Start: kernel, End: kernel + 0x3000, RefSym: "_text", RefAddr: kernel},
		st, synth.SampleID{PID: ^uint32(0), TID: ^uint32(0), Time: 1}))
	for i := range 10 {
		rec(syntheticSample([]uint64{perf.ContextKernel, kernel + 0x2010, kernel + 0x1040}, pid, 1_000_000_000+uint64(i)*1_000_000, 0, 10000))
	}
	if err := w.Close(perfdata.Features{}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "pipe.data")
	if err := os.WriteFile(path, stream.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"report", "-i", path, "--symfs", symfs},
		{"script", "-i", path, "--symfs", symfs},
	} {
		r := hwprof(t, args...)
		if r.code != 0 || !strings.Contains(r.stdout, "schedule") || !strings.Contains(r.stdout, "do_syscall_64") || strings.Contains(r.stderr, "which kernel") {
			t.Errorf("hwprof %q of a pipe-mode recording made here: exit %d, want its kernel functions named (schedule, do_syscall_64)\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
}

// push of a recording cut off sends what was read, says the truncation
// once, with the recording's name on each of its warnings (several
// recordings are pushed in one run), and exits 1. The endpoint is an
// HTTP server that accepts every request (an empty response: nothing
// refused).
func TestFirstContactPushTruncated(t *testing.T) {
	t.Parallel()
	full, _ := workloadRecording(t)
	half := halfRecording(t, t.TempDir())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer srv.Close()
	r := hwprof(t, "push", "--otlp", srv.URL, "-i", full, "-i", half)
	if n := strings.Count(r.stderr, "perf.data truncated"); r.code != exitError || n != 1 || !strings.Contains(r.stdout, "sent "+half) {
		t.Errorf("push of a whole and a truncated recording: exit %d, %d warnings that one is truncated; want exit 1, one, and both sent\n%s%s", r.code, n, r.stdout, r.stderr)
	}
	for l := range strings.Lines(r.stderr) {
		if !strings.HasPrefix(l, "hwprof: warning: "+full+": ") && !strings.HasPrefix(l, "hwprof: warning: "+half+": ") {
			t.Errorf("a warning that does not name its recording: %s", l)
		}
	}
}

// record's --otlp flags that cannot work are one line, before the line
// that names the source (which came first, making two).
func TestFirstContactRecordOTLPUsage(t *testing.T) {
	out := filepath.Join(t.TempDir(), "x.data")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--otlp", "http://127.0.0.1:1", "-o", "-"}, "give -o a regular file"},
		{[]string{"--interval", "5s", "-o", out}, "--interval goes with --otlp"},
		{[]string{"--otlp", "http://127.0.0.1:1", "--interval", "0s", "-o", out}, "--interval 0s: at least 1s"},
		{[]string{"--otlp", "udp://127.0.0.1:1", "-o", out}, "scheme"},
		{[]string{"--otlp", "http://127.0.0.1:1", "--otlp-spool-size", "lots", "-o", out}, "--otlp-spool-size"},
	} {
		usageError(t, append(append([]string{"record"}, tc.args...), "--", "true"), tc.want)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a recording was written")
	}
}

// Every command's -h starts with its usage line, without trailing
// blanks (check and version, which take no arguments, ended theirs with
// one), and exits 0.
func TestFirstContactUsageLines(t *testing.T) {
	for _, c := range commands {
		var out bytes.Buffer
		code := run([]string{c.name, "-h"}, &out, io.Discard)
		usage, _, _ := strings.Cut(out.String(), "\n")
		if code != 0 || usage != strings.TrimSpace(usage) || c.name != "help" && !strings.HasPrefix(usage, "usage: hwprof "+c.name) {
			t.Errorf("hwprof %s -h: exit %d, usage line %q", c.name, code, usage)
		}
	}
}

// compare -o DIR makes DIR, not its parents: a directory that does not
// exist is an error naming it, before anything runs (it made the whole
// path, /nonexistent/d/cmp, and went on).
func TestFirstContactCompareDir(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ out, want string }{
		{filepath.Join(dir, "missing", "cmp"), "no such file or directory"},
		{file, "-o " + file + ": not a directory"},
	} {
		var out, errb bytes.Buffer
		code := run([]string{"compare", "-q", "--sources", "timer", "-o", tc.out, "--", "true"}, &out, &errb)
		if code != exitError || !strings.Contains(errb.String(), "compare: -o "+tc.out) || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("compare -o %s: exit %d, stderr %q; want exit 1 and %q", tc.out, code, errb.String(), tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "missing")); err == nil {
		t.Errorf("compare made %s", filepath.Join(dir, "missing"))
	}
}

// --symfs and --debug-dir name directories: one that is not there is a
// usage error naming it, not a report whose objects have no symbols
// (perf report takes a --symfs that does not exist without a word).
func TestFirstContactDirFlags(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"report", "--symfs", missing},
		{"flamegraph", "--debug-dir", missing},
		{"script", "--symfs", missing},
		{"merge", "-o", filepath.Join(dir, "m.pb.gz"), "--debug-dir", missing, "x.data"},
	} {
		flag := args[len(args)-2]
		if args[0] == "merge" {
			flag = args[3]
		}
		usageError(t, args, flag+" "+missing+": stat "+missing+": no such file or directory")
	}
	usageError(t, []string{"report", "--symfs", file}, "--symfs "+file+": not a directory")
}

// twoObjectsC spends its time in its own loop and in libc's memset: two
// objects with samples and build-ids, for the build-id cache to keep.
const twoObjectsC = `#include <stdlib.h>
#include <string.h>
#include <time.h>
static long now_ms(void) { struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return ts.tv_sec * 1000 + ts.tv_nsec / 1000000; }
static char buf[1 << 16];
int main(int argc, char **argv) {
	long end = now_ms() + atol(argv[1]);
	volatile unsigned long s = 0;
	while (now_ms() < end) {
		memset(buf, (int)s, sizeof buf);
		for (int i = 0; i < 100000; i++) s += (unsigned long)i * i;
	}
	return 0;
}
`

// A build-id cache that cannot be written (a user without a home
// directory: HOME=/nonexistent) is one notice line, with the first
// failure and the way out, not every object's failure on a line of its
// own without "hwprof:"; the recording succeeds.
func TestFirstContactBuildIDCacheNotice(t *testing.T) {
	t.Parallel()
	testenv.PerfEvents(t)
	gcc := testenv.Tool(t, "gcc")
	dir := t.TempDir()
	bin := filepath.Join(dir, "two")
	os.WriteFile(filepath.Join(dir, "two.c"), []byte(twoObjectsC), 0o644)
	if out, err := exec.Command(gcc, "-O1", "-Wl,--build-id", "-o", bin, filepath.Join(dir, "two.c")).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := hwprofEnv(t, []string{"HWPROF_BUILDID_DIR=" + filepath.Join(file, "cache")}, "record", "-o", filepath.Join(dir, "x.data"), "--", bin, "200")
	if r.code != 0 {
		t.Fatalf("record with a build-id cache that cannot be made: exit %d\n%s", r.code, r.stderr)
	}
	var notice []string
	for l := range strings.Lines(r.stderr) {
		if !strings.HasPrefix(l, "hwprof: ") {
			t.Errorf("a line of stderr without hwprof: %q", l)
		}
		if strings.Contains(l, "not kept in the build-id cache") {
			notice = append(notice, l)
		}
	}
	var n int
	if len(notice) != 1 || !strings.Contains(notice[0], "--no-buildid-cache") {
		t.Fatalf("want one notice that objects were not kept, naming --no-buildid-cache:\n%s", r.stderr)
	}
	if _, err := fmt.Sscanf(notice[0], "hwprof: %d objects not kept", &n); err != nil || n < 2 {
		t.Errorf("the notice counts %d objects (%v), want the program and libc:\n%s", n, err, r.stderr)
	}
}

// Several recordings of which some cannot be read: one line, the first
// of them in the order given (they load in parallel: it was every one's
// error, in the order they failed, each after the first on a line
// without hwprof:), with how many more there are.
func TestFirstContactSeveralMissing(t *testing.T) {
	dir := t.TempDir()
	a, b, c := filepath.Join(dir, "a.data"), filepath.Join(dir, "b.data"), filepath.Join(dir, "c.data")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"report", "-i", a, "-i", b}, "hwprof: load " + a + ": perfdata: open " + a + ": no such file or directory (and 1 more recording that cannot be read)\n"},
		{[]string{"merge", "-o", filepath.Join(dir, "m.pb.gz"), b, a, c}, "hwprof: load " + b + ": perfdata: open " + b + ": no such file or directory (and 2 more recordings that cannot be read)\n"},
	} {
		r := hwprof(t, tc.args...)
		if r.code != exitError || r.stderr != tc.want {
			t.Errorf("hwprof %q: exit %d, stderr %q; want exit 1 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}
