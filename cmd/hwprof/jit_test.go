package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/internal/testenv"
)

// hotJS spins in hotLoop for the milliseconds of its argument.
const hotJS = `function hotLoop(n) { let s = 0; for (let i = 0; i < n; i++) { s = (s * 31 + i) % 1000003; } return s; }
const end = Date.now() + Number(process.argv[2]);
let t = 0;
while (Date.now() < end) { t += hotLoop(100000); }
console.log(t);
`

// hotJava spins in Hot.hotLoop for the milliseconds of its argument.
const hotJava = `public class Hot {
    static long hotLoop(long n) { long s = 0; for (long i = 0; i < n; i++) { s = (s * 31 + i) % 1000003; } return s; }
    public static void main(String[] a) {
        long end = System.currentTimeMillis() + Long.parseLong(a[0]);
        long t = 0;
        while (System.currentTimeMillis() < end) { t += hotLoop(100000); }
        System.out.println(t);
    }
}
`

// jitFunction is a function of report --format json.
type jitFunction struct {
	Name   string  `json:"name"`
	Object *string `json:"object"`
	Self   float64 `json:"self"`
}

// recordRuntime records cmd (run in dir by sh, which writes its pid to
// a file first and then execs it) with cpu-clock and call graphs, and
// returns the report's functions and the runtime's pid. The perf map
// /tmp/perf-PID.map the runtime may write is removed at the end.
func recordRuntime(t *testing.T, dir, cmd string) ([]jitFunction, int) {
	t.Helper()
	testenv.PerfEvents(t)
	data := filepath.Join(dir, "jit.data")
	pidFile := filepath.Join(dir, "pid")
	rec := exec.Command(hwprofBin, "record", "-q", "-e", "cpu-clock", "-g", "-o", data, "--", "sh", "-c", "echo $$ > "+pidFile+"; exec "+cmd)
	rec.Dir = dir
	if r := runCmd(t, rec); r.code != 0 {
		t.Fatalf("record: exit %d\n%s", r.code, r.stderr)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	fmt.Sscan(string(b), &pid)
	t.Cleanup(func() { os.Remove(fmt.Sprintf("/tmp/perf-%d.map", pid)) })
	return reportFunctions(t, data), pid
}

// reportFunctions returns every function of a recording's JSON report.
func reportFunctions(t *testing.T, data string) []jitFunction {
	t.Helper()
	r := hwprofExec(t, "report", "-i", data, "--format", "json", "--top", "0")
	if r.code != 0 {
		t.Fatalf("report: exit %d\n%s", r.code, r.stderr)
	}
	var rep struct {
		Functions []jitFunction `json:"functions"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	return rep.Functions
}

// hottest returns the function whose name contains name with the most
// self weight, failing the test when all such functions (a JIT compiles a
// hot function more than once: interpreted, baseline, optimized) have
// less than least of it together.
func hottest(t *testing.T, fns []jitFunction, name string, least float64) jitFunction {
	t.Helper()
	var best jitFunction
	sum := 0.0
	for _, f := range fns {
		if strings.Contains(f.Name, name) {
			sum += f.Self
			if f.Self > best.Self {
				best = f
			}
		}
	}
	if sum < least {
		var top []string
		for _, f := range fns[:min(len(fns), 8)] {
			top = append(top, fmt.Sprintf("%.1f%% %s", 100*f.Self, f.Name))
		}
		t.Fatalf("%s has %.1f%% of the samples, want %.0f%% or more; the hottest: %s", name, 100*sum, 100*least, strings.Join(top, "; "))
	}
	return best
}

func objectOf(f jitFunction) string {
	if f.Object == nil {
		return ""
	}
	return *f.Object
}

// Node.js with --perf-basic-prof writes /tmp/perf-PID.map (no 0x before
// its addresses): the report names the hot JavaScript function.
func TestNodePerfMap(t *testing.T) {
	t.Parallel() // its own programs, files, server and ports
	node := testenv.Tool(t, "node")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "hot.js"), []byte(hotJS), 0o644)
	fns, pid := recordRuntime(t, dir, node+" --perf-basic-prof hot.js 1500")
	f := hottest(t, fns, "hotLoop", 0.3)
	if want := fmt.Sprintf("/tmp/perf-%d.map", pid); objectOf(f) != "anon" && objectOf(f) != want && !strings.HasPrefix(objectOf(f), "//anon") {
		t.Errorf("hotLoop's object %q, want JIT memory", objectOf(f))
	}
}

// Node.js with --perf-prof writes a jitdump file, jit-PID.dump, in its
// working directory and maps it: the report names the hot JavaScript
// function from it, as an object of its own, and the interpreter's
// frames (--interpreted-frames-native-stack) as V8 names them.
func TestNodeJITDump(t *testing.T) {
	t.Parallel() // its own programs, files, server and ports
	node := testenv.Tool(t, "node")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "hot.js"), []byte(hotJS), 0o644)
	fns, pid := recordRuntime(t, dir, node+" --perf-prof --interpreted-frames-native-stack hot.js 1500")
	f := hottest(t, fns, "hotLoop", 0.3)
	if want := filepath.Join(dir, fmt.Sprintf("jit-%d.dump", pid)); objectOf(f) != want {
		t.Errorf("hotLoop's object %q, want the jitdump %s", objectOf(f), want)
	}
	if !strings.HasPrefix(f.Name, "JS:") {
		t.Errorf("hotLoop named %q, want V8's name of JavaScript code (JS:...)", f.Name)
	}
}

// OpenJDK 17 writes its perf map at exit with -XX:+DumpPerfMapAtExit,
// with 0x before its addresses: the report names the hot Java method.
func TestJavaPerfMap(t *testing.T) {
	t.Parallel() // its own programs, files, server and ports
	java := testenv.Tool(t, "java")
	javac := testenv.Tool(t, "javac")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "Hot.java"), []byte(hotJava), 0o644)
	c := exec.Command(javac, "Hot.java")
	c.Dir = dir
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	fns, _ := recordRuntime(t, dir, java+" -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit -XX:+PreserveFramePointer Hot 1500")
	f := hottest(t, fns, "Hot.hotLoop", 0.3)
	if !strings.Contains(objectOf(f), "anon") && !strings.HasPrefix(objectOf(f), "/tmp/perf-") {
		t.Errorf("Hot.hotLoop's object %q, want JIT memory", objectOf(f))
	}
}

// reuseC is a tiny JIT: it writes a function at an address of executable
// anonymous memory, runs it for the milliseconds of CPU time of its
// argument (CPU time: a busy machine gives both halves as many samples),
// then writes another function at the same address and runs that as long,
// logging each in a jitdump file (jit-PID.dump in its working directory,
// mapped executable as perf's agents and V8 map it, so that the recording
// names it).
const reuseC = `#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
static uint64_t now(void) { struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return ts.tv_sec * 1000000000ull + ts.tv_nsec; }
struct hdr { uint32_t magic, version, total_size, elf_mach, pad1, pid; uint64_t timestamp, flags; };
struct load { uint32_t id, total_size; uint64_t timestamp; uint32_t pid, tid; uint64_t vma, code_addr, code_size, code_index; };
static int fd;
static void emit_load(unsigned char *addr, size_t size, uint64_t idx, const char *name) {
	size_t n = strlen(name) + 1;
	struct load l = {0, sizeof l + n + size, now(), getpid(), getpid(), (uint64_t)addr, (uint64_t)addr, size, idx};
	write(fd, &l, sizeof l); write(fd, name, n); write(fd, addr, size);
}
static uint64_t cpu(void) { struct timespec ts; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts); return ts.tv_sec * 1000000000ull + ts.tv_nsec; }
static void spin(unsigned char *code, uint64_t ms) {
	uint64_t end = cpu() + ms * 1000000;
	void (*f)(long) = (void (*)(long))code;
	while (cpu() < end) f(100000);
}
int main(int argc, char **argv) {
	uint64_t ms = atol(argv[1]);
	char path[64];
	snprintf(path, sizeof path, "jit-%d.dump", getpid());
	fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);
	struct hdr h = {0x4A695444, 1, sizeof h, 62, 0, getpid(), now(), 0};
	write(fd, &h, sizeof h);
	mmap(NULL, sysconf(_SC_PAGESIZE), PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	unsigned char *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	static const unsigned char first[] = {0x48, 0xff, 0xcf, 0x75, 0xfb, 0xc3};        /* dec %rdi; jnz; ret */
	static const unsigned char second[] = {0x90, 0x48, 0xff, 0xcf, 0x75, 0xfb, 0xc3}; /* nop; the same */
	memcpy(code, first, sizeof first);
	emit_load(code, sizeof first, 1, "jit_first");
	spin(code, ms);
	memcpy(code, second, sizeof second);
	emit_load(code, sizeof second, 2, "jit_second");
	spin(code, ms);
	return 0;
}
`

// One address held by two JIT functions in turn: each sample is named
// by the function loaded there at its time, so both have about half of
// the samples (a perf map, without times, gives them all to the last).
func TestJITDumpAddressReused(t *testing.T) {
	t.Parallel() // its own programs, files, server and ports
	gcc := testenv.Tool(t, "gcc")
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "reuse.c"), filepath.Join(dir, "reuse")
	os.WriteFile(src, []byte(reuseC), 0o644)
	if out, err := exec.Command(gcc, "-O1", "-fno-omit-frame-pointer", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	fns, _ := recordRuntime(t, dir, bin+" 600")
	first := hottest(t, fns, "jit_first", 0.25)
	second := hottest(t, fns, "jit_second", 0.25)
	if objectOf(first) != objectOf(second) || !strings.HasSuffix(objectOf(first), ".dump") {
		t.Errorf("objects %q and %q, want the one jitdump file", objectOf(first), objectOf(second))
	}
}
