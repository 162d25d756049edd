package output

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Writers lock (flock(2), advisory, released when the file is closed or
// the process dies, SIGKILL included):
//
//   - the file they write, exclusively, from before it has a name until
//     it is closed: a regular file another process holds locked is being
//     written, and is never rotated or replaced;
//   - the directory, exclusively, while they look at the path and
//     rotate and create (Prepare to Commit, a few milliseconds), so that
//     two writers never both find the path free.
//
// Where a file system does not lock, or the directory cannot be opened,
// writers go on without the lock.

// dirLockWait bounds the wait for another writer's directory lock: it is
// held for milliseconds, unless that writer is stopped.
const dirLockWait = 10 * time.Second

// lockDir locks dir exclusively, waiting up to dirLockWait. It returns
// nil (and no error) where the directory cannot be opened or locked.
func lockDir(dir string) (*os.File, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, nil // a directory this user may not read: unlocked
	}
	locked, held := flockWait(d, dirLockWait, 5*time.Millisecond)
	switch {
	case held:
		by := holder(d)
		d.Close()
		return nil, fmt.Errorf("output: directory %s has been locked by %s for over %v: it is stopped, or not an hwprof", dir, by, dirLockWait)
	case !locked:
		d.Close()
		return nil, nil // no locks on this file system
	}
	return d, nil
}

// flockWait locks f exclusively, trying every poll for up to wait. locked
// is false where the file system does not lock; held is true when
// another process still held the lock at the end of the wait.
func flockWait(f *os.File, wait, poll time.Duration) (locked, held bool) {
	deadline := time.Now().Add(wait)
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		switch {
		case err == nil:
			return true, false
		case errors.Is(err, unix.EINTR):
			continue
		case !errors.Is(err, unix.EWOULDBLOCK):
			return false, false
		case time.Now().After(deadline):
			return false, true
		}
		time.Sleep(poll)
	}
}

// lockOwn locks f, the file this writer just created for path,
// exclusively. Another process may hold a shared lock on it for a moment
// (a Check's busy test of a file created in place): lockOwn waits for it,
// up to a second. Without locks on the file system it does nothing.
func lockOwn(f *os.File, path string) error {
	if _, held := flockWait(f, time.Second, time.Millisecond); held {
		return fmt.Errorf("output: %s is locked by %s", path, holder(f))
	}
	return nil
}

// busy returns an error when the regular file at path is being written:
// another process holds a lock on it that a shared lock conflicts with
// (an hwprof writing it). A file that is missing, not regular, or cannot
// be opened or locked is not busy.
func busy(path string) error {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close() // and unlocks
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	for {
		err := unix.Flock(fd, unix.LOCK_SH|unix.LOCK_NB)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if errors.Is(err, unix.EWOULDBLOCK) {
			return fmt.Errorf("output: %s is being written by %s: wait for it to end, or write to another file", path, holder(f))
		}
		return nil
	}
}

// holder names the process that holds a lock on f, from /proc/locks:
// "hwprof (pid 1234)", or "another process" when it cannot tell.
func holder(f *os.File) string {
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil {
		return "another process"
	}
	pid := lockPID(st.Dev, st.Ino)
	if pid <= 0 {
		return "another process"
	}
	comm, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return fmt.Sprintf("pid %d", pid)
	}
	return fmt.Sprintf("%s (pid %d)", strings.TrimSpace(string(comm)), pid)
}

// lockPID finds in /proc/locks the pid of an flock held on the file
// (dev, ino), 0 when none is listed. A line reads
// "1: FLOCK  ADVISORY  WRITE 1234 fe:00:10010935 0 EOF" (waiters have
// "->" after the number), the device's major and minor in hex.
func lockPID(dev, ino uint64) int {
	f, err := os.Open("/proc/locks")
	if err != nil {
		return 0
	}
	defer f.Close()
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(dev), unix.Minor(dev), ino)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[1] != "FLOCK" || fields[5] != want {
			continue
		}
		if pid, err := strconv.Atoi(fields[4]); err == nil {
			return pid
		}
	}
	return 0
}
