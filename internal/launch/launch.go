package launch

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Arg is argv[1] of a trampoline process: the program that re-executes
// itself as a trampoline hands what follows it to Main.
const Arg = "--hwprof-internal-launch"

// ready is the byte the launcher (or the trampoline) writes on the error
// pipe once it waits for the go-ahead.
const ready = 'R'

// File descriptors of the launcher and the trampoline: 3 is the go-ahead
// pipe, 4 the error pipe (ExtraFiles start at 3).
const (
	goFD  = 3
	errFD = 4
)

// Main is the trampoline: args are what follows Arg on its command line,
// the program's path and then its argv. It returns an exit status only
// when the program cannot be executed (127 not found, 126 otherwise; 2
// without a path). The caller's main calls it first, on the main thread:
// its main package locks the main goroutine there in an init function
// (see runtime.LockOSThread), so that execve runs on the thread group
// leader, whose pid the events follow.
func Main(args []string) int {
	if len(args) == 0 {
		return 2
	}
	runtime.LockOSThread()
	if unix.Gettid() != unix.Getpid() {
		// Not the leader: the events would stay on a thread execve ends.
		// The launcher is not ready, which Start reports.
		return 127
	}
	return trampoline(args[0], args[1:])
}

func trampoline(path string, argv []string) int {
	unix.CloseOnExec(errFD)
	// Tell the parent that the runtime has started its threads: only now
	// may it open the events. A thread created after the open would
	// inherit them, and the kernel may then swap the perf contexts of that
	// thread and this one at a context switch (they are clones), so the
	// program would run with inherited copies of the events, which
	// PERF_EVENT_IOC_PERIOD on the parent's fds does not reach.
	if _, err := unix.Write(errFD, []byte{ready}); err != nil {
		return 127
	}
	// A raw read: the runtime does not see a blocking system call, so it
	// does not hand this thread's P to a new thread while we wait.
	var b [1]byte
	n, _, errno := unix.RawSyscall(unix.SYS_READ, goFD, uintptr(unsafe.Pointer(&b[0])), 1)
	if errno != 0 || n != 1 {
		return 127 // the parent gave up before the go-ahead
	}
	unix.Close(goFD)
	err := unix.Exec(path, argv, os.Environ())
	// The launcher's protocol: errno as one byte.
	errno, ok := err.(unix.Errno)
	if !ok || errno > 255 {
		errno = unix.EINVAL
	}
	unix.Write(errFD, []byte{byte(errno)})
	if errors.Is(err, unix.ENOENT) {
		return 127
	}
	return 126
}

// Child is a started launcher waiting for the go-ahead.
type Child struct {
	Path  string // the program that will be executed, resolved on PATH
	cmd   *exec.Cmd
	goW   *os.File
	errR  *os.File
	state *os.ProcessState
}

// ExecError is a program that could not be executed.
type ExecError struct {
	Path string
	Err  string
	Code int // 127 not found, 126 found but not executable
}

func (e *ExecError) Error() string {
	return fmt.Sprintf("cannot execute %s: %s", e.Path, e.Err)
}

// Start resolves argv[0] on PATH and starts a launcher for it, with the
// caller's standard streams and environment. The program does not run
// until Go is called. Start returns once the launcher waits for the
// go-ahead, with every thread it will have started (the launcher has one,
// the trampoline's runtime several), so that events opened on its pid from
// then on stay its own and are not inherited copies.
func Start(argv []string) (*Child, error) {
	return StartWith(argv, Streams{})
}

// Streams are the program's standard streams; a nil one is the caller's.
type Streams struct {
	Stdin, Stdout, Stderr *os.File
}

// StartWith is Start with the given standard streams (a recording written
// to standard output gives the program the caller's stderr as its stdout,
// as perf record does, so that its output does not mix with the data).
func StartWith(argv []string, s Streams) (*Child, error) {
	if len(argv) == 0 {
		return nil, errors.New("no command to run")
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		code := 126 // found but not executable, as a shell says
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			code = 127
		}
		return nil, &ExecError{Path: argv[0], Err: lookErr(err), Code: code}
	}
	goR, goW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		goR.Close()
		goW.Close()
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	start := func(prog string, args []string) (*exec.Cmd, error) {
		cmd := &exec.Cmd{
			Path:       prog,
			Args:       args,
			Stdin:      or(s.Stdin, os.Stdin),
			Stdout:     or(s.Stdout, os.Stdout),
			Stderr:     or(s.Stderr, os.Stderr),
			ExtraFiles: []*os.File{goR, errW},
		}
		return cmd, cmd.Start()
	}
	var cmd *exec.Cmd
	fallback := true
	if l := launcher(); l != "" {
		if cmd, err = start(l, append([]string{argv[0], path}, argv...)); err == nil {
			fallback = false
		} else {
			// Executing a memfd is refused here (vm.memfd_noexec, a
			// security module, no /proc): use the trampoline from now on.
			noLauncher()
		}
	}
	if fallback {
		var self string
		if self, err = os.Executable(); err != nil {
			err = fmt.Errorf("find own executable: %w", err)
		} else {
			cmd, err = start(self, append([]string{argv[0], Arg, path}, argv...))
		}
	}
	goR.Close()
	errW.Close()
	if err != nil {
		goW.Close()
		errR.Close()
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	c := &Child{Path: path, cmd: cmd, goW: goW, errR: errR}
	var b [1]byte
	if n, _ := io.ReadFull(errR, b[:]); n != 1 || b[0] != ready {
		c.Abort()
		return nil, fmt.Errorf("start %s: the launcher exited before it was ready", argv[0])
	}
	return c, nil
}

func or(f, def *os.File) *os.File {
	if f != nil {
		return f
	}
	return def
}

func lookErr(err error) string {
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Err.Error()
	}
	return err.Error()
}

// Pid is the process id the program will have.
func (c *Child) Pid() int { return c.cmd.Process.Pid }

// Go lets the launcher execute the program and reports whether execve
// succeeded. On failure the child has exited and was reaped.
func (c *Child) Go() error {
	_, err := c.goW.Write([]byte{1})
	c.goW.Close()
	if err != nil {
		return fmt.Errorf("start %s: %w", c.Path, err)
	}
	msg, _ := io.ReadAll(c.errR) // EOF when execve closes the pipe
	c.errR.Close()
	if len(msg) == 0 {
		return nil
	}
	code, _ := c.Wait()
	return &ExecError{Path: c.Path, Err: unix.Errno(msg[0]).Error(), Code: code}
}

// Abort ends a launcher that was never given the go-ahead.
func (c *Child) Abort() {
	c.goW.Close()
	c.errR.Close()
	c.Wait()
}

// Signal sends sig to the program.
func (c *Child) Signal(sig syscall.Signal) error {
	return c.cmd.Process.Signal(sig)
}

// Wait waits for the program to exit and returns its status as a shell
// reports it: the exit code, or 128+N when signal N killed it.
func (c *Child) Wait() (int, error) {
	if c.state == nil {
		st, err := c.cmd.Process.Wait()
		if err != nil {
			return -1, fmt.Errorf("wait for %s: %w", c.Path, err)
		}
		c.state = st
	}
	return ExitCode(c.state), nil
}

// ExitCode is a shell's view of a process state: the exit code, or 128+N
// when signal N killed the process.
func ExitCode(st *os.ProcessState) int {
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return st.ExitCode()
}
