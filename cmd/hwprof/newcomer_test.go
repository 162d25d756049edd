package main

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// hwprofIn runs hwprof in dir.
func hwprofIn(t *testing.T, dir string, args ...string) result {
	t.Helper()
	cmd := exec.Command(hwprofBin, args...)
	cmd.Dir = dir
	return runCmd(t, cmd)
}

// A reading command run where there is no recording yet, without -i,
// says to record one first, in one line, instead of the error of open.
func TestNoRecordingHere(t *testing.T) {
	dir := t.TempDir()
	want := "hwprof: no hwprof.data here: record one with hwprof record -- CMD, or give -i FILE\n"
	for _, cmd := range []string{"report", "script", "dump", "flamegraph"} {
		r := hwprofIn(t, dir, cmd)
		if r.code != exitError || r.stderr != want {
			t.Errorf("hwprof %s without a recording: exit %d, stderr %q; want exit 1 and %q", cmd, r.code, r.stderr, want)
		}
	}
	// A file named with -i that is missing is the error it is.
	r := hwprofIn(t, dir, "report", "-i", "missing.data")
	if r.code != exitError || !strings.Contains(r.stderr, "missing.data") || strings.Contains(r.stderr, "hwprof record") {
		t.Errorf("report -i missing.data: exit %d, stderr %q", r.code, r.stderr)
	}
}

// The line that says which source record chose is short, and names
// hwprof check, whose last line gives the reason in full.
func TestSourceLineShort(t *testing.T) {
	needPerfEvents(t)
	dir := t.TempDir()
	r := hwprofIn(t, dir, "record", "-o", "s.data", "--", "true")
	if r.code != 0 {
		t.Fatalf("record -- true: exit %d\n%s", r.code, r.stderr)
	}
	var line string
	for l := range strings.Lines(r.stderr) {
		if strings.HasPrefix(l, "hwprof: source ") {
			line = strings.TrimSpace(l)
		}
	}
	if line == "" || len(line) > 100 || !strings.Contains(line, "hwprof check") {
		t.Errorf("the source line is %d characters, want at most 100 and to name hwprof check: %q", len(line), line)
	}
	c := hwprofIn(t, dir, "check")
	_, why, _ := strings.Cut(c.stdout, "\ndefault source: ")
	if c.code != 0 || len(why) < len(line) {
		t.Errorf("check does not give the reason for the default source (exit %d):\n%s", c.code, c.stdout)
	}
	if _, err := os.Stat("/sys/bus/event_source/devices/cpu"); err != nil &&
		(!strings.HasPrefix(why, "timer: no hardware call sampling here") || !strings.Contains(why, "no 'cpu' PMU")) {
		t.Errorf("no cpu PMU here: check's default source line should say why timer: %q", why)
	}
}

// The README begins with the demo and the test command, and near the top
// says how to install hwprof (a go install of this module's command), so
// that recordings are not made by a binary go run rebuilt in a
// temporary directory.
func TestReadmeInstall(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	module, _, _ := strings.Cut(strings.TrimPrefix(string(gomod), "module "), "\n")
	lines := strings.Split(string(readme), "\n")
	if len(lines) < 40 || lines[2] != "```sh" || !strings.HasPrefix(lines[3], "go run ./cmd/hwprof demo ") ||
		!strings.HasPrefix(lines[4], "go test -count=1 ./... ") || lines[5] != "```" {
		t.Errorf("the README does not begin with the demo and the test command:\n%s", strings.Join(lines[:min(len(lines), 6)], "\n"))
	}
	install := regexp.MustCompile("(?m)^go install (\\./cmd/hwprof|" + regexp.QuoteMeta(module) + "/cmd/hwprof@latest)( |$)")
	top := strings.Join(lines[:min(len(lines), 40)], "\n")
	if !install.MatchString(top) {
		t.Errorf("the README's first 40 lines have no install step (go install ./cmd/hwprof or go install %s/cmd/hwprof@latest)", module)
	}
}

// Each command's -h lists each flag once, its short and long forms on one
// line and long ones with two dashes, as the README writes them
// (-o, --output FILE).
func TestHelpListsFlagsOnce(t *testing.T) {
	header := regexp.MustCompile(`^  (-[^\s,=]+)((?:, -[^\s,=]+)*)`)
	for _, c := range commands {
		if c.name == "help" || c.name == "version" {
			continue
		}
		r := hwprof(t, c.name, "-h")
		seen := map[string]bool{}
		for l := range strings.Lines(r.stdout) {
			m := header.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			names := append([]string{m[1]}, strings.Split(m[2], ", ")[1:]...)
			for _, n := range names {
				bare := strings.TrimLeft(n, "-")
				if len(bare) > 1 && !strings.HasPrefix(n, "--") || len(bare) == 1 && n != "-"+bare {
					t.Errorf("%s -h: flag %s: want -X for a letter, --NAME for a word: %q", c.name, n, l)
				}
				if seen[bare] {
					t.Errorf("%s -h lists %s twice", c.name, n)
				}
				seen[bare] = true
			}
		}
		if len(seen) == 0 || !seen["version"] {
			t.Errorf("%s -h lists no flags, or not --version:\n%s", c.name, r.stdout)
		}
	}
	rec := hwprof(t, "record", "-h").stdout
	for _, want := range []string{"\n  -o, --output FILE\n", "\n  -p, --pid PID[,PID...]\n", "\n  -e, --event spec\n", "\n  -q, --quiet\n", "\n  --duration D\n"} {
		if !strings.Contains(rec, want) {
			t.Errorf("record -h lacks %q:\n%s", want, rec)
		}
	}
}
