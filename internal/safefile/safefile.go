package safefile

import (
	"debug/elf"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrRefused is what every *RefusedError is (errors.Is).
var ErrRefused = errors.New("refused: not a regular file within its root")

// RefusedError says which file was not opened and why. Its message is the
// warning a command prints, once per file.
type RefusedError struct {
	Path string // the file as named: the root's directory and the name
	Why  string
}

func (e *RefusedError) Error() string { return "skipped " + e.Path + ": " + e.Why }

// Is makes errors.Is(err, ErrRefused) true.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

// A Root is a directory a recording's names are looked up in, which they
// cannot leave. The zero Root is the file system's root /.
type Root struct {
	dir string // "" for /
	// walk resolves names in Go (the fallback for kernels without
	// openat2), not with openat2 (tests set it to run both)
	walk bool
}

// NewRoot returns the root at dir: "" and "/" are the file system's.
func NewRoot(dir string) Root {
	if dir == "" || filepath.Clean(dir) == "/" {
		return Root{}
	}
	return Root{dir: filepath.Clean(dir)}
}

// Dir returns the root's directory.
func (r Root) Dir() string {
	if r.dir == "" {
		return "/"
	}
	return r.dir
}

// Path is the file a name means in r, as a message names it: the root's
// directory followed by the name as given (a .. in it is shown, not
// applied).
func (r Root) Path(name string) string {
	if r.dir == "" || !strings.HasPrefix(name, "/") {
		return name
	}
	return r.dir + name
}

// Open opens the regular file name (absolute, as a recording names files)
// in r for reading. The file's Name is its path on this machine with every
// symbolic link resolved, which OpenLocal opens again. It fails with a
// *RefusedError for a name that is not absolute or has a .. component, for
// a symbolic link that leads out of r, and for anything but a regular file
// on a file system of files.
func (r Root) Open(name string) (*os.File, error) { return r.open(name, false) }

// OpenOwned is Open for a file anyone may put where it is looked for (a
// perf map in /tmp): it also refuses a last component that is a symbolic
// link, and a file that belongs to neither root nor the effective user.
func (r Root) OpenOwned(name string) (*os.File, error) { return r.open(name, true) }

func (r Root) open(name string, owned bool) (*os.File, error) {
	if why := checkName(name); why != "" {
		return nil, &RefusedError{Path: r.Path(name), Why: why}
	}
	var res resolved
	var err error
	if r.walk || !haveOpenat2() {
		res, err = r.resolveWalk(name, !owned)
	} else {
		res, err = r.resolveOpenat2(name, !owned)
	}
	if err != nil {
		return nil, err
	}
	defer unix.Close(res.fd)
	st, err := check(res.fd, r.Path(name))
	if err != nil {
		return nil, err
	}
	if owned {
		if why := ownerWhy(st.Uid); why != "" {
			return nil, &RefusedError{Path: r.Path(name), Why: why}
		}
	}
	if why := pseudoFS(res.fd); why != "" {
		return nil, &RefusedError{Path: r.Path(name), Why: why}
	}
	return reopen(res.fd, st, res.path, r.Path(name), unix.O_NOFOLLOW)
}

// OpenLocal opens the regular file at path, which the caller names (not a
// recording: a relative path is the working directory's, symbolic links
// are followed, any file system will do), without blocking. It fails with
// a *RefusedError when path is not a regular file.
func OpenLocal(path string) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	st, err := check(fd, path)
	if err != nil {
		return nil, err
	}
	return reopen(fd, st, path, path, 0)
}

// OpenELF opens the regular ELF file at path as OpenLocal does. Closing
// it closes the file.
func OpenELF(path string) (*ELF, error) {
	f, err := OpenLocal(path)
	if err != nil {
		return nil, err
	}
	return NewELF(f)
}

// ELF is an ELF file read from an *os.File; Close closes both.
type ELF struct {
	*elf.File
	f *os.File
}

// NewELF reads the ELF file f holds; f is closed when it is not one.
func NewELF(f *os.File) (*ELF, error) {
	ef, err := elf.NewFile(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open %s: %w", f.Name(), err)
	}
	return &ELF{File: ef, f: f}, nil
}

// Close closes the ELF file and the file it was read from.
func (e *ELF) Close() error {
	e.File.Close()
	return e.f.Close()
}

// checkName says why a recording's name is refused, "" when it is not.
func checkName(name string) string {
	if !strings.HasPrefix(name, "/") {
		return "not an absolute path (not looked up in the working directory)"
	}
	if slices.Contains(strings.Split(name, "/"), "..") {
		return "its path has a .. component (the kernel records none)"
	}
	return ""
}

// check fstats an O_PATH descriptor of the file named path and refuses
// what is not a regular file.
func check(fd int, path string) (*unix.Stat_t, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if why := kindWhy(st.Mode); why != "" {
		return nil, &RefusedError{Path: path, Why: why}
	}
	return &st, nil
}

// kindWhy says why a file of mode m is not read, "" for a regular file.
func kindWhy(m uint32) string {
	switch m & unix.S_IFMT {
	case unix.S_IFREG:
		return ""
	case unix.S_IFIFO:
		return "a FIFO, not a regular file"
	case unix.S_IFCHR:
		return "a character device, not a regular file"
	case unix.S_IFBLK:
		return "a block device, not a regular file"
	case unix.S_IFDIR:
		return "a directory, not a regular file"
	case unix.S_IFSOCK:
		return "a socket, not a regular file"
	case unix.S_IFLNK:
		return "a symbolic link, not followed where anyone may have made it" // OpenOwned's last component
	}
	return "not a regular file"
}

// ownerWhy says why a file of owner uid that anyone may have written is
// not read, "" when root or the effective user owns it.
func ownerWhy(uid uint32) string {
	if euid := os.Geteuid(); uid != 0 && int(uid) != euid {
		return "owned by uid " + strconv.Itoa(int(uid)) + ", neither root nor the user running hwprof (uid " + strconv.Itoa(euid) + ")"
	}
	return ""
}

// pseudoFSNames are the file systems whose regular files are the kernel's
// views, not files: endless (/proc/kcore), blocking (tracefs's
// trace_pipe), another process's memory (/proc/PID/mem).
var pseudoFSNames = map[int64]string{
	unix.PROC_SUPER_MAGIC:    "procfs",
	unix.SYSFS_MAGIC:         "sysfs",
	unix.DEBUGFS_MAGIC:       "debugfs",
	unix.TRACEFS_MAGIC:       "tracefs",
	unix.SECURITYFS_MAGIC:    "securityfs",
	unix.CGROUP_SUPER_MAGIC:  "cgroupfs",
	unix.CGROUP2_SUPER_MAGIC: "cgroup2fs",
	unix.BPF_FS_MAGIC:        "bpffs",
	unix.EFIVARFS_MAGIC:      "efivarfs",
	unix.PSTOREFS_MAGIC:      "pstore",
}

// pseudoFS says why the file of descriptor fd is not read when it is on
// one of pseudoFSNames, "" when not.
func pseudoFS(fd int) string {
	var s unix.Statfs_t
	if err := unix.Fstatfs(fd, &s); err != nil {
		return ""
	}
	if name, ok := pseudoFSNames[s.Type]; ok {
		return "a file of " + name + ", the kernel's view, not a file on disk"
	}
	return ""
}

// reopen opens the regular file of the O_PATH descriptor fd (its fstat
// st) for reading, through /proc/self/fd: the same file, whatever
// happened to its name since. Without /proc it opens path (with extra
// flags) and checks that it is still the same file. The *os.File is named
// path; display names it in errors.
func reopen(fd int, st *unix.Stat_t, path, display string, extra int) (*os.File, error) {
	const flags = unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOCTTY | unix.O_NONBLOCK
	rfd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(fd), flags, 0)
	if err != nil {
		if rfd, err = unix.Open(path, flags|extra, 0); err != nil {
			return nil, &fs.PathError{Op: "open", Path: display, Err: err}
		}
	}
	var now unix.Stat_t
	if err := unix.Fstat(rfd, &now); err != nil || now.Dev != st.Dev || now.Ino != st.Ino {
		unix.Close(rfd)
		return nil, &RefusedError{Path: display, Why: "it changed while it was opened"}
	}
	return os.NewFile(uintptr(rfd), path), nil
}
