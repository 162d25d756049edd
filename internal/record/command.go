package record

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"syscall"
	"time"

	"github.com/hwprof/hwprof/internal/launch"
	"github.com/hwprof/hwprof/internal/output"
	"golang.org/x/sys/unix"
)

func (r *recorder) runCommand() error {
	var streams launch.Streams
	if output.SharesStdout(r.o.Output) {
		streams.Stdout = os.Stderr // keep the program's output out of the data
	}
	child, err := launch.StartWith(r.o.Argv, streams)
	if err != nil {
		return err
	}
	pid := child.Pid()
	t0 := time.Now()
	err = r.openAll([]int{pid})
	r.stats.Attach = time.Since(t0)
	if err != nil {
		child.Abort()
		return err
	}
	if err := r.create(); err != nil {
		child.Abort()
		return err
	}
	// Until the program runs, a failure leaves the previous recording
	// where it was (abandon).
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		child.Abort()
		return r.abandon(fmt.Errorf("record: watch pid %d: %w", pid, err))
	}
	defer unix.Close(pidfd)
	if err := r.poller.Add(pidfd); err != nil {
		child.Abort()
		return r.abandon(fmt.Errorf("record: %w", err))
	}
	start := time.Now()
	if err := child.Go(); err != nil {
		r.stats.ExitCode = 127
		var ee *launch.ExecError
		if errors.As(err, &ee) {
			r.stats.ExitCode = ee.Code
		}
		return r.abandon(err) // nothing ran
	}
	if err := r.commit(); err != nil {
		child.Signal(syscall.SIGKILL)
		child.Wait()
		return err
	}
	if err := r.startAdaptive(); err != nil {
		child.Signal(syscall.SIGKILL)
		child.Wait()
		return r.finish(err)
	}
	if r.o.Started != nil {
		r.o.Started([]int{pid})
	}
	signals := 0
	var watched time.Time
	r.loop(start, func(ready []int) bool {
		if slices.Contains(ready, pidfd) {
			return true
		}
		select {
		case s := <-r.o.Interrupt:
			signals++
			if r.stats.Stop == StopTargets {
				r.stats.Stop, r.stats.Signal = StopSignal, s
			}
			if signals == 1 {
				child.Signal(syscall.SIGTERM)
			} else {
				child.Signal(syscall.SIGKILL)
			}
		default:
		}
		// The end of the duration and a failed write end the program as
		// perf does (perf stat --timeout, perf record: see WriteError).
		if signals == 0 && r.stopAsked(start, &watched, []int{pid}) {
			signals++
			child.Signal(syscall.SIGTERM)
		}
		return false
	})
	r.stats.ExitCode, err = child.Wait()
	r.stats.Duration = r.elapsed(start)
	return r.finish(err)
}
