package testprog

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// A program is built once per flags, whatever the number of tests asking
// for it at once, and the binary runs.
func TestBuildOnce(t *testing.T) {
	paths := make([]string, 8)
	var wg sync.WaitGroup
	for i := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			paths[i] = Build(t, "c/timed.c", "-O1")
		}()
	}
	wg.Wait()
	for _, p := range paths {
		if p != paths[0] {
			t.Fatalf("built twice: %q", paths)
		}
	}
	if filepath.Base(paths[0]) != "timed" {
		t.Errorf("binary %s is not named after the program", paths[0])
	}
	if other := Build(t, "c/timed.c", "-O0"); other == paths[0] {
		t.Errorf("other flags, same binary %s", other)
	}
	if out, err := exec.Command(paths[0], "1").CombinedOutput(); err != nil {
		t.Fatalf("%s 1: %v\n%s", paths[0], err, out)
	}
}

// Go programs build with the module's go.mod, and the compiler's output
// is returned.
func TestBuildGo(t *testing.T) {
	bin, log := BuildLog(t, "go/leafcalls", "-gcflags=-m")
	if !strings.Contains(log, "leaf") {
		t.Errorf("go build -gcflags=-m printed nothing about the program:\n%s", log)
	}
	out, err := exec.Command(bin, "10").Output()
	if err != nil {
		t.Fatalf("%s 10: %v", bin, err)
	}
	t.Logf("leafcalls 10: %s", out)
}

// CompileGo compiles a Go program's main package alone, its imports from
// go list's export data, and returns the compiler's output (the decisions
// go build -gcflags=-m prints for the same package) and a program that
// runs.
func TestCompileGo(t *testing.T) {
	decisions := func(out string) []string {
		var d []string
		for line := range strings.Lines(out) {
			if _, pos, ok := strings.Cut(line, "main.go:"); ok {
				d = append(d, pos)
			}
		}
		slices.Sort(d)
		return d
	}
	bin, out := CompileGo(t, "go/leafcalls", "-m")
	_, log := BuildLog(t, "go/leafcalls", "-gcflags=-m")
	if got, want := decisions(out), decisions(log); len(got) == 0 || !slices.Equal(got, want) {
		t.Errorf("go tool compile -m:\n%s\ngo build -gcflags=-m:\n%s", out, log)
	}
	// and the linked program runs
	if b, err := exec.Command(bin, "10").Output(); err != nil || len(b) == 0 {
		t.Errorf("%s 10: %v\n%s", bin, err, b)
	}
}

// A generated text builds as its extension says; a copy is the
// test's own.
func TestBuildTextAndCopy(t *testing.T) {
	bin := BuildText(t, "gen.cc", "#include <cstdio>\nint main() { std::puts(\"gen\"); }\n", "-O0")
	if filepath.Base(bin) != "gen" {
		t.Errorf("binary %s", bin)
	}
	dir := t.TempDir()
	cp := Copy(t, bin, dir)
	if cp != filepath.Join(dir, "gen") {
		t.Errorf("copy %s", cp)
	}
	if out, err := exec.Command(cp).Output(); err != nil || string(out) != "gen\n" {
		t.Errorf("copy ran: %q, %v", out, err)
	}
	if src := Source(t, "c/cpu_ms.h"); !strings.Contains(src, "cpu_ms") {
		t.Errorf("Source: %q", src)
	}
}

// fatalTB records the first Fatal and stops the calling goroutine's work
// with a panic the test recovers.
type fatalTB struct {
	testing.TB
	msg string
}

type stop struct{}

func (f *fatalTB) Helper() {}
func (f *fatalTB) Fatal(args ...any) {
	f.msg = fmt.Sprint(args...)
	panic(stop{})
}
func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	panic(stop{})
}

func fails(t *testing.T, fn func(tb testing.TB)) string {
	t.Helper()
	f := &fatalTB{TB: t}
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(stop); !ok {
					panic(r)
				}
			}
		}()
		fn(f)
	}()
	return f.msg
}

// A program that does not build, or does not exist, fails the test with
// the compiler's message or the missing path; so does every later ask.
func TestBuildFailures(t *testing.T) {
	bad := "int main(void) { return undefined_name; }\n"
	for i := 0; i < 2; i++ {
		if msg := fails(t, func(tb testing.TB) { BuildText(tb, "bad.c", bad) }); !strings.Contains(msg, "undefined_name") {
			t.Errorf("ask %d: failure %q does not carry gcc's message", i, msg)
		}
	}
	if msg := fails(t, func(tb testing.TB) { Build(tb, "c/no-such-program.c") }); !strings.Contains(msg, "no-such-program.c") {
		t.Errorf("missing program: %q", msg)
	}
}

// The build directory is this process's, named with its id.
func TestCacheDir(t *testing.T) {
	Build(t, "c/timed.c", "-O1")
	d, err := cacheDir()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(filepath.Base(d), fmt.Sprintf("%s%d-", cachePrefix, os.Getpid())) {
		t.Errorf("build directory %s", d)
	}
}
