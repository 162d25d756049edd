package output

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"

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
	// Old is where the previous file was moved (Rotate), "" otherwise.
	Old string
	// created is the file this Open created (Create, Rotate): Discard
	// removes it.
	created string
}

// Stream reports whether the output must be written as a stream (pipe
// mode): it cannot seek.
func (o *Output) Stream() bool { return o.Kind == Stream }

// Close closes the file; standard output is left open.
func (o *Output) Close() error {
	if o.File == os.Stdout {
		return nil
	}
	return o.File.Close()
}

// Discard closes the output and undoes Open: a file it created is removed
// and the previous file, if Open rotated one, is put back. For a stream
// it only closes. Use it when the recording could not start after all.
// An earlier PATH.old that the rotation replaced is not brought back.
func (o *Output) Discard() error {
	err := o.Close()
	if o.created == "" {
		return err
	}
	if rerr := os.Remove(o.created); rerr != nil {
		return errors.Join(err, fmt.Errorf("output: discard: %w", rerr))
	}
	if o.Old != "" {
		if rerr := os.Rename(o.Old, o.created); rerr != nil {
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
func Check(path string) (Kind, error) {
	p, err := check(path)
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

// Open opens path for writing a recording by the package's rules: it
// rotates a regular file to .old and creates a new one, opens a stream as
// it is, and refuses the rest (see the package documentation).
func Open(path string) (*Output, error) {
	p, err := check(path)
	if err != nil {
		return nil, err
	}
	o := &Output{Path: path, Kind: p.kind}
	switch p.kind {
	case Stream:
		o.File, err = openStream(path)
		if err != nil {
			return nil, err
		}
		return o, nil
	case Rotate:
		o.Old = p.file + ".old"
		if err := os.Rename(p.file, o.Old); err != nil {
			return nil, fmt.Errorf("output: keep the previous %s: %w", p.file, err)
		}
	}
	// O_EXCL: whatever appeared at the path since it was checked is not
	// overwritten.
	f, err := os.OpenFile(p.file, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		err = fmt.Errorf("output: create: %w", err)
		if o.Old != "" {
			if rerr := os.Rename(o.Old, p.file); rerr != nil {
				err = errors.Join(err, fmt.Errorf("output: put back %s: %w", o.Old, rerr))
			}
		}
		return nil, err
	}
	o.File, o.created = f, p.file
	return o, nil
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
