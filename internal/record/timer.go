package record

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/hwprof/hwprof/internal/launch"
	"github.com/hwprof/hwprof/perf/ring"
	"golang.org/x/sys/unix"
)

// timer is Options.Timer: a command that says how long to record and is
// not recorded itself. It is started before the events are opened (so a
// missing program is an error before anything is written) and executes
// once they are enabled.
type timer struct {
	child *launch.Child
	pidfd int
	ran   bool // given the go-ahead
	done  bool // waited for
	code  int  // its status once done (or 126/127 when it could not execute)
}

func startTimer(argv []string) (*timer, error) {
	c, err := launch.Start(argv)
	if err != nil {
		return nil, err
	}
	return &timer{child: c, pidfd: -1}, nil
}

// run lets the command execute and adds its pidfd to the poller, which
// then reports the command's exit.
func (t *timer) run(p *ring.Poller) error {
	pidfd, err := unix.PidfdOpen(t.child.Pid(), 0)
	if err != nil {
		return fmt.Errorf("record: watch the timer command: %w", err)
	}
	t.pidfd = pidfd
	t.ran = true
	if err := t.child.Go(); err != nil {
		t.done, t.code = true, 127
		var ee *launch.ExecError
		if errors.As(err, &ee) {
			t.code = ee.Code
		}
		return err
	}
	if err := p.Add(pidfd); err != nil {
		return fmt.Errorf("record: %w", err)
	}
	return nil
}

// end terminates the command if it still runs (SIGTERM) and returns its
// status.
func (t *timer) end() (int, error) {
	if t.done {
		return t.code, nil
	}
	var poll [1]unix.PollFd
	poll[0] = unix.PollFd{Fd: int32(t.pidfd), Events: unix.POLLIN}
	if n, _ := unix.Poll(poll[:], 0); n == 0 {
		t.child.Signal(syscall.SIGTERM)
	}
	code, err := t.child.Wait()
	t.done, t.code = true, code
	return code, err
}

// abort ends a command that never ran and closes the pidfd.
func (t *timer) abort() {
	if !t.ran {
		t.child.Abort()
	}
	if t.pidfd >= 0 {
		unix.Close(t.pidfd)
		t.pidfd = -1
	}
}
