package safefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// resolved is a name resolved in a root, or a directory the walk has
// passed: an O_PATH descriptor of the file (the caller closes it) and its
// path with no symbolic link in it.
type resolved struct {
	fd   int
	path string
}

// maxLinks is the number of symbolic links a name may pass through, as
// the kernel's limit (MAXSYMLINKS).
const maxLinks = 40

// haveOpenat2 says whether the kernel has openat2 (Linux 5.6) and lets
// this process use it (a seccomp filter may not).
var haveOpenat2 = sync.OnceValue(func() bool {
	fd, err := unix.Openat2(unix.AT_FDCWD, "/", &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT})
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
})

// openRoot opens the root's directory as an O_PATH descriptor.
func (r Root) openRoot() (int, error) {
	fd, err := unix.Open(r.Dir(), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &fs.PathError{Op: "open root", Path: r.Dir(), Err: err}
	}
	return fd, nil
}

// resolveOpenat2 resolves name in r with openat2: beneath the root first,
// then, when a symbolic link leads out of it, in the root as a chroot
// would; a link that led out and names nothing in the root is refused.
// follow says whether a last component that is a symbolic link is
// followed.
func (r Root) resolveOpenat2(name string, follow bool) (resolved, error) {
	dfd, err := r.openRoot()
	if err != nil {
		return resolved{}, err
	}
	defer unix.Close(dfd)
	flags := uint64(unix.O_PATH | unix.O_CLOEXEC)
	if !follow {
		flags |= unix.O_NOFOLLOW
	}
	rel := strings.TrimLeft(name, "/")
	if rel == "" {
		rel = "."
	}
	const in = unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS
	var fd int
	if r.dir == "" { // nothing to leave: / is every absolute link's root
		fd, err = openat2(dfd, rel, flags, in)
	} else if fd, err = openat2(dfd, rel, flags, unix.RESOLVE_BENEATH|unix.RESOLVE_NO_MAGICLINKS); err == unix.EXDEV {
		if fd, err = openat2(dfd, rel, flags, in); errors.Is(err, unix.ENOENT) {
			return resolved{}, r.leadsOut(name)
		}
	}
	if err != nil {
		return resolved{}, &fs.PathError{Op: "open", Path: r.Path(name), Err: err}
	}
	path, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil || !strings.HasPrefix(path, "/") { // no /proc: the walk knows the path
		unix.Close(fd)
		return r.resolveWalk(name, follow)
	}
	return resolved{fd: fd, path: path}, nil
}

// openat2 is unix.Openat2, tried again while the kernel says a rename or
// a mount raced with it (EAGAIN).
func openat2(dfd int, path string, flags, resolve uint64) (int, error) {
	how := &unix.OpenHow{Flags: flags, Resolve: resolve}
	for range 16 {
		fd, err := unix.Openat2(dfd, path, how)
		if err != unix.EAGAIN {
			return fd, err
		}
	}
	return -1, unix.EAGAIN
}

// resolveWalk resolves name in r one component at a time, as
// resolveOpenat2 does: every component is opened with O_PATH|O_NOFOLLOW
// relative to the descriptor of the directory before it; .. takes the
// walk back to that directory's own descriptor (never above the root),
// and a symbolic link's target is walked from its directory (from the
// root for an absolute one).
func (r Root) resolveWalk(name string, follow bool) (resolved, error) {
	base := r.Dir()
	if r.dir != "" { // the root's own path may pass links: it is the caller's
		var err error
		if base, err = filepath.EvalSymlinks(r.dir); err != nil {
			return resolved{}, &fs.PathError{Op: "open root", Path: r.dir, Err: err}
		}
		if base, err = filepath.Abs(base); err != nil {
			return resolved{}, &fs.PathError{Op: "open root", Path: r.dir, Err: err}
		}
	}
	dfd, err := NewRoot(base).openRoot()
	if err != nil {
		return resolved{}, err
	}
	w := walk{r: r, name: name, stack: []resolved{{fd: dfd, path: base}}}
	defer w.close()
	switch { // as openat2 has them
	case strings.IndexByte(name, 0) >= 0:
		return resolved{}, w.fail(unix.EINVAL)
	case len(strings.TrimLeft(name, "/")) >= unix.PathMax:
		return resolved{}, w.fail(unix.ENAMETOOLONG)
	}
	return w.run(strings.Split(name, "/"), follow)
}

// walk is the state of resolveWalk.
type walk struct {
	r     Root
	name  string
	stack []resolved // the root first; each directory below the one before
	links int
	// escaped says a link led above the root (or was absolute in a root
	// that is not /): what it names, if anything, is the root's
	escaped bool
}

func (w *walk) close() {
	for _, d := range w.stack {
		unix.Close(d.fd)
	}
}

func (w *walk) fail(err error) error {
	if w.escaped && errors.Is(err, unix.ENOENT) {
		return w.r.leadsOut(w.name)
	}
	return &fs.PathError{Op: "open", Path: w.r.Path(w.name), Err: err}
}

func (w *walk) run(todo []string, follow bool) (resolved, error) {
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(w.stack) > 1 {
				unix.Close(w.stack[len(w.stack)-1].fd)
				w.stack = w.stack[:len(w.stack)-1]
			} else if w.r.dir != "" {
				w.escaped = true
			}
			continue
		}
		dir := w.stack[len(w.stack)-1]
		fd, err := unix.Openat(dir.fd, c, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return resolved{}, w.fail(err)
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return resolved{}, w.fail(err)
		}
		// a last component followed by / (or /.) must be a directory, as
		// the kernel has it, and a link there is followed
		last, trailing := !hasComponent(todo), len(todo) > 0
		switch mode := st.Mode & unix.S_IFMT; {
		case mode == unix.S_IFLNK && (follow || !last || trailing):
			target, err := readlink(fd)
			unix.Close(fd)
			if err != nil {
				return resolved{}, w.fail(err)
			}
			if w.links++; w.links > maxLinks {
				return resolved{}, w.fail(unix.ELOOP)
			}
			if strings.HasPrefix(target, "/") {
				w.toRoot()
			}
			todo = append(strings.Split(target, "/"), todo...)
		case last && (!trailing || mode == unix.S_IFDIR):
			return resolved{fd: fd, path: filepath.Join(dir.path, c)}, nil
		case mode == unix.S_IFDIR && !last:
			w.stack = append(w.stack, resolved{fd: fd, path: filepath.Join(dir.path, c)})
		default:
			unix.Close(fd)
			return resolved{}, w.fail(unix.ENOTDIR)
		}
	}
	// the name is a directory (the root itself, or it ends in / or ..)
	top := w.stack[len(w.stack)-1]
	fd, err := unix.Dup(top.fd)
	if err != nil {
		return resolved{}, w.fail(err)
	}
	return resolved{fd: fd, path: top.path}, nil
}

// toRoot takes the walk back to the root, for an absolute link's target.
func (w *walk) toRoot() {
	for _, d := range w.stack[1:] {
		unix.Close(d.fd)
	}
	w.stack = w.stack[:1]
	if w.r.dir != "" {
		w.escaped = true
	}
}

// hasComponent says whether a rest of a name names anything more than
// the directory it is in.
func hasComponent(todo []string) bool {
	for _, c := range todo {
		if c != "" && c != "." {
			return true
		}
	}
	return false
}

// readlink reads the target of the symbolic link an O_PATH descriptor
// holds.
func readlink(fd int) (string, error) {
	for n := 256; ; n *= 2 {
		buf := make([]byte, n)
		m, err := unix.Readlinkat(fd, "", buf)
		if err != nil {
			return "", err
		}
		if m < n {
			return string(buf[:m]), nil
		}
	}
}

// leadsOut is the refusal of name, whose symbolic links lead out of r.
func (r Root) leadsOut(name string) error {
	return &RefusedError{Path: r.Path(name), Why: "a symbolic link leads out of " + r.Dir()}
}
