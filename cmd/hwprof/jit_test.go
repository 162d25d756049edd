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
	return rep.Functions, pid
}

// hottest returns the function whose name contains name with the most
// self weight, failing the test when it has less than least of it.
func hottest(t *testing.T, fns []jitFunction, name string, least float64) jitFunction {
	t.Helper()
	var best jitFunction
	for _, f := range fns {
		if strings.Contains(f.Name, name) && f.Self > best.Self {
			best = f
		}
	}
	if best.Self < least {
		var top []string
		for _, f := range fns[:min(len(fns), 8)] {
			top = append(top, fmt.Sprintf("%.1f%% %s", 100*f.Self, f.Name))
		}
		t.Fatalf("%s has %.1f%% of the samples, want %.0f%% or more; the hottest: %s", name, 100*best.Self, 100*least, strings.Join(top, "; "))
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
