package report

import (
	"bufio"
	"bytes"
	"errors"
	"html"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/internal/engine"
	"github.com/hwprof/hwprof/internal/testprog"
	"github.com/hwprof/hwprof/report/flamegraph"
)

// flameTools returns the directory of Brendan Gregg's FlameGraph scripts
// kept beside the repository (../shared/tools/flamegraph), or skips.
func flameTools(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("no go.mod above the test directory")
		}
		dir = up
	}
	tools := filepath.Join(dir, "..", "shared", "tools", "flamegraph")
	if _, err := os.Stat(filepath.Join(tools, "stackcollapse-perf.pl")); errors.Is(err, fs.ErrNotExist) {
		t.Skipf("the FlameGraph scripts are not at %s", tools)
	}
	if _, err := exec.LookPath("perl"); err != nil {
		t.Skip("no perl on PATH")
	}
	return tools
}

// perfRecording records the test program with perf record -g (cpu-clock,
// frame pointers) for a set time and returns the file, or skips when this
// machine has no perf, no gcc, or perf cannot record here.
func perfRecording(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("perf"); err != nil {
		t.Skipf("no perf on PATH")
	}
	dir := t.TempDir()
	if out, err := exec.Command("perf", "record", "-q", "-e", "cpu-clock", "-o", filepath.Join(dir, "probe.data"), "--", "true").CombinedOutput(); err != nil {
		t.Skipf("perf cannot record here: %v\n%s", err, out)
	}
	prog := testprog.Build(t, "c/tools.c", "-O0", "-fno-omit-frame-pointer")
	data := filepath.Join(dir, "perf.data")
	if out, err := exec.Command("perf", "record", "-q", "-g", "-e", "cpu-clock", "-F", "4000", "-o", data, "--", prog, "1500").CombinedOutput(); err != nil {
		t.Fatalf("perf record: %v\n%s", err, out)
	}
	return data
}

// parseFoldedLines reads folded stacks into stack → weight, dropping the
// first frame of each when dropFirst.
func parseFoldedLines(t *testing.T, b []byte, dropFirst bool) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			t.Fatalf("folded line without weight: %q", line)
		}
		n, err := strconv.ParseInt(line[i+1:], 10, 64)
		if err != nil {
			t.Fatalf("folded line %q: %v", line, err)
		}
		stack := line[:i]
		if dropFirst {
			_, stack, _ = strings.Cut(stack, ";")
		}
		out[stack] += n
	}
	return out
}

// unnamedFrame is a frame hwprof could not name: [object+0xoffset], the
// object perhaps itself in brackets ([[vdso]+0x1521]).
var unnamedFrame = regexp.MustCompile(`^\[(\[[^\]]*\]|[^\]]*)\+0x[0-9a-f]+\]$`)

// sameFrameName reports whether hwprof's frame name ours may stand where
// perf's stacks have theirs: the same name, or one of the names the
// return-address rule gives where perf's differs: an unnamed frame, a PLT
// slot (NAME@plt, where perf stretches _init over the .plt), or a
// kernel function's padding (__pfx_NAME: the return address is NAME's
// first byte, and ra-1 is in the padding before it).
func sameFrameName(ours, theirs string) bool {
	return ours == theirs || unnamedFrame.MatchString(ours) || strings.HasSuffix(ours, "@plt") ||
		strings.TrimPrefix(ours, "__pfx_") == theirs
}

// matchUnnamed returns the stack of ours that has weight w and equals
// theirs but where ours has unnamed frames or PLT slots, or "".
func matchUnnamed(ours map[string]int64, theirs string, w int64) string {
	tf := strings.Split(theirs, ";")
	for s, ow := range ours {
		of := strings.Split(s, ";")
		if ow != w || len(of) != len(tf) {
			continue
		}
		same := true
		for i := range of {
			same = same && sameFrameName(of[i], tf[i])
		}
		if same {
			return s
		}
	}
	return ""
}

// TestFoldedMatchesStackcollapse: on one perf record -g recording,
// hwprof's folded stacks equal perf script | stackcollapse-perf.pl stack
// for stack and weight for weight (both weigh a sample by its period),
// under two naming rules:
//
//   - stackcollapse-perf.pl starts every stack with the process's command
//     name, which hwprof's stacks, made of functions only, do not have;
//     the test drops that first frame.
//   - perf names a return address by the symbol at that address and
//     stretches symbols of size 0 up to the next symbol; hwprof names the
//     call instruction before it (framehop's ra−1 rule) and only by a
//     symbol whose extent covers it, else [object+0xoffset]. They differ
//     where a call is the last instruction before a label, as in ld.so's
//     _start, whose call to _dl_start returns to the label
//     _dl_start_user: perf says _dl_start_user, though the caller is
//     _start. A frame hwprof leaves unnamed therefore matches any name,
//     the rest of its stack and its weight must match, and such stacks
//     must weigh under 1% of the whole. A sample in a PLT slot is the
//     same case: hwprof names it by the slot (qsort@plt, as objdump does),
//     perf by the symbol it stretched over the .plt section (_init); a
//     frame hwprof names NAME@plt matches any name likewise, and a
//     kernel frame hwprof names __pfx_NAME (ra-1 in the padding before
//     NAME) matches NAME.
//   - hwprof folds a stack that cannot be real (a return address in no
//     executable code or after no call instruction, such as a chain of
//     [unknown] frames to the kernel's limit) into one [broken stack]
//     frame; perf prints its frames. Those stacks count with the
//     unnamed ones against the 1%.
//
// stackcollapse-perf.pl's other rule, cutting a name at "(" (C++
// parameter lists), changes nothing: hwprof's names carry no parameter
// lists. flamegraph.pl then takes hwprof's folded stacks of the recording
// unchanged and draws the whole weight.
func TestFoldedMatchesStackcollapse(t *testing.T) {
	tools := flameTools(t)
	data := perfRecording(t)

	script := exec.Command("perf", "script", "-i", data)
	var scriptOut, scriptErr bytes.Buffer
	script.Stdout, script.Stderr = &scriptOut, &scriptErr
	if err := script.Run(); err != nil {
		t.Fatalf("perf script: %v\n%s", err, scriptErr.String())
	}
	collapse := exec.Command("perl", filepath.Join(tools, "stackcollapse-perf.pl"))
	collapse.Stdin = &scriptOut
	theirs, err := collapse.Output()
	if err != nil {
		t.Fatalf("stackcollapse-perf.pl: %v", err)
	}

	p, err := engine.Load(data, engine.LoadOptions{})
	if p == nil {
		t.Fatal(err)
	}
	var ours bytes.Buffer
	if err := Folded(&ours, p, flamegraph.WeightTime); err != nil {
		t.Fatal(err)
	}
	want, got := parseFoldedLines(t, theirs, true), parseFoldedLines(t, ours.Bytes(), false)
	var total, loose int64
	onlyOurs, unmatched := map[string]int64{}, map[string]int64{}
	for s, w := range got {
		if want[s] != w {
			onlyOurs[s] = w
		}
	}
	for s, w := range want {
		total += w
		if got[s] == w {
			continue
		}
		// The second naming rule: a frame hwprof leaves unnamed may have
		// a name in perf's stacks; such a stack matches by its other
		// frames and its weight.
		if m := matchUnnamed(onlyOurs, s, w); m != "" {
			t.Logf("stack matched but for unnamed frames (%d ns):\n  perf:   %s\n  hwprof: %s", w, s, m)
			delete(onlyOurs, m)
			loose += w
			continue
		}
		unmatched[s] = w
	}
	// The third rule: a stack that cannot be real (a return address in no
	// executable code or after no call) is one [broken stack] frame in
	// hwprof's stacks, where perf prints whatever its walk gave
	// ([unknown] frames, to the kernel's limit). The perf stacks nothing
	// else matched must weigh what hwprof's broken stacks weigh.
	var unmatchedW int64
	for _, w := range unmatched {
		unmatchedW += w
	}
	if b, ok := onlyOurs["[broken stack]"]; ok && b == unmatchedW {
		for st, w := range unmatched {
			t.Logf("a broken stack in hwprof's (%d ns): %.200s", w, st)
		}
		delete(onlyOurs, "[broken stack]")
		loose += b
	} else {
		for st, w := range unmatched {
			t.Errorf("stackcollapse-perf.pl: %.300s %d; hwprof: %d", st, w, got[st])
		}
	}
	for s, w := range onlyOurs {
		if _, ok := want[s]; !ok {
			t.Errorf("hwprof: %s %d; stackcollapse-perf.pl has no such stack", s, w)
		}
	}
	if loose*100 > total {
		t.Errorf("%d of %d ns matched only with unnamed frames or as broken stacks: more than 1%%", loose, total)
	}
	t.Logf("%d stacks, %d ns of cpu-clock, equal in both", len(want), total)
	if len(want) < 5 {
		t.Errorf("only %d stacks recorded: too few to compare", len(want))
	}
	for _, fn := range []string{"main;top;mid;leaf", "cmp;leaf", "rec;rec;rec"} {
		found := false
		for s := range got {
			found = found || strings.Contains(s, fn)
		}
		if !found {
			t.Errorf("no stack through %q: the program's shape is not in the recording", fn)
		}
	}

	// flamegraph.pl draws the folded stacks of the recording as they are.
	fg := exec.Command("perl", filepath.Join(tools, "flamegraph.pl"), "--countname=ns", "--minwidth=0")
	fg.Stdin = bytes.NewReader(ours.Bytes())
	var svg, fgErr bytes.Buffer
	fg.Stdout, fg.Stderr = &svg, &fgErr
	if err := fg.Run(); err != nil || fgErr.Len() > 0 {
		t.Fatalf("flamegraph.pl: %v\n%s", err, fgErr.String())
	}
	m := regexp.MustCompile(`<title>all \(([\d,]+) ns, 100%\)</title>`).FindSubmatch(svg.Bytes())
	if m == nil {
		t.Fatalf("flamegraph.pl drew no root frame (%d bytes of SVG)", svg.Len())
	}
	if n, _ := strconv.ParseInt(strings.ReplaceAll(string(m[1]), ",", ""), 10, 64); n != total {
		t.Errorf("flamegraph.pl's root weighs %d ns, the stacks %d", n, total)
	}
	for s := range got {
		leaf := s[strings.LastIndexByte(s, ';')+1:]
		if !strings.Contains(svg.String(), "<title>"+html.EscapeString(leaf)+" (") {
			t.Errorf("flamegraph.pl drew no frame %q", leaf)
		}
	}
}

// The naming rules of TestFoldedMatchesStackcollapse, on the stacks a run
// of it met: a PLT slot and an unnamed return address match perf's names;
// another function, another weight or another depth do not.
func TestMatchUnnamed(t *testing.T) {
	ours := map[string]int64{
		"__libc_start_call_main;main;qsort@plt":                             250000,
		"[ld-linux-x86-64.so.2+0x1ab73];_dl_sysdep_start;__libc_early_init": 500000,
		"[unknown];[[vdso]+0x1521];_dlfo_sort_mappings":                     750000,
		"do_syscall_64;__pfx_process_cpu_clock_get;srso_alias_return_thunk": 1000000,
	}
	for _, c := range []struct {
		theirs string
		w      int64
		want   string
	}{
		{"__libc_start_call_main;main;_init", 250000, "__libc_start_call_main;main;qsort@plt"},
		{"_dl_start_user;_dl_sysdep_start;__libc_early_init", 500000, "[ld-linux-x86-64.so.2+0x1ab73];_dl_sysdep_start;__libc_early_init"},
		{"__libc_start_call_main;other;_init", 250000, ""},
		{"__libc_start_call_main;main;_init", 500000, ""},
		{"main;_init", 250000, ""},
		{"do_syscall_64;process_cpu_clock_get;srso_alias_return_thunk", 1000000, "do_syscall_64;__pfx_process_cpu_clock_get;srso_alias_return_thunk"},
		{"[unknown];[[vdso]];_dlfo_sort_mappings", 750000, "[unknown];[[vdso]+0x1521];_dlfo_sort_mappings"},
	} {
		if got := matchUnnamed(ours, c.theirs, c.w); got != c.want {
			t.Errorf("matchUnnamed(%q, %d) = %q, want %q", c.theirs, c.w, got, c.want)
		}
	}
}
