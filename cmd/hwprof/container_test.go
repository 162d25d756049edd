package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hwprof/hwprof/internal/testenv"
)

// nsCommand is a shell command for unshare --mount --pid --fork that
// mounts a tmpfs on nsbin (in the new mount namespace only: the host's
// nsbin stays empty), copies bin there as prog and runs it for ms
// milliseconds: its binary is at a path the host does not have.
func nsCommand(unshare, nsbin, bin string, ms int) []string {
	return []string{unshare, "--mount", "--pid", "--fork", "sh", "-c",
		"mount -t tmpfs none " + nsbin + " && cp " + bin + " " + nsbin + "/prog && exec " + nsbin + "/prog " + strconv.Itoa(ms)}
}

// containerSetup builds hiddenC with its symbols and makes an empty
// directory for nsCommand; it skips unless the test runs as root with
// unshare and gcc installed.
func containerSetup(t *testing.T) (unshare, bin, nsbin string) {
	t.Helper()
	testenv.PerfEvents(t)
	testenv.Root(t, "mounting a tmpfs in a new mount namespace")
	unshare, gcc := testenv.Tool(t, "unshare"), testenv.Tool(t, "gcc")
	dir := t.TempDir()
	src := filepath.Join(dir, "hidden.c")
	bin = filepath.Join(dir, "hidden")
	os.WriteFile(src, []byte(hiddenC), 0o644)
	if out, err := exec.Command(gcc, "-O1", "-g", "-fno-omit-frame-pointer", "-Wl,--build-id", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	nsbin = filepath.Join(dir, "nsbin")
	os.Mkdir(nsbin, 0o755)
	return unshare, bin, nsbin
}

// hwprofEnv runs hwprof with env added.
func hwprofEnv(t *testing.T, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(hwprofBin, args...)
	cmd.Env = append(os.Environ(), env...)
	return runCmd(t, cmd)
}

// A program in another mount namespace, its binary at a path the host
// does not have: record keeps the binary in the build-id cache (read
// through /proc/PID/root while the program ran), and report names its
// functions from there once the program and its namespace are gone and
// its binary moved away, as on another machine. Without the cache (or
// with --no-buildid-cache) they are not named, and the report says why.
func TestContainerBuildIDCache(t *testing.T) {
	t.Parallel() // its own program, files and namespaces
	unshare, bin, nsbin := containerSetup(t)
	dir := t.TempDir()
	cache, empty := []string{"HWPROF_BUILDID_DIR=" + filepath.Join(dir, "cache")}, []string{"HWPROF_BUILDID_DIR=" + filepath.Join(dir, "none")}
	data := filepath.Join(dir, "ns.data")
	if r := hwprofEnv(t, cache, append([]string{"record", "-q", "-e", "cpu-clock", "-g", "-o", data, "--"}, nsCommand(unshare, nsbin, bin, 800)...)...); r.code != 0 {
		t.Fatalf("record: exit %d\n%s", r.code, r.stderr)
	}
	if ents, _ := os.ReadDir(nsbin); len(ents) != 0 {
		t.Fatalf("the host sees %v in %s: the mount was not the namespace's alone", ents, nsbin)
	}
	if err := os.Rename(bin, bin+".moved"); err != nil { // another machine: no copy anywhere
		t.Fatal(err)
	}
	r := hwprofEnv(t, cache, "report", "-i", data)
	if r.code != 0 || !hotLine(r.stdout, "hidden_hot") {
		t.Fatalf("report with the build-id cache: exit %d, hidden_hot not the hot function:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = hwprofEnv(t, empty, "report", "-i", data)
	if hotLine(r.stdout, "hidden_hot") || !strings.Contains(r.stderr, nsbin+"/prog") {
		t.Fatalf("report without the cache named hidden_hot, or did not say why not:\n%s\n%s", r.stdout, r.stderr)
	}
	// --no-buildid-cache keeps nothing
	off := []string{"HWPROF_BUILDID_DIR=" + filepath.Join(dir, "off")}
	os.Rename(bin+".moved", bin)
	if r := hwprofEnv(t, off, append([]string{"record", "-q", "--no-buildid-cache", "-e", "cpu-clock", "-o", filepath.Join(dir, "off.data"), "--"}, nsCommand(unshare, nsbin, bin, 200)...)...); r.code != 0 {
		t.Fatalf("record --no-buildid-cache: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "off")); err == nil {
		t.Errorf("--no-buildid-cache made the cache %s", filepath.Join(dir, "off"))
	}
}

// A program in another mount namespace that still runs: report names its
// functions through /proc/PID/root, with no build-id cache.
func TestContainerLive(t *testing.T) {
	t.Parallel() // its own program, files and namespaces
	unshare, bin, nsbin := containerSetup(t)
	dir := t.TempDir()
	args := nsCommand(unshare, nsbin, bin, 60000) // killed when done: it must outlive the report
	prog := exec.Command(args[0], args[1:]...)
	if err := prog.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { prog.Process.Kill(); prog.Wait() }()
	pid := nsChild(t, prog.Process.Pid, nsbin+"/prog")
	defer syscall.Kill(pid, syscall.SIGKILL) // the namespace's init: unshare's end does not end it
	env := []string{"HWPROF_BUILDID_DIR=" + filepath.Join(dir, "none")}
	data := filepath.Join(dir, "live.data")
	if r := hwprofEnv(t, env, "record", "-q", "--no-buildid-cache", "-e", "cpu-clock", "-g", "-p", strconv.Itoa(pid), "--duration", "1s", "-o", data); r.code != 0 {
		t.Fatalf("record: exit %d\n%s", r.code, r.stderr)
	}
	r := hwprofEnv(t, env, "report", "-i", data)
	if r.code != 0 || !hotLine(r.stdout, "hidden_hot") {
		t.Fatalf("report while the program runs: exit %d, hidden_hot not the hot function:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// nsChild waits for the child of unshare (pid) to run exe, and returns
// its pid (in the host's pid namespace).
func nsChild(t *testing.T, pid int, exe string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(pid) + "/children")
		for _, f := range strings.Fields(string(b)) {
			if target, err := os.Readlink("/proc/" + f + "/exe"); err == nil && target == exe {
				c, _ := strconv.Atoi(f)
				return c
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("unshare's child did not run %s within 10 s", exe)
	return 0
}

// hotLine says whether the first function of a text report's functions
// table is fn.
func hotLine(report, fn string) bool {
	lines := strings.Split(report, "\n")
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "self ") && i+1 < len(lines) {
			return strings.Contains(lines[i+1], " "+fn+" ")
		}
	}
	return false
}

// nsPerfMapC is a tiny JIT that writes its own perf map: it copies a
// function into executable anonymous memory, names it in
// /tmp/perf-<getpid()>.map (its pid and its /tmp: in a container, not the
// host's) and runs it for the milliseconds of its argument.
const nsPerfMapC = `#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
static uint64_t now(void) { struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return ts.tv_sec * 1000000000ull + ts.tv_nsec; }
int main(int argc, char **argv) {
	uint64_t end = now() + atol(argv[1]) * 1000000ull;
	static const unsigned char loop[] = {0x48, 0xff, 0xcf, 0x75, 0xfb, 0xc3}; /* dec %rdi; jnz; ret */
	unsigned char *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memcpy(code, loop, sizeof loop);
	char path[64];
	snprintf(path, sizeof path, "/tmp/perf-%d.map", getpid());
	FILE *m = fopen(path, "w");
	fprintf(m, "%lx %zx jit_nsmap_spin\n", (unsigned long)code, sizeof loop);
	fclose(m);
	void (*f)(long) = (void (*)(long))code;
	while (now() < end) f(100000);
	return 0;
}
`

// recordInNamespace builds the C program src and records it under
// unshare --mount --pid --fork, in the namespace's own /tmp (a tmpfs of
// the namespace alone, which holds the program and is its working
// directory), with the argument arg; it returns the recording. It
// removes the files record keeps in the host's /tmp for it (those of
// pattern holding mark) when the test ends. It skips unless the test runs
// as root with unshare and gcc installed.
func recordInNamespace(t *testing.T, src, arg, pattern, mark string) string {
	t.Helper()
	testenv.PerfEvents(t)
	testenv.Root(t, "mounting a tmpfs in a new mount namespace")
	unshare, gcc := testenv.Tool(t, "unshare"), testenv.Tool(t, "gcc")
	dir := t.TempDir()
	bin := filepath.Join(dir, "prog")
	os.WriteFile(bin+".c", []byte(src), 0o644)
	if out, err := exec.Command(gcc, "-O1", "-o", bin, bin+".c").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	before, _ := filepath.Glob(pattern)
	t.Cleanup(func() {
		after, _ := filepath.Glob(pattern)
		for _, p := range after {
			if b, err := os.ReadFile(p); err == nil && !slices.Contains(before, p) && strings.Contains(string(b), mark) {
				os.Remove(p)
			}
		}
	})
	data := filepath.Join(dir, "ns.data")
	nsbin := filepath.Join(dir, "nsbin") // a tmpfs of the namespace gets the binary, then moves to /tmp
	os.Mkdir(nsbin, 0o755)
	ns := []string{unshare, "--mount", "--pid", "--fork", "sh", "-c",
		"mount -t tmpfs none " + nsbin + " && cp " + bin + " " + nsbin + "/prog && mount --move " + nsbin + " /tmp && cd /tmp && exec /tmp/prog " + arg}
	if r := hwprof(t, append([]string{"record", "-q", "-e", "cpu-clock", "-g", "-o", data, "--"}, ns...)...); r.code != 0 {
		t.Fatalf("record: exit %d\n%s", r.code, r.stderr)
	}
	return data
}

// A JIT in another pid and mount namespace writes its perf map under its
// own pid in its own /tmp: record finds it through /proc/PID/root while
// the program runs and keeps it as the host's /tmp/perf-PID.map, so report
// names the JIT function after the program and its namespace are gone.
func TestContainerPerfMap(t *testing.T) {
	t.Parallel() // its own program and files
	data := recordInNamespace(t, nsPerfMapC, "600", "/tmp/perf-*.map", "jit_nsmap_spin")
	r := hwprof(t, "report", "-i", data)
	if r.code != 0 || !hotLine(r.stdout, "jit_nsmap_spin") {
		t.Fatalf("report: exit %d, jit_nsmap_spin not the hot function:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// A JIT in another pid and mount namespace writes its jitdump file in its
// own /tmp (jit-<its pid>.dump): record holds it open from its mapping on
// and keeps it as the host's /tmp/jit-PID.dump, so report names both
// functions of reuseC after the program and its namespace are gone.
func TestContainerJITDump(t *testing.T) {
	t.Parallel() // its own program and files
	data := recordInNamespace(t, reuseC, "300", "/tmp/jit-*.dump", "jit_second")
	fns := reportFunctions(t, data)
	hottest(t, fns, "jit_first", 0.25)
	hottest(t, fns, "jit_second", 0.25)
}
