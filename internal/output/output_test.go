package output

import (
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func content(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// openWrite opens path, writes s, closes it, and returns the Output.
func openWrite(t *testing.T, path, s string) *Output {
	t.Helper()
	o, err := Open(path)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	if _, err := io.WriteString(o.File, s); err != nil {
		t.Fatal(err)
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	return o
}

func TestMissingIsCreated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new.data")
	o := openWrite(t, path, "new")
	if o.Kind != Create || o.Old != "" || content(t, path) != "new" {
		t.Errorf("kind %v, old %q, content %q", o.Kind, o.Old, content(t, path))
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode())
	}
}

func TestRegularFileIsRotated(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rec.data")
	write(t, path, "first")
	write(t, path+".old", "older") // an earlier .old, a regular file, is replaced
	o := openWrite(t, path, "second")
	if o.Kind != Rotate || o.Old != path+".old" {
		t.Errorf("kind %v, old %q", o.Kind, o.Old)
	}
	if content(t, path) != "second" || content(t, path+".old") != "first" {
		t.Errorf("new %q, old %q; want second, first", content(t, path), content(t, path+".old"))
	}
}

// A link to a regular file stays a link: the file it names is rotated
// and created anew, so the link names the new recording.
func TestLinkToRegularFile(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.data")
	link := filepath.Join(dir, "link.data")
	write(t, target, "first")
	if err := os.Symlink("real.data", link); err != nil {
		t.Fatal(err)
	}
	o := openWrite(t, link, "second")
	if o.Kind != Rotate || o.Old != target+".old" {
		t.Errorf("kind %v, old %q; want rotate to %s", o.Kind, o.Old, target+".old")
	}
	if dest, err := os.Readlink(link); err != nil || dest != "real.data" {
		t.Errorf("link now %q, %v; want it unchanged", dest, err)
	}
	if content(t, link) != "second" || content(t, target+".old") != "first" {
		t.Errorf("through the link %q, old %q", content(t, link), content(t, target+".old"))
	}
	if _, err := os.Lstat(link + ".old"); err == nil {
		t.Errorf("%s.old was made: the link was rotated", link)
	}
}

func TestDevNullIsAStream(t *testing.T) {
	var before unix.Stat_t
	if err := unix.Stat(os.DevNull, &before); err != nil || before.Mode&unix.S_IFMT != unix.S_IFCHR {
		t.Skipf("%s is not a character device here", os.DevNull)
	}
	link := filepath.Join(t.TempDir(), "null.data")
	if err := os.Symlink(os.DevNull, link); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{os.DevNull, link} {
		if k, err := Check(path); k != Stream || err != nil {
			t.Errorf("Check(%s) = %v, %v; want stream", path, k, err)
		}
		o := openWrite(t, path, "data")
		if o.Kind != Stream || o.Old != "" {
			t.Errorf("%s: kind %v, old %q", path, o.Kind, o.Old)
		}
	}
	var after unix.Stat_t
	if err := unix.Stat(os.DevNull, &after); err != nil || after.Mode != before.Mode || after.Rdev != before.Rdev || after.Ino != before.Ino {
		t.Errorf("%s changed: mode %o rdev %d ino %d, was %o %d %d", os.DevNull, after.Mode, after.Rdev, after.Ino, before.Mode, before.Rdev, before.Ino)
	}
	if dest, err := os.Readlink(link); err != nil || dest != os.DevNull {
		t.Errorf("the link now names %q (%v)", dest, err)
	}
	if _, err := os.Lstat(os.DevNull + ".old"); err == nil {
		t.Errorf("%s.old exists", os.DevNull)
	}
}

func TestFIFOIsAStream(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fifo")
	if err := unix.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		f, err := os.Open(path) // blocks until the writer opens
		if err != nil {
			got <- err.Error()
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- string(b)
	}()
	o := openWrite(t, path, "through the fifo")
	if o.Kind != Stream {
		t.Errorf("kind %v, want stream", o.Kind)
	}
	if s := <-got; s != "through the fifo" {
		t.Errorf("the reader got %q", s)
	}
	if fi, err := os.Lstat(path); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("the FIFO is gone or replaced: %v %v", fi.Mode(), err)
	}
}

func TestSocketIsAStream(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got := make(chan string, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			got <- err.Error()
			return
		}
		defer c.Close()
		b, _ := io.ReadAll(c)
		got <- string(b)
	}()
	o := openWrite(t, path, "through the socket")
	if o.Kind != Stream {
		t.Errorf("kind %v, want stream", o.Kind)
	}
	if s := <-got; s != "through the socket" {
		t.Errorf("the listener got %q", s)
	}
	if fi, err := os.Lstat(path); err != nil || fi.Mode()&fs.ModeSocket == 0 {
		t.Errorf("the socket is gone or replaced: %v %v", fi.Mode(), err)
	}
}

func TestStdout(t *testing.T) {
	o, err := Open(Stdout)
	if err != nil || o.Kind != Stream || o.File != os.Stdout {
		t.Fatalf("Open(-) = %+v, %v", o, err)
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stdout.Stat(); err != nil {
		t.Errorf("Close closed standard output: %v", err)
	}
	if !SharesStdout(Stdout) {
		t.Error("SharesStdout(-) = false")
	}
}

// What Open refuses, it leaves as it was.
func TestRefused(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "dir")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(sub, "inside"), "x")
	dirLink := filepath.Join(dir, "dirlink")
	dangling := filepath.Join(dir, "dangling")
	for _, err := range []error{os.Symlink(sub, dirLink), os.Symlink(filepath.Join(dir, "nowhere"), dangling)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ path, want string }{
		{sub, "is a directory"},
		{dirLink, "is a directory"},
		{dangling, "does not exist"},
		{"", "empty path"},
	} {
		if _, err := Check(tc.path); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Check(%q): %v, want %q", tc.path, err, tc.want)
		}
		if o, err := Open(tc.path); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open(%q): %+v, %v, want %q", tc.path, o, err, tc.want)
		}
	}
	if content(t, filepath.Join(sub, "inside")) != "x" {
		t.Error("the directory's content changed")
	}
	if _, err := os.Lstat(filepath.Join(dir, "nowhere")); err == nil {
		t.Error("the dangling link's target was created")
	}
	if _, err := os.Lstat(sub + ".old"); err == nil {
		t.Error("the directory was rotated")
	}
}

func TestBlockDeviceRefused(t *testing.T) {
	var dev string
	entries, _ := os.ReadDir("/dev")
	for _, e := range entries {
		if e.Type()&fs.ModeDevice != 0 && e.Type()&fs.ModeCharDevice == 0 {
			dev = filepath.Join("/dev", e.Name())
			break
		}
	}
	if dev == "" {
		t.Skip("no block device under /dev")
	}
	if _, err := Check(dev); err == nil || !strings.Contains(err.Error(), "block device") {
		t.Errorf("Check(%s): %v, want a block-device error", dev, err)
	}
}

// A rotation that cannot keep the previous file is an error, and the file
// stays where it was.
func TestRotationFailureKeepsFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rec.data")
	write(t, path, "previous")
	if err := os.Mkdir(path+".old", 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(path+".old", "x"), "x")
	other := filepath.Join(dir, "other.data")
	write(t, other, "previous")
	if err := os.Symlink(os.DevNull, other+".old"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, other} {
		if _, err := Check(p); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("Check(%s): %v, want a not-a-regular-file error", p, err)
		}
		if _, err := Open(p); err == nil {
			t.Errorf("Open(%s): no error", p)
		}
		if content(t, p) != "previous" {
			t.Errorf("%s: content %q, want it kept", p, content(t, p))
		}
	}
	if content(t, filepath.Join(path+".old", "x")) != "x" {
		t.Error("the .old directory changed")
	}
	if dest, _ := os.Readlink(other + ".old"); dest != os.DevNull {
		t.Errorf("the .old link now names %q", dest)
	}
}

// A rename the kernel refuses is an error, and the file stays. As root
// (which ignores directory permissions) the file is made a mount point,
// which rename refuses with EBUSY; otherwise the directory is made
// read-only.
func TestRenameErrorIsReported(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rec.data")
	write(t, path, "previous")
	if os.Geteuid() == 0 {
		src := filepath.Join(dir, "src")
		write(t, src, "previous")
		if err := unix.Mount(src, path, "", unix.MS_BIND, ""); err != nil {
			t.Skipf("root, but cannot bind-mount a file here: %v", err)
		}
		defer unix.Unmount(path, 0)
	} else {
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(dir, 0o755)
	}
	if _, err := Open(path); err == nil || !strings.Contains(err.Error(), "keep the previous") {
		t.Errorf("Open: %v, want the rename's error", err)
	}
	if content(t, path) != "previous" {
		t.Error("the file changed")
	}
	if _, err := os.Lstat(path + ".old"); err == nil {
		t.Error(".old exists")
	}
}

func TestDiscardPutsBack(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rec.data")
	write(t, path, "previous")
	o, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(o.File, "half")
	if err := o.Discard(); err != nil {
		t.Fatal(err)
	}
	if content(t, path) != "previous" {
		t.Errorf("after Discard: %q, want the previous file back", content(t, path))
	}
	if _, err := os.Lstat(path + ".old"); err == nil {
		t.Error(".old left behind")
	}
	fresh := filepath.Join(dir, "fresh.data")
	o, err = Open(fresh)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Discard(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(fresh); err == nil {
		t.Error("Discard left the created file")
	}
}

// Check changes nothing.
func TestCheckTouchesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rec.data")
	write(t, path, "previous")
	if k, err := Check(path); k != Rotate || err != nil {
		t.Fatalf("Check = %v, %v", k, err)
	}
	if k, err := Check(filepath.Join(dir, "none")); k != Create || err != nil {
		t.Fatalf("Check(missing) = %v, %v", k, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || content(t, path) != "previous" {
		t.Errorf("after Check: %d entries, content %q", len(entries), content(t, path))
	}
}

func TestSharesStdout(t *testing.T) {
	// The test's standard output is whatever go test gives it; a fresh
	// file is never it.
	path := filepath.Join(t.TempDir(), "x")
	write(t, path, "")
	if SharesStdout(path) {
		t.Error("a new file shares standard output")
	}
	if SharesStdout(os.DevNull) {
		t.Error("a character device counts as standard output")
	}
}

// A prepared output leaves the path and its .old as they were until
// Commit: a Discard before then changes nothing, an earlier .old
// included.
func TestPrepareTouchesNothingUntilCommit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rec.data")
	write(t, path, "previous")
	write(t, path+".old", "older")
	unchanged := func(when string) {
		t.Helper()
		entries, _ := os.ReadDir(dir)
		if len(entries) != 2 || content(t, path) != "previous" || content(t, path+".old") != "older" {
			t.Errorf("%s: %d entries, %q, %q; want the two files as they were", when, len(entries), content(t, path), content(t, path+".old"))
		}
	}
	o, err := Prepare(path)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(o.File, "half")
	unchanged("prepared")
	if err := o.Discard(); err != nil {
		t.Fatal(err)
	}
	unchanged("discarded before commit")

	o, err = Prepare(path)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(o.File, "new")
	unchanged("prepared again")
	if err := o.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	if o.Old != path+".old" || content(t, path) != "new" || content(t, path+".old") != "previous" {
		t.Errorf("committed: old %q, %q, %q; want new, previous", o.Old, content(t, path), content(t, path+".old"))
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode())
	}
}

// A file being written (locked by its writer) is neither rotated nor
// replaced: Check, Prepare and Open refuse it, naming the writer, and so
// they do a PATH.old being written. Once the writer closes, the file is
// rotated as any other.
func TestFileBeingWrittenRefused(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rec.data")
	first := openWrite(t, path, "first") // closed: a finished recording
	if first.Old != "" {
		t.Fatalf("old %q", first.Old)
	}
	writer, err := Open(path) // rotates first, and writes
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(writer.File, "being written")
	want := fmt.Sprintf("%s is being written by", path)
	pid := fmt.Sprintf("pid %d", os.Getpid())
	if _, err := Check(path); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), pid) {
		t.Errorf("Check: %v; want %q naming %s", err, want, pid)
	}
	if _, err := Prepare(path); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Prepare: %v; want %q", err, want)
	}
	if _, err := Open(path); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Open: %v; want %q", err, want)
	}
	if content(t, path) != "being written" || content(t, path+".old") != "first" {
		t.Errorf("%q, %q; want both files kept", content(t, path), content(t, path+".old"))
	}

	if err := writer.Close(); err != nil {
		t.Fatal(err)
	}
	o := openWrite(t, path, "third")
	if o.Old != path+".old" || content(t, path+".old") != "being written" {
		t.Errorf("after the writer closed: old %q holds %q; want the finished recording", o.Old, content(t, path+".old"))
	}

	// A recording written to PATH.old is not replaced by a rotation to it.
	oldWriter, err := Open(path + ".old")
	if err != nil {
		t.Fatal(err)
	}
	defer oldWriter.Close()
	io.WriteString(oldWriter.File, "written as .old")
	if _, err := Open(path); err == nil || !strings.Contains(err.Error(), path+".old is being written by") {
		t.Errorf("Open while %s.old is being written: %v", path, err)
	}
	if content(t, path) != "third" || content(t, path+".old") != "written as .old" {
		t.Errorf("%q, %q; want both kept", content(t, path), content(t, path+".old"))
	}
}
