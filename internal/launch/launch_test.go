package launch

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

func TestExitStatus(t *testing.T) { bothLaunchers(t, testExitStatus) }

func testExitStatus(t *testing.T) {
	for _, tc := range []struct {
		name string
		argv []string
		want int
	}{
		{"zero", []string{"true"}, 0},
		{"code", []string{"sh", "-c", "exit 3"}, 3},
		{"signal", []string{"sh", "-c", "kill -9 $$"}, 128 + 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Start(tc.argv)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Go(); err != nil {
				t.Fatal(err)
			}
			got, err := c.Wait()
			if err != nil || got != tc.want {
				t.Fatalf("Wait() = %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}

func TestNotFound(t *testing.T) { bothLaunchers(t, testNotFound) }

func testNotFound(t *testing.T) {
	_, err := Start([]string{"./no-such-program-here"})
	var ee *ExecError
	if !errors.As(err, &ee) || ee.Code != 127 {
		t.Fatalf("Start = %v, want ExecError with code 127", err)
	}
}

func TestNotExecutable(t *testing.T) { bothLaunchers(t, testNotExecutable) }

func testNotExecutable(t *testing.T) {
	p := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(p, []byte("#!/bin/sh\nexit 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Start([]string{p})
	var ee *ExecError
	if !errors.As(err, &ee) || ee.Code != 126 {
		t.Fatalf("Start = %v, want ExecError with code 126", err)
	}
}

// An exec that fails in the child (a binary of the wrong format) is
// reported by Go, with the child reaped.
func TestExecFailsInChild(t *testing.T) { bothLaunchers(t, testExecFailsInChild) }

func testExecFailsInChild(t *testing.T) {
	p := filepath.Join(t.TempDir(), "garbage")
	if err := os.WriteFile(p, []byte("\x7fELF garbage"), 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := Start([]string{p})
	if err != nil {
		t.Fatal(err)
	}
	err = c.Go()
	var ee *ExecError
	if !errors.As(err, &ee) || !strings.Contains(ee.Err, "exec format error") {
		t.Fatalf("Go = %v, want exec format error", err)
	}
}

func TestAbort(t *testing.T) { bothLaunchers(t, testAbort) }

func testAbort(t *testing.T) {
	c, err := Start([]string{"true"})
	if err != nil {
		t.Fatal(err)
	}
	c.Abort()
	if err := c.Signal(syscall.Signal(0)); err == nil {
		t.Fatal("trampoline still alive after Abort")
	}
}

// bothLaunchers runs test with the memfd launcher and with the trampoline.
func bothLaunchers(t *testing.T, test func(t *testing.T)) {
	t.Run("launcher", func(t *testing.T) {
		// vm.memfd_noexec = 2 refuses to execute any memfd.
		if b, _ := os.ReadFile("/proc/sys/vm/memfd_noexec"); strings.TrimSpace(string(b)) == "2" {
			t.Skip("vm.memfd_noexec is 2: this machine executes no memfd")
		}
		if launcher() == "" {
			t.Fatal("no launcher")
		}
		test(t)
	})
	t.Run("trampoline", func(t *testing.T) {
		useTrampoline(t)
		test(t)
	})
}

// useTrampoline makes Start use the trampoline until the test ends.
func useTrampoline(t *testing.T) {
	saved := launcher()
	noLauncher()
	t.Cleanup(func() {
		launcherMu.Lock()
		launcherPath = saved
		launcherMu.Unlock()
	})
}

// TestLauncherCode checks launcherCode against its source, assembled with
// GNU as.
func TestLauncherCode(t *testing.T) {
	as, err1 := exec.LookPath("as")
	objcopy, err2 := exec.LookPath("objcopy")
	if err1 != nil || err2 != nil {
		t.Skip("no GNU as or objcopy (binutils) on this machine")
	}
	dir := t.TempDir()
	obj, bin := filepath.Join(dir, "l.o"), filepath.Join(dir, "l.bin")
	for _, argv := range [][]string{
		{as, "-o", obj, "testdata/launcher.asm"},
		{objcopy, "-O", "binary", "-j", ".text", obj, bin},
	} {
		if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
		}
	}
	want, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(launcherCode, want) {
		t.Fatalf("launcherCode is not testdata/launcher.asm assembled:\n got % x\nwant % x", launcherCode, want)
	}
}

func TestLauncherELF(t *testing.T) {
	f, err := elf.NewFile(bytes.NewReader(launcherELF()))
	if err != nil {
		t.Fatal(err)
	}
	if f.Class != elf.ELFCLASS64 || f.Machine != elf.EM_X86_64 || f.Type != elf.ET_EXEC {
		t.Fatalf("class %v machine %v type %v", f.Class, f.Machine, f.Type)
	}
	var load, stack int
	for _, p := range f.Progs {
		switch p.Type {
		case elf.PT_LOAD:
			load++
			if p.Flags != elf.PF_R|elf.PF_X || f.Entry < p.Vaddr || f.Entry+uint64(len(launcherCode)) != p.Vaddr+p.Memsz {
				t.Errorf("PT_LOAD %+v does not hold the code at the entry %#x", p.ProgHeader, f.Entry)
			}
		case elf.PT_GNU_STACK:
			stack++
			if p.Flags&elf.PF_X != 0 {
				t.Errorf("executable stack: %v", p.Flags)
			}
		}
	}
	if load != 1 || stack != 1 {
		t.Fatalf("%d PT_LOAD, %d PT_GNU_STACK; want 1 and 1", load, stack)
	}
}

// The child waiting for the go-ahead is the launcher, one thread, and the
// program it executes sees its arguments, the environment and no other
// descriptor than the standard three and those the caller passes on.
func TestLauncherRuns(t *testing.T) { bothLaunchers(t, testLauncherRuns) }

func testLauncherRuns(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	t.Setenv("HWPROF_LAUNCH_TEST", "env-seen")
	script := `exec > "$1"; echo "$0 $2 $HWPROF_LAUNCH_TEST"; ls /proc/$$/fd`
	c, err := Start([]string{"sh", "-c", script, "name0", out, "arg2"})
	if err != nil {
		t.Fatal(err)
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.Pid()))
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", c.Pid()))
	if launcher() != "" {
		if !strings.Contains(exe, "hwprof-launch") || !strings.Contains(string(status), "\nThreads:\t1\n") {
			t.Errorf("the waiting child runs %q with\n%s\nwant the launcher, one thread", exe, status)
		}
	} else if self, _ := os.Executable(); exe != self {
		t.Errorf("the waiting child runs %q, want the trampoline %q", exe, self)
	}
	if err := c.Go(); err != nil {
		t.Fatal(err)
	}
	if code, err := c.Wait(); code != 0 || err != nil {
		t.Fatalf("Wait() = %d, %v", code, err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// Descriptors the test process inherited without close-on-exec pass
	// on too, as they would under perf; the pipes, 3 and 4, must not.
	lines := strings.Split(strings.TrimSpace(string(got)), "\n")
	if lines[0] != "name0 arg2 env-seen" || !slices.Contains(lines, "2") || slices.Contains(lines, "3") || slices.Contains(lines, "4") {
		t.Fatalf("the program wrote %q, want its arguments and environment, then fds 0, 1, 2 without 3 and 4", got)
	}
}

// Where the launcher cannot be executed, Start uses the trampoline and
// keeps to it.
func TestLauncherRefused(t *testing.T) {
	useTrampoline(t) // restores the launcher at the end
	p := filepath.Join(t.TempDir(), "not-executable")
	if err := os.WriteFile(p, launcherELF(), 0o644); err != nil {
		t.Fatal(err)
	}
	launcherMu.Lock()
	launcherPath = p
	launcherMu.Unlock()
	c, err := Start([]string{"true"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Go(); err != nil {
		t.Fatal(err)
	}
	if code, err := c.Wait(); code != 0 || err != nil {
		t.Fatalf("Wait() = %d, %v", code, err)
	}
	if l := launcher(); l != "" {
		t.Fatalf("launcher() = %q after a refused exec, want the trampoline", l)
	}
}
