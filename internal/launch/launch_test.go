package launch

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestExitStatus(t *testing.T) {
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

func TestNotFound(t *testing.T) {
	_, err := Start([]string{"./no-such-program-here"})
	var ee *ExecError
	if !errors.As(err, &ee) || ee.Code != 127 {
		t.Fatalf("Start = %v, want ExecError with code 127", err)
	}
}

func TestNotExecutable(t *testing.T) {
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
func TestExecFailsInChild(t *testing.T) {
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

func TestAbort(t *testing.T) {
	c, err := Start([]string{"true"})
	if err != nil {
		t.Fatal(err)
	}
	c.Abort()
	if err := c.Signal(syscall.Signal(0)); err == nil {
		t.Fatal("trampoline still alive after Abort")
	}
}
