package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hwprof/hwprof/buildid"
	"github.com/hwprof/hwprof/internal/testenv"
)

// hiddenC spins in a static function for the milliseconds of its
// argument: stripped, nothing but its debug file names hidden_hot.
const hiddenC = `#include <stdlib.h>
#include <time.h>
static long now_ms(void) { struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return ts.tv_sec * 1000 + ts.tv_nsec / 1000000; }
__attribute__((noinline)) static unsigned long hidden_hot(unsigned long n) {
	unsigned long s = 0;
	for (unsigned long i = 0; i < n; i++) s = (s * 31 + i) % 1000003;
	return s;
}
int main(int argc, char **argv) {
	long end = now_ms() + atol(argv[1]);
	volatile unsigned long t = 0;
	while (now_ms() < end) t += hidden_hot(100000);
	return 0;
}
`

// strippedRecording builds hiddenC with -g, keeps its debug file in
// dir/srv (objcopy --only-keep-debug, no .gnu_debuglink), strips the
// binary and records it; it returns the recording and the binary's
// build-id.
func strippedRecording(t *testing.T, dir string) (string, buildid.ID) {
	t.Helper()
	testenv.PerfEvents(t)
	gcc, objcopy, strip := testenv.Tool(t, "gcc"), testenv.Tool(t, "objcopy"), testenv.Tool(t, "strip")
	src, bin := filepath.Join(dir, "hidden.c"), filepath.Join(dir, "hidden")
	os.WriteFile(src, []byte(hiddenC), 0o644)
	os.Mkdir(filepath.Join(dir, "srv"), 0o755)
	for _, c := range [][]string{
		{gcc, "-O1", "-g", "-fno-omit-frame-pointer", "-Wl,--build-id", "-o", bin, src},
		{objcopy, "--only-keep-debug", bin, filepath.Join(dir, "srv", "hidden.debug")},
		{strip, "--strip-all", bin},
	} {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%q: %v\n%s", c, err, out)
		}
	}
	id, err := buildid.Read(bin)
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "hidden.data")
	if r := hwprofExec(t, "record", "-q", "-e", "cpu-clock", "-g", "-o", data, "--", bin, "800"); r.code != 0 {
		t.Fatalf("record: exit %d\n%s", r.code, r.stderr)
	}
	return data, id
}

// debugReport is what the debuginfod tests read of report --format json.
type debugReport struct {
	Functions []jitFunction `json:"functions"`
	Edges     []struct {
		Caller, Callee string
		Callsite       *struct {
			File string `json:"file"`
			Line int    `json:"line"`
		} `json:"callsite"`
	} `json:"edges"`
	Recording struct {
		Warnings []string `json:"warnings"`
	} `json:"recording"`
}

// reportEnv runs report --format json on data with env added, and
// returns what it says and how long it took.
func reportEnv(t *testing.T, env []string, args ...string) (debugReport, time.Duration) {
	t.Helper()
	cmd := exec.Command(hwprofBin, append([]string{"report", "--format", "json"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	start := time.Now()
	r := runCmd(t, cmd)
	took := time.Since(start)
	if r.code != 0 {
		t.Fatalf("report %q: exit %d\n%s", args, r.code, r.stderr)
	}
	var rep debugReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	return rep, took
}

func names(rep debugReport) bool {
	for _, f := range rep.Functions {
		if f.Name == "hidden_hot" && f.Self > 0.3 {
			return true
		}
	}
	return false
}

// freePort returns a TCP port of 127.0.0.1 that nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

// startDebuginfod runs elfutils' debuginfod on 127.0.0.1, serving the
// files of dir, and returns its URL once it serves the debug file of id.
func startDebuginfod(t *testing.T, dir string, id buildid.ID) string {
	t.Helper()
	bin := testenv.Tool(t, "debuginfod")
	port := freePort(t)
	cmd := exec.Command(bin, "-F", "-p", fmt.Sprint(port), "-d", filepath.Join(t.TempDir(), "db.sqlite"), dir)
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		// Ready once its first groom of the database is over (it runs
		// beside the first scan at start, and a file served before it
		// may be a 404 after) and it serves the file.
		if debuginfodSettled(url) {
			resp, err := http.Get(url + "/buildid/" + id.String() + "/debuginfo")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return url
				}
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("debuginfod did not serve %s within 30 s:\n%s", id, log.String())
	return ""
}

// debuginfodSettled says whether the server at url has groomed its
// database once and has no file left to scan (its /metrics).
func debuginfodSettled(url string) bool {
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return false
	}
	m := string(b)
	return strings.Contains(m, "thread_work_total{role=\"groom\"} ") && !strings.Contains(m, "thread_work_total{role=\"groom\"} 0\n") &&
		strings.Contains(m, "thread_busy{role=\"groom\"} 0\n") && strings.Contains(m, "thread_work_pending{role=\"scan\"} 0\n")
}

// A stripped binary whose debug file only a debuginfod server has: the
// report names its static function from the file fetched (and its call
// site's line with --srcline), keeps the file in the cache, and names it
// from the cache with --offline once the server is gone.
func TestDebuginfodServer(t *testing.T) {
	t.Parallel() // its own programs, files, server and ports
	dir := t.TempDir()
	data, id := strippedRecording(t, dir)
	cache := filepath.Join(dir, "cache")
	if rep, _ := reportEnv(t, []string{"DEBUGINFOD_URLS=", "DEBUGINFOD_CACHE_PATH=" + cache}, "-i", data); names(rep) {
		t.Fatal("hidden_hot named with no debug file anywhere: the binary is not stripped")
	}
	url := startDebuginfod(t, filepath.Join(dir, "srv"), id)
	env := []string{"DEBUGINFOD_URLS=" + url, "DEBUGINFOD_CACHE_PATH=" + cache}
	rep, _ := reportEnv(t, env, "-i", data, "--srcline")
	if !names(rep) {
		t.Fatalf("hidden_hot not named from %s: %+v\nwarnings: %q", url, rep.Functions[:min(5, len(rep.Functions))], rep.Recording.Warnings)
	}
	line := false
	for _, e := range rep.Edges {
		if e.Callee == "hidden_hot" && e.Caller == "main" && e.Callsite != nil && strings.HasSuffix(e.Callsite.File, "hidden.c") && e.Callsite.Line == 12 {
			line = true
		}
	}
	if !line {
		t.Errorf("no edge main → hidden_hot at hidden.c:12 (--srcline): %+v", rep.Edges)
	}
	if fi, err := os.Stat(filepath.Join(cache, id.String(), "debuginfo")); err != nil || fi.Size() == 0 {
		t.Fatalf("the debug file is not in the cache: %v", err)
	}
	// the server is stopped: the cache alone names it, offline
	env[0] = "DEBUGINFOD_URLS=" + fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	if rep, _ := reportEnv(t, env, "-i", data, "--offline"); !names(rep) {
		t.Errorf("--offline: hidden_hot not named from the cache")
	}
	// offline with an empty cache: nothing is asked, nothing named
	env[1] = "DEBUGINFOD_CACHE_PATH=" + filepath.Join(dir, "empty")
	rep, _ = reportEnv(t, []string{"DEBUGINFOD_URLS=" + url, env[1]}, "-i", data, "--offline")
	// (the live recording's stacks may add warnings of their own: a
	// broken stack; those of the debug file are counted)
	var said, server int
	for _, w := range rep.Recording.Warnings {
		if strings.HasPrefix(w, "no symbols in "+filepath.Join(dir, "hidden")+": ") {
			said++
		}
		if strings.Contains(w, url) || strings.Contains(w, "debuginfod") && !strings.HasPrefix(w, "no symbols in ") {
			server++
		}
	}
	if names(rep) || said != 1 || server != 0 {
		t.Errorf("--offline with an empty cache named hidden_hot, or did not say why not (once, and nothing of the server): %q\nfunctions: %+v", rep.Recording.Warnings, rep.Functions[:min(5, len(rep.Functions))])
	}
}

// A debuginfod server that is down, or that accepts and never answers,
// costs a report at most its timeout and one warning, not a hang.
func TestDebuginfodDownOrSlow(t *testing.T) {
	t.Parallel() // its own programs, files, server and ports
	dir := t.TempDir()
	data, _ := strippedRecording(t, dir)
	slow, err := net.Listen("tcp", "127.0.0.1:0") // accepts (the kernel's backlog) and never answers
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	for _, tt := range []struct {
		name, url string
	}{
		{"down", fmt.Sprintf("http://127.0.0.1:%d", freePort(t))},
		{"slow", "http://" + slow.Addr().String()},
	} {
		env := []string{"DEBUGINFOD_URLS=" + tt.url, "DEBUGINFOD_CACHE_PATH=" + filepath.Join(dir, tt.name), "DEBUGINFOD_TIMEOUT=2"}
		rep, took := reportEnv(t, env, "-i", data)
		if took > 20*time.Second {
			t.Errorf("%s server: the report took %v with a 2 s timeout", tt.name, took)
		}
		n := 0
		for _, w := range rep.Recording.Warnings {
			if strings.Contains(w, tt.url) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s server: %d warnings name it, want 1: %q", tt.name, n, rep.Recording.Warnings)
		}
	}
}
