package output

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// Stdout is the path that means standard output.
const Stdout = "-"

// Kind is what a path is, for a writer.
type Kind int

const (
	// Create: the path does not exist; it is created.
	Create Kind = iota
	// Rotate: a regular file (or a link to one), rotated to .old.
	Rotate
	// Stream: standard output, a character device, a FIFO or a socket (or
	// a link to one): written as it is, in pipe mode.
	Stream
)

func (k Kind) String() string {
	switch k {
	case Create:
		return "create"
	case Rotate:
		return "rotate"
	case Stream:
		return "stream"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Output is an opened output.
type Output struct {
	File *os.File // where to write; for a stream not seekable
	Path string   // as given
	Kind Kind
	// Old is where the previous file was moved (Rotate), once committed;
	// "" otherwise.
	Old string
	// file is the file to create (Create, Rotate): the path, or the
	// target of the link it is.
	file string
	// pending: prepared but not committed, File has no name yet (an
	// O_TMPFILE inode), and dir is locked. committed: File is at file,
	// created by this Output (Discard removes it).
	pending, committed bool
	dir                *os.File // the directory, locked while pending
}

// Stream reports whether the output must be written as a stream (pipe
// mode): it cannot seek.
func (o *Output) Stream() bool { return o.Kind == Stream }

// Close closes the file (and so releases its lock); standard output is
// left open. Closing an output that was never committed drops what was
// written to it: the path stays as it was.
func (o *Output) Close() error {
	o.unlockDir()
	if o.File == nil || o.File == os.Stdout {
		return nil
	}
	return o.File.Close()
}

func (o *Output) unlockDir() {
	if o.dir != nil {
		o.dir.Close()
		o.dir = nil
	}
}

// Discard closes the output and undoes it: a file not yet committed is
// dropped, with the path and any PATH.old untouched; a committed one is
// removed and the previous file, if it was rotated, put back (an earlier
// PATH.old that the rotation replaced is not brought back). For a stream
// it only closes. Use it when the recording could not start after all.
func (o *Output) Discard() error {
	var st unix.Stat_t
	ours := o.committed && unix.Fstat(int(o.File.Fd()), &st) == nil
	err := o.Close()
	if !o.committed {
		return err
	}
	o.committed = false
	// Under the directory's lock, as every change of the path is.
	dir, lerr := lockDir(filepath.Dir(o.file))
	if lerr != nil {
		return errors.Join(err, fmt.Errorf("output: discard: %w", lerr))
	}
	defer func() {
		if dir != nil {
			dir.Close()
		}
	}()
	var now unix.Stat_t
	if !ours || unix.Lstat(o.file, &now) != nil || now.Dev != st.Dev || now.Ino != st.Ino {
		return errors.Join(err, fmt.Errorf("output: discard: %s is no longer the file this recording created: left as it is", o.file))
	}
	if rerr := os.Remove(o.file); rerr != nil {
		return errors.Join(err, fmt.Errorf("output: discard: %w", rerr))
	}
	if o.Old != "" {
		if rerr := os.Rename(o.Old, o.file); rerr != nil {
			return errors.Join(err, fmt.Errorf("output: put back %s: %w", o.Old, rerr))
		}
	}
	return err
}

// plan is what Check found: the kind, and for Create and Rotate the path
// of the file to create (the link's target for a link).
type plan struct {
	kind Kind
	file string
}

// Check returns what Open would do with path, or the error Open would
// return before writing anything, without changing anything.
//
// A regular file that Open would rotate (or the PATH.old it would
// replace) and that another process is writing is an error naming that
// process, as in Prepare.
func Check(path string) (Kind, error) {
	p, err := check(path)
	if err == nil {
		err = busyFiles(p)
	}
	return p.kind, err
}

func check(path string) (plan, error) {
	if path == Stdout {
		return plan{kind: Stream}, nil
	}
	if path == "" {
		return plan{}, errors.New("output: empty path")
	}
	lfi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return plan{kind: Create, file: path}, nil
	}
	if err != nil {
		return plan{}, fmt.Errorf("output: %w", err)
	}
	fi := lfi
	file := path
	if lfi.Mode()&fs.ModeSymlink != 0 {
		// Stat follows links the way open(2) does, including /proc's
		// links to pipes and sockets (/dev/stdout).
		if fi, err = os.Stat(path); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return plan{}, fmt.Errorf("output: %s is a symbolic link to a file that does not exist", path)
			}
			return plan{}, fmt.Errorf("output: %w", err)
		}
		if fi.Mode().IsRegular() {
			if file, err = filepath.EvalSymlinks(path); err != nil {
				return plan{}, fmt.Errorf("output: %w", err)
			}
		}
	}
	m := fi.Mode()
	switch {
	case m.IsRegular():
		return plan{kind: Rotate, file: file}, checkOld(file)
	case m.IsDir():
		return plan{}, fmt.Errorf("output: %s is a directory: give a file name", path)
	case m&fs.ModeCharDevice != 0, m&fs.ModeNamedPipe != 0, m&fs.ModeSocket != 0:
		return plan{kind: Stream}, nil
	case m&fs.ModeDevice != 0:
		return plan{}, fmt.Errorf("output: %s is a block device: hwprof does not write recordings onto disks", path)
	}
	return plan{}, fmt.Errorf("output: %s is neither a file nor a stream (%v)", path, m.Type())
}

// checkOld refuses a rotation whose .old exists and is not a regular
// file: renaming onto it would replace a directory, a device or a link.
func checkOld(file string) error {
	old := file + ".old"
	fi, err := os.Lstat(old)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("output: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("output: cannot keep the previous %s as %s: %s exists and is not a regular file (%v)",
			file, old, old, fi.Mode().Type())
	}
	return nil
}

// Open opens path for writing by the package's rules: it rotates a
// regular file to .old and creates a new one, opens a stream as it is, and
// refuses the rest (see the package documentation). It is Prepare and
// Commit at once.
func Open(path string) (*Output, error) {
	o, err := Prepare(path)
	if err != nil {
		return nil, err
	}
	if err := o.Commit(); err != nil {
		return nil, errors.Join(err, o.Discard())
	}
	return o, nil
}

// Prepare opens path for writing as Open does, but leaves the path as it
// is until Commit: the file is created without a name (O_TMPFILE) in the
// path's directory, locked, and the directory stays locked until Commit
// or Discard, so that no other writer takes the path meanwhile. A stream
// is opened as it is. A regular file at path (or at PATH.old) that another
// process is writing is an error naming that process. Where the file
// system cannot create a file without a name, Prepare commits at once.
func Prepare(path string) (*Output, error) {
	p, err := check(path)
	if err != nil {
		return nil, err
	}
	o := &Output{Path: path, Kind: p.kind, file: p.file}
	if p.kind == Stream {
		if o.File, err = openStream(path); err != nil {
			return nil, err
		}
		return o, nil
	}
	if o.dir, err = lockDir(filepath.Dir(p.file)); err != nil {
		return nil, err
	}
	// Under the directory's lock no other writer rotates or creates here:
	// a file locked now is being written.
	if err := busyFiles(p); err != nil {
		o.unlockDir()
		return nil, err
	}
	f, err := createUnnamed(p.file)
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EISDIR) {
		// No O_TMPFILE here: rotate and create in place now.
		o.pending = true
		if err := o.Commit(); err != nil {
			o.unlockDir()
			return nil, err
		}
		return o, nil
	}
	if err != nil {
		o.unlockDir()
		return nil, fmt.Errorf("output: create %s: %w", p.file, err)
	}
	if err := lockOwn(f, p.file); err != nil {
		f.Close()
		o.unlockDir()
		return nil, err
	}
	o.File, o.pending = f, true
	return o, nil
}

// createUnnamed creates a file without a name (O_TMPFILE) in the
// directory of file, named file for the *os.File's messages.
func createUnnamed(file string) (*os.File, error) {
	fd, err := unix.Open(filepath.Dir(file), unix.O_RDWR|unix.O_TMPFILE|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), file), nil
}

// busyFiles returns the error of busy for the file a rotation renames,
// or the PATH.old it replaces.
func busyFiles(p plan) error {
	if p.kind != Rotate {
		return nil
	}
	if err := busy(p.file); err != nil {
		return err
	}
	return busy(p.file + ".old")
}

// Commit gives a prepared output its path: a regular file there is
// rotated to .old, and the new file linked in its place. A rotation or
// link that fails is an error and leaves the previous file where it was
// (the output stays prepared: Discard it). Commit does nothing for a
// stream or an output already committed.
func (o *Output) Commit() error {
	if !o.pending {
		return nil
	}
	// What Prepare found may have been changed by something other than
	// a writer (writers wait for the directory's lock): look again.
	p, err := check(o.Path)
	if err == nil && (p.kind == Stream || p.file != o.file) {
		err = fmt.Errorf("output: %s changed while the recording started", o.Path)
	}
	if err == nil {
		err = busyFiles(p)
	}
	if err != nil {
		return err
	}
	if p.kind == Rotate {
		if err := os.Rename(o.file, o.file+".old"); err != nil {
			return fmt.Errorf("output: keep the previous %s: %w", o.file, err)
		}
		o.Old = o.file + ".old"
	}
	if err := o.link(); err != nil {
		err = fmt.Errorf("output: create: %w", err)
		if o.Old != "" {
			if rerr := os.Rename(o.Old, o.file); rerr != nil {
				err = errors.Join(err, fmt.Errorf("output: put back %s: %w", o.Old, rerr))
			}
			o.Old = ""
		}
		return err
	}
	o.pending, o.committed = false, true
	o.unlockDir()
	return nil
}

// link names the prepared file o.file, never replacing anything that
// appeared there; without a prepared file (no O_TMPFILE), it creates and
// locks one in place.
func (o *Output) link() error {
	if o.File == nil {
		f, err := os.OpenFile(o.file, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		if err := lockOwn(f, o.file); err != nil {
			f.Close()
			os.Remove(o.file)
			return err
		}
		o.File = f
		return nil
	}
	// The documented way to name an O_TMPFILE file (open(2)); linkat
	// fails with EEXIST rather than replace anything.
	proc := "/proc/self/fd/" + strconv.Itoa(int(o.File.Fd()))
	err := unix.Linkat(unix.AT_FDCWD, proc, unix.AT_FDCWD, o.file, unix.AT_SYMLINK_FOLLOW)
	if errors.Is(err, unix.ENOENT) { // no /proc
		err = unix.Linkat(int(o.File.Fd()), "", unix.AT_FDCWD, o.file, unix.AT_EMPTY_PATH)
	}
	if err != nil {
		return &os.LinkError{Op: "link", Old: proc, New: o.file, Err: err}
	}
	return nil
}

// openStream opens standard output, a device, a FIFO (blocking until a
// reader opens it, as a shell's redirection does) or a Unix socket
// (connecting to it), without creating or truncating anything.
func openStream(path string) (*os.File, error) {
	if path == Stdout {
		return os.Stdout, nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("output: %w", err)
	}
	if fi.Mode()&fs.ModeSocket != 0 {
		return dialSocket(path)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, fmt.Errorf("output: open %s: %w", path, err)
	}
	// The path may have been replaced since it was checked: write only
	// into what is still a stream.
	if st, err := f.Stat(); err != nil || st.Mode().IsRegular() || st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("output: %s changed while it was opened", path)
	}
	return f, nil
}

// dialSocket connects to a Unix stream socket and returns the connection
// as a blocking file.
func dialSocket(path string) (*os.File, error) {
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("output: connect to socket %s: %w", path, err)
	}
	defer c.Close()
	f, err := c.File() // a duplicate, in blocking mode
	if err != nil {
		return nil, fmt.Errorf("output: socket %s: %w", path, err)
	}
	return f, nil
}

// SharesStdout reports whether writing to path writes where standard
// output goes (path "-", or the same pipe, socket or file as standard
// output), so that a program run beside the recording must not write its
// own output there: it would be mixed into the data. A character device
// (a terminal, /dev/null) is not counted: nothing reads data back from
// it.
func SharesStdout(path string) bool {
	if path == Stdout {
		return true
	}
	var out, st unix.Stat_t
	if unix.Fstat(int(os.Stdout.Fd()), &out) != nil || unix.Stat(path, &st) != nil {
		return false
	}
	if out.Mode&unix.S_IFMT == unix.S_IFCHR {
		return false
	}
	return out.Dev == st.Dev && out.Ino == st.Ino
}
