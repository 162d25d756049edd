package uprobe

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// spareFiles are descriptors left for everything but the probes: the
// output file, the poller, the binaries read, the runtime.
const spareFiles = 64

// EnsureFileLimit raises RLIMIT_NOFILE so that need more descriptors can be
// opened: the soft limit up to the hard one, and the hard one too when the
// process may (root, CAP_SYS_RESOURCE). The error says how many are needed
// and how many are allowed.
func EnsureFileLimit(need int) error {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("uprobe: read RLIMIT_NOFILE: %w", err)
	}
	want := uint64(need) + spareFiles
	if lim.Cur >= want {
		return nil
	}
	if lim.Max >= want {
		lim.Cur = want
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
			return fmt.Errorf("uprobe: raise RLIMIT_NOFILE to %d: %w", want, err)
		}
		return nil
	}
	raised := unix.Rlimit{Cur: want, Max: want}
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &raised); err != nil {
		return fmt.Errorf("uprobe: %d probe events need %d file descriptors but only %d are allowed "+
			"(ulimit -Hn; raising it failed: %v): probe fewer functions (--probe-filter) or raise the hard limit",
			need, want, lim.Max, err)
	}
	return nil
}
