package safefile

import (
	"io/fs"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// OpenDir opens the directory name in r, resolved as Open resolves a name
// (no symbolic link leaves r), as an O_PATH descriptor: holding it keeps
// the directory, and the file system it is on, readable with
// OpenOwnedIn after the names that led to it are gone (a container's
// /tmp once the container has ended).
func (r Root) OpenDir(name string) (*os.File, error) {
	if why := checkName(name); why != "" {
		return nil, &RefusedError{Path: r.Path(name), Why: why}
	}
	var res resolved
	var err error
	if r.walk || !haveOpenat2() {
		res, err = r.resolveWalk(name, true)
	} else {
		res, err = r.resolveOpenat2(name, true)
	}
	if err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(res.fd, &st); err != nil {
		unix.Close(res.fd)
		return nil, &fs.PathError{Op: "stat", Path: r.Path(name), Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		unix.Close(res.fd)
		return nil, &RefusedError{Path: r.Path(name), Why: "not a directory"}
	}
	return os.NewFile(uintptr(res.fd), r.Path(name)), nil
}

// OpenOwnedIn is OpenOwned for the file name directly in the directory
// dir that OpenDir opened: name is one component, not a symbolic link, a
// regular file on a file system of files, owned by root or the effective
// user.
func OpenOwnedIn(dir *os.File, name string) (*os.File, error) {
	display := dir.Name() + "/" + name
	if name == "" || name == "." || name == ".." || strings.ContainsRune(name, '/') {
		return nil, &RefusedError{Path: display, Why: "not a name of one component"}
	}
	fd, err := unix.Openat(int(dir.Fd()), name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: display, Err: err}
	}
	defer unix.Close(fd)
	st, err := check(fd, display)
	if err != nil {
		return nil, err
	}
	if why := ownerWhy(st.Uid); why != "" {
		return nil, &RefusedError{Path: display, Why: why}
	}
	if why := pseudoFS(fd); why != "" {
		return nil, &RefusedError{Path: display, Why: why}
	}
	return reopen(fd, st, display, display, unix.O_NOFOLLOW)
}
