package testprog

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/hwprof/hwprof/internal/testenv"
)

// Build returns the path of the program testdata/NAME built with flags:
// NAME is "c/FILE.c", "cpp/FILE.cc" or "go/DIR". C and C++ flags go to
// the compiler before the source ("-l" flags after it); Go flags go to go
// build. The binary is named after the program (FILE or DIR).
func Build(t testing.TB, name string, flags ...string) string {
	t.Helper()
	bin, _ := BuildLog(t, name, flags...)
	return bin
}

// BuildCC is Build of a C or C++ program with the compiler cc (such as
// clang-19) instead of gcc or g++; a test skips when cc is not installed.
func BuildCC(t testing.TB, cc, name string, flags ...string) string {
	t.Helper()
	src := source(t, name)
	bin, _ := buildWith(t, cc, src, nil, flags)
	return bin
}

// BuildLog is Build that also returns what the compiler printed while
// building (for flags such as -gcflags that make it report decisions).
func BuildLog(t testing.TB, name string, flags ...string) (bin, log string) {
	t.Helper()
	src := source(t, name)
	return build(t, src, nil, flags)
}

// source returns the path of the program testdata/NAME, failing the
// test when it is not there.
func source(t testing.TB, name string) string {
	t.Helper()
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(root, "testdata", filepath.FromSlash(name))
	if _, err := os.Stat(src); err != nil {
		t.Fatalf("testprog: %v", err)
	}
	return src
}

// BuildText builds a program whose text the test makes itself (one
// generated for the test, or too small and specific to stand in
// testdata): file names it and its language by its extension (".c" or
// ".cc"). It is built once per text and flags, as Build does.
func BuildText(t testing.TB, file, text string, flags ...string) string {
	t.Helper()
	bin, _ := build(t, file, []byte(text), flags)
	return bin
}

// Root returns the module's root directory: the nearest directory above
// the working directory (a test runs in its package's directory) with a
// go.mod, or else the one above this source file.
func Root() (string, error) {
	rootOnce.Do(func() {
		if wd, err := os.Getwd(); err == nil {
			for d := wd; ; d = filepath.Dir(d) {
				if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
					rootDir = d
					return
				}
				if filepath.Dir(d) == d {
					break
				}
			}
		}
		if _, file, _, ok := runtime.Caller(0); ok {
			d := filepath.Dir(filepath.Dir(filepath.Dir(file)))
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				rootDir = d
				return
			}
		}
		rootErr = errors.New("testprog: no go.mod above the working directory")
	})
	return rootDir, rootErr
}

var (
	rootOnce sync.Once
	rootDir  string
	rootErr  error
)

// A program built (or failed to build) once for this process.
type program struct {
	once     sync.Once
	bin, log string
	err      error
}

var (
	mu       sync.Mutex
	programs = map[string]*program{}
)

// build compiles src (a path; with text, the program's text, and src
// only names it) with flags, once per process for the same inputs.
func build(t testing.TB, src string, text []byte, flags []string) (string, string) {
	t.Helper()
	return buildWith(t, "", src, text, flags)
}

// buildWith is build with the compiler cc ("": gcc, g++ or go by the
// source's extension).
func buildWith(t testing.TB, cc, src string, text []byte, flags []string) (string, string) {
	t.Helper()
	tool, lang := "go", "go"
	switch filepath.Ext(src) {
	case ".c":
		tool, lang = "gcc", "c"
	case ".cc":
		tool, lang = "g++", "c++"
	}
	if cc != "" && lang != "go" {
		tool = cc
	}
	testenv.Tool(t, tool)
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%q\x00", tool, src, text, flags)
	key := hex.EncodeToString(h.Sum(nil))[:16]
	mu.Lock()
	p := programs[key]
	if p == nil {
		p = &program{}
		programs[key] = p
	}
	mu.Unlock()
	p.once.Do(func() { p.bin, p.log, p.err = compile(tool, lang, src, text, key, flags) })
	if p.err != nil {
		t.Fatal(p.err)
	}
	return p.bin, p.log
}

func compile(tool, lang, src string, text []byte, key string, flags []string) (string, string, error) {
	base, err := cacheDir()
	if err != nil {
		return "", "", err
	}
	dir := filepath.Join(base, key)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", "", fmt.Errorf("testprog: %w", err)
	}
	name := strings.TrimSuffix(filepath.Base(src), filepath.Ext(src))
	bin := filepath.Join(dir, name)
	if text != nil {
		file := filepath.Join(dir, filepath.Base(src))
		if err := os.WriteFile(file, text, 0o644); err != nil {
			return "", "", fmt.Errorf("testprog: %w", err)
		}
		src = file
	}
	var cmd *exec.Cmd
	if lang == "go" {
		args := append(append([]string{"build", "-o", bin}, flags...), src)
		cmd = exec.Command(tool, args...)
		cmd.Dir = filepath.Dir(src)
		cmd.Env = goEnv()
	} else {
		var before, after []string
		for _, f := range flags {
			if strings.HasPrefix(f, "-l") {
				after = append(after, f)
			} else {
				before = append(before, f)
			}
		}
		args := append(append(before, "-o", bin, src), after...)
		cmd = exec.Command(tool, args...)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", "", fmt.Errorf("testprog: %s: %w\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	return bin, string(out), nil
}

var (
	cacheOnce sync.Once
	cachePath string
	cacheErr  error
)

// cachePrefix starts the name of each process's build directory, followed
// by the process's id.
const cachePrefix = "hwprof-testprog-"

// cacheDir returns this process's build directory, made on first use. It
// also removes the directories left by test processes that no longer run
// (a test binary killed at its timeout cannot remove its own).
func cacheDir() (string, error) {
	cacheOnce.Do(func() {
		tmp := os.TempDir()
		if old, err := filepath.Glob(filepath.Join(tmp, cachePrefix+"*")); err == nil {
			for _, d := range old {
				pid, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(d), cachePrefix), "-")
				if n, err := strconv.Atoi(pid); err == nil && n != os.Getpid() && !alive(n) {
					os.RemoveAll(d)
				}
			}
		}
		cachePath, cacheErr = os.MkdirTemp(tmp, cachePrefix+strconv.Itoa(os.Getpid())+"-")
		if cacheErr != nil {
			cacheErr = fmt.Errorf("testprog: %w", cacheErr)
		}
	})
	return cachePath, cacheErr
}

// alive tells whether a process with this id exists.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// Copy copies the built program bin into dir under the same name and
// returns the copy's path: for a test that changes, strips or moves the
// binary, which others share.
func Copy(t testing.TB, bin, dir string) string {
	t.Helper()
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, filepath.Base(bin))
	if err := os.WriteFile(out, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return out
}

// Source returns the text of testdata/NAME (a file: "c/FILE.c",
// "go/DIR/main.go"), for a test that reads the program's lines.
func Source(t testing.TB, name string) string {
	t.Helper()
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "testdata", filepath.FromSlash(name)))
	if err != nil {
		t.Fatalf("testprog: %v", err)
	}
	return string(b)
}

// CompileGo compiles the main package of testdata/NAME ("go/DIR") alone
// with go tool compile and flags (such as -pgoprofile=FILE -d=pgodebug=1
// or -m), against the export data that go list -export gives for its
// imports (the standard library as the go command built and cached it),
// links it, and returns the binary and what the compiler printed. The
// compiler's decisions for the program's own code are those of go build
// with the same -gcflags (TestCompileGo), in about a second: go build -pgo
// rebuilds the standard library for the profile (a minute or more on a
// cold build cache); scripts/bench-pgo.sh makes those whole builds.
func CompileGo(t testing.TB, name string, flags ...string) (bin, log string) {
	t.Helper()
	testenv.Tool(t, "go")
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "testdata", filepath.FromSlash(name))
	goCmd := func(args ...string) *exec.Cmd {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = goEnv()
		return cmd
	}
	out, err := goCmd("list", "-export", "-deps", "-json", ".").Output()
	if err != nil {
		t.Fatalf("testprog: go list -export -deps %s: %v\n%s", name, err, stderrOf(err))
	}
	var cfg strings.Builder
	var files []string
	for d := json.NewDecoder(bytes.NewReader(out)); d.More(); {
		var p struct {
			ImportPath, Export, Dir, Name string
			DepOnly                       bool
			GoFiles                       []string
		}
		if err := d.Decode(&p); err != nil {
			t.Fatalf("testprog: go list -json %s: %v", name, err)
		}
		if !p.DepOnly {
			if p.Name != "main" {
				t.Fatalf("testprog: %s is package %s, not main", name, p.Name)
			}
			for _, f := range p.GoFiles {
				files = append(files, filepath.Join(p.Dir, f))
			}
		} else if p.Export != "" {
			fmt.Fprintf(&cfg, "packagefile %s=%s\n", p.ImportPath, p.Export)
		}
	}
	tmp := t.TempDir()
	importcfg := filepath.Join(tmp, "importcfg")
	if err := os.WriteFile(importcfg, []byte(cfg.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	obj := filepath.Join(tmp, "main.a")
	args := append(append([]string{"tool", "compile", "-p", "main", "-importcfg", importcfg, "-o", obj}, flags...), files...)
	b, err := goCmd(args...).CombinedOutput()
	if err != nil {
		t.Fatalf("testprog: go %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	bin = filepath.Join(tmp, filepath.Base(dir))
	if out, err := goCmd("tool", "link", "-importcfg", importcfg, "-o", bin, obj).CombinedOutput(); err != nil {
		t.Fatalf("testprog: go tool link %s: %v\n%s", name, err, out)
	}
	return bin, string(b)
}

// stderrOf is what a failed command wrote on its standard error, when
// exec kept it.
func stderrOf(err error) []byte {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.Stderr
	}
	return nil
}

// goEnv is the environment of the go commands that build the programs:
// the toolchain installed, and no version control stamp (a program is not
// the module's own product).
func goEnv() []string {
	return append(os.Environ(), "GOTOOLCHAIN=local", "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -buildvcs=false"))
}
