package release

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"github.com/hwprof/hwprof/internal/uprobe"
	"golang.org/x/sys/unix"
)

// Arg is argv[1] of a releaser process: the program that re-executes
// itself as a releaser hands what follows it to Main.
const Arg = "__hwprof_release_perf_events__"

// Main is the releaser: args are what follows Arg on its command line,
// the number N of fds to close (descriptors 3 to 3+N-1), then optionally
// the tracefs directory and group of the probes to remove, then the
// tracefs mount directory and id to unmount. It returns the exit status:
// 0, 1 when the probes or the mount could not be removed, 2 for a bad
// command line.
func Main(args []string) int {
	if len(args) == 0 {
		return 2
	}
	n, err := strconv.Atoi(args[0])
	if err != nil {
		return 2
	}
	for fd := 3; fd < 3+n; fd++ {
		unix.Close(fd)
	}
	code := 0
	if len(args) >= 3 { // then the probes the events were made of
		if uprobe.Undefine(args[1], args[2]) != nil {
			code = 1
		}
	}
	if len(args) == 5 { // and the tracefs hwprof mounted for them
		id, err := strconv.ParseUint(args[4], 10, 64)
		if err != nil || uprobe.Unmount(args[3], id) != nil {
			code = 1
		}
	}
	return code
}

// Start starts a detached releaser holding files (perf event fds, passed
// themselves, not duplicates: duplicating would need twice the
// descriptors RLIMIT_NOFILE was raised for) and this process's tracefs
// probes and mount, which it then forgets. It reports whether the
// releaser started; either way the caller still closes its own copies of
// files (cheap when the releaser holds a reference to every event).
func Start(files []*os.File) bool {
	args := []string{Arg, strconv.Itoa(len(files))}
	if dir, group, ok := uprobe.Own(); ok {
		args = append(args, dir, group)
		if mdir, id, ok := uprobe.OwnMount(); ok {
			args = append(args, mdir, strconv.FormatUint(id, 10))
		}
	}
	cmd := exec.Command("/proc/self/exe", args...)
	cmd.ExtraFiles = files
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if cmd.Start() != nil {
		return false
	}
	cmd.Process.Release()
	uprobe.HandOverMount() // the releaser unmounts it
	return true
}
