package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/internal/testprog"
	"github.com/hwprof/hwprof/internal/zbomb"
)

// TestBombsBoundedMemory runs dump, report and script on recordings whose
// COMPRESSED records expand to gigabytes (they drove these commands to
// 6.6-8.3 GB): each stays under 256 MB, does not crash, names the
// record cut short and exits with status 1 (records were lost).
func TestBombsBoundedMemory(t *testing.T) {
	t.Parallel()
	for _, sh := range zbomb.Shapes(40) {
		for cmd, r := range readBounded(t, sh.Name, sh.Stream) {
			if sh.Limited && !strings.Contains(r.stderr, "COMPRESSED record at offset 0x10") {
				t.Errorf("%s %s: stderr %q does not name the COMPRESSED record at offset 0x10", cmd, sh.Name, r.stderr)
			}
			// Records were lost (the bomb's): exit 1, as for every
			// recording that lost data while it was read.
			if sh.Limited && r.code != 1 {
				t.Errorf("%s %s: exit %d, want 1 (records lost)", cmd, sh.Name, r.code)
			}
		}
	}
}

// TestHeaderBombsBoundedMemory runs dump, report and script on
// recordings whose headers name sections that overlap, sizes just under
// the reader's caps, counts a tiny file cannot hold, and header records
// inside COMPRESSED records (zbomb's file shapes). Before the reader's
// budget, six string features on one string of 32 MiB took these
// commands past 256 MiB, and 2000 events on one ids section to 1.3 GB:
// each stays under 256 MiB, does not crash and prints the warning the
// shape calls for.
func TestHeaderBombsBoundedMemory(t *testing.T) {
	t.Parallel()
	shapes := append(zbomb.FileShapes(), zbomb.SixStrings(32<<20),
		zbomb.FileShape{Name: "compressed-header-records", File: zbomb.CompressedHeaderRecords(20), Warning: "header records from COMPRESSED records were ignored"})
	for _, sh := range shapes {
		for cmd, r := range readBounded(t, sh.Name, sh.File) {
			if !strings.Contains(r.stderr, sh.Warning) {
				t.Errorf("%s %s: stderr %.500q does not say %q", cmd, sh.Name, r.stderr, sh.Warning)
			}
		}
	}
}

// readBounded writes data to a file named after name and runs dump,
// report and script on it, each in a process of its own whose peak RSS
// must stay under 256 MiB, without crashing; it returns each command's
// exit status (negative: killed by that signal) and standard error.
func readBounded(t *testing.T, name string, data []byte) map[string]result {
	t.Helper()
	maxrss := testprog.BuildText(t, "maxrss.c", maxRSSText, "-O1")
	path := filepath.Join(t.TempDir(), name+".data")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out := map[string]result{}
	for _, cmd := range []string{"dump", "report", "script"} {
		code, rss, stderr := runMaxRSS(t, maxrss, hwprofBin, cmd, "-i", path)
		t.Logf("%s %s: exit %d, peak RSS %d MiB", cmd, name, code, rss>>10)
		if rss > 256<<10 {
			t.Errorf("%s %s: peak RSS %d MiB, want at most 256 MiB", cmd, name, rss>>10)
		}
		if code < 0 || strings.Contains(stderr, "panic:") {
			t.Errorf("%s %s crashed: exit %d\n%s", cmd, name, code, stderr)
		}
		out[cmd] = result{code: code, stderr: stderr}
	}
	return out
}

// maxRSSText runs a command and writes its peak resident set size (KiB)
// and its exit status (-N: killed by signal N) on descriptor 3. A child of
// the test's process would not do: a child's peak counts the memory of
// the process it was forked from until its exec, and the test's process
// holds the reports that tests run in it.
const maxRSSText = `#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
	if (argc < 2)
		return 125;
	pid_t pid = fork();
	if (pid < 0)
		return 125;
	if (pid == 0) {
		execv(argv[1], argv + 1);
		_exit(127);
	}
	int st;
	struct rusage ru;
	if (wait4(pid, &st, 0, &ru) < 0)
		return 125;
	dprintf(3, "%ld %d\n", ru.ru_maxrss, WIFSIGNALED(st) ? -WTERMSIG(st) : WEXITSTATUS(st));
	return 0;
}
`

// runMaxRSS runs argv under the maxrss program and returns its exit
// status (negative: the signal that killed it), peak RSS in KiB and
// standard error.
func runMaxRSS(t *testing.T, maxrss string, argv ...string) (code int, rss int64, stderr string) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c := exec.Command(maxrss, argv...)
	var errb strings.Builder
	c.Stderr = &errb
	c.ExtraFiles = []*os.File{w} // descriptor 3
	err = c.Run()
	w.Close()
	if err != nil {
		t.Fatalf("%s: %v\n%s", maxrss, err, errb.String())
	}
	b, _ := io.ReadAll(r)
	if _, err := fmt.Sscan(string(b), &rss, &code); err != nil {
		t.Fatalf("%s printed %q: %v", maxrss, b, err)
	}
	return code, rss, errb.String()
}
