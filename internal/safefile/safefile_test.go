package safefile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// testRoot makes a root of every kind of entry a recording may lead to,
// and a file out of it; it returns the root's directory.
func testRoot(t testing.TB) string {
	t.Helper()
	tmp := t.TempDir()
	root := filepath.Join(tmp, "root")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"root/a/d", "root/lib", "outside"} {
		must(os.MkdirAll(filepath.Join(tmp, d), 0o755))
	}
	must(os.WriteFile(filepath.Join(root, "a/f"), []byte("in the root"), 0o644))
	must(os.WriteFile(filepath.Join(root, "lib/libc.so.6.1"), []byte("a library"), 0o644))
	must(os.WriteFile(filepath.Join(tmp, "outside/x"), []byte("out of the root"), 0o644))
	links := map[string]string{
		"a/in":       "f",                             // relative, in the root
		"a/abs":      "/a/f",                          // absolute: read in the root
		"a/out":      filepath.Join(tmp, "outside/x"), // absolute, out of the root
		"a/up":       "../../outside/x",               // climbs out of the root
		"a/uproot":   "../../../a/f",                  // climbs above the root, back into it
		"a/loop1":    "loop2",
		"a/loop2":    "loop1",
		"a/dangling": "nothing",
		"a/todir":    "d",
		"a/magic":    "/proc/self/fd/0",
		"lib/libc":   "/lib/libc.so.6.1", // a sysroot's absolute library link
		"lnk":        "a",
	}
	for name, target := range links {
		must(os.Symlink(target, filepath.Join(root, name)))
	}
	must(unix.Mkfifo(filepath.Join(root, "a/p"), 0o644))
	if os.Geteuid() == 0 {
		must(unix.Mknod(filepath.Join(root, "a/dev"), unix.S_IFCHR|0o644, int(unix.Mkdev(1, 3))))
	}
	return root
}

// outcome is what opening one name gives, in terms both resolvers must
// agree on.
type outcome struct {
	path  string // the file's Name when opened, relative to the root
	why   string // a refusal's reason
	errno error  // another error's
}

func (o outcome) String() string {
	switch {
	case o.why != "":
		return "refused: " + o.why
	case o.errno != nil:
		return "error: " + o.errno.Error()
	}
	return "opened " + o.path
}

// openOutcome opens name in r (OpenOwned when owned), failing the test when
// it does not return within a few seconds, and checks what it opened.
func openOutcome(t testing.TB, r Root, base, name string, owned bool) outcome {
	t.Helper()
	type res struct {
		f   *os.File
		err error
	}
	done := make(chan res, 1)
	go func() {
		var x res
		if owned {
			x.f, x.err = r.OpenOwned(name)
		} else {
			x.f, x.err = r.Open(name)
		}
		done <- x
	}()
	var x res
	select {
	case x = <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("Open(%q) blocked", name)
	}
	var o outcome
	var re *RefusedError
	var pe *fs.PathError
	switch {
	case x.err == nil:
		defer x.f.Close()
		rel, err := filepath.Rel(base, x.f.Name())
		if err != nil || strings.HasPrefix(rel, "..") {
			t.Fatalf("Open(%q) opened %s, out of the root %s", name, x.f.Name(), base)
		}
		var st unix.Stat_t
		if err := unix.Fstat(int(x.f.Fd()), &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
			t.Fatalf("Open(%q) opened a file of mode %o (%v)", name, st.Mode, err)
		}
		o.path = rel
	case errors.As(x.err, &re):
		if !errors.Is(x.err, ErrRefused) || !strings.HasPrefix(x.err.Error(), "skipped ") {
			t.Errorf("Open(%q): %v does not match ErrRefused or say skipped", name, x.err)
		}
		o.why = re.Why
	case errors.As(x.err, &pe):
		o.errno = pe.Err
	default:
		t.Fatalf("Open(%q): %v (%T): neither a refusal nor a *fs.PathError", name, x.err, x.err)
	}
	return o
}

// TestRootOpen opens every kind of entry in a root, with openat2 (where
// the kernel has it) and with the walk that stands in for it, which must
// agree.
func TestRootOpen(t *testing.T) {
	t.Parallel()
	root := testRoot(t)
	base, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	opened := func(p string) outcome { return outcome{path: p} }
	refused := func(why string) outcome { return outcome{why: why} }
	failed := func(e error) outcome { return outcome{errno: e} }
	out := "a symbolic link leads out of " + root
	tests := []struct {
		name  string
		owned bool
		want  outcome
	}{
		{"/a/f", false, opened("a/f")},
		{"//a/./f", false, opened("a/f")},
		{"/a/in", false, opened("a/f")},
		{"/a/abs", false, opened("a/f")},
		{"/lib/libc", false, opened("lib/libc.so.6.1")},
		{"/lnk/f", false, opened("a/f")},
		{"/a/uproot", false, opened("a/f")},
		{"/a/out", false, refused(out)},
		{"/a/up", false, refused(out)},
		{"a/f", false, refused(checkName("a/f"))},
		{"/a/../a/f", false, refused(checkName("/a/../a/f"))},
		{"/a/p", false, refused(kindWhy(unix.S_IFIFO))},
		{"/a/d", false, refused(kindWhy(unix.S_IFDIR))},
		{"/a/todir", false, refused(kindWhy(unix.S_IFDIR))},
		{"/", false, refused(kindWhy(unix.S_IFDIR))},
		{"/a/f/", false, failed(unix.ENOTDIR)},
		{"/a/f/x", false, failed(unix.ENOTDIR)},
		{"/a/nothing", false, failed(unix.ENOENT)},
		{"/a/dangling", false, failed(unix.ENOENT)},
		{"/a/loop1", false, failed(unix.ELOOP)},
		{"/a/magic", false, refused(out)}, // /proc/self/fd/0: none in the root
		{"/a/f", true, opened("a/f")},
		{"/a/in", true, refused(kindWhy(unix.S_IFLNK))},
		{"/lnk/f", true, opened("a/f")},
		{"/a/p", true, refused(kindWhy(unix.S_IFIFO))},
	}
	if os.Geteuid() == 0 {
		tests = append(tests, struct {
			name  string
			owned bool
			want  outcome
		}{"/a/dev", false, refused(kindWhy(unix.S_IFCHR))})
	}
	for _, walk := range []bool{false, true} {
		if !walk && !haveOpenat2() {
			t.Log("this kernel has no openat2: the walk alone is tested")
			continue
		}
		r := NewRoot(root)
		r.walk = walk
		for _, tc := range tests {
			got := openOutcome(t, r, base, tc.name, tc.owned)
			if got != tc.want {
				t.Errorf("walk=%v: Open(%q, owned %v) = %v, want %v", walk, tc.name, tc.owned, got, tc.want)
			}
		}
	}
}

// TestRootOpenSystem opens names in the file system's root: absolute
// links are the system's own, and the kernel's pseudo files are refused.
func TestRootOpenSystem(t *testing.T) {
	t.Parallel()
	for _, walk := range []bool{false, true} {
		r := Root{walk: walk}
		for name, want := range map[string]string{
			"/proc/self/status": "a file of procfs, the kernel's view, not a file on disk",
			"/proc/self/mem":    "a file of procfs, the kernel's view, not a file on disk",
			"/dev/null":         kindWhy(unix.S_IFCHR),
		} {
			if o := openOutcome(t, r, "/", name, false); o.why != want {
				t.Errorf("walk=%v: Open(%q) = %v, want refused: %s", walk, name, o, want)
			}
		}
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		f, err := r.Open(self)
		if err != nil {
			t.Fatalf("walk=%v: Open(%s): %v", walk, self, err)
		}
		if _, err := io.ReadFull(f, make([]byte, 4)); err != nil {
			t.Errorf("read %s: %v", self, err)
		}
		f.Close()
	}
}

// TestOpenOwned: a file anyone may have written is read only when root or
// the user running hwprof owns it, as perf reads perf maps.
func TestOpenOwned(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("not root: cannot give a file to another user")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "perf-1.map")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(p, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	_, err := NewRoot(dir).OpenOwned("/perf-1.map")
	if want := ownerWhy(65534); want == "" || !errors.Is(err, ErrRefused) || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("OpenOwned of a file of uid 65534: %v, want refused: %s", err, want)
	}
	f, err := NewRoot(dir).Open("/perf-1.map")
	if err != nil {
		t.Errorf("Open (not owned): %v", err)
	} else {
		f.Close()
	}
}

// TestOpenLocal: a file the caller names is opened wherever it is, but a
// FIFO or a directory is refused without blocking.
func TestOpenLocal(t *testing.T) {
	t.Parallel()
	root := testRoot(t)
	for name, want := range map[string]string{
		"a/f":     "",
		"a/out":   "", // the caller's link: followed
		"a/p":     kindWhy(unix.S_IFIFO),
		"a/d":     kindWhy(unix.S_IFDIR),
		"/":       kindWhy(unix.S_IFDIR),
		"nothing": "no such file",
	} {
		p := filepath.Join(root, name)
		f, err := OpenLocal(p)
		switch {
		case want == "" && err != nil:
			t.Errorf("OpenLocal(%s): %v", name, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("OpenLocal(%s): %v, want %q", name, err, want)
		}
		if f != nil {
			f.Close()
		}
	}
	if f, err := OpenLocal("/proc/self/status"); err != nil {
		t.Errorf("OpenLocal(/proc/self/status): %v", err)
	} else {
		f.Close()
	}
}

// FuzzRootOpen opens any name in a root of every kind of entry: Open never
// blocks, never opens anything but a regular file within the root, and
// openat2 and the walk agree.
func FuzzRootOpen(f *testing.F) {
	for _, s := range []string{"/a/f", "/a/up", "/a/out", "/a/uproot", "/a/p", "/lnk/in", "/a/loop1", "/a/todir/", "a", "/a/../lnk", "/lib/libc"} {
		f.Add(s)
	}
	root := testRoot(f)
	base, err := filepath.EvalSymlinks(root)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, name string) {
		walked := openOutcome(t, Root{dir: root, walk: true}, base, name, false)
		if !haveOpenat2() {
			return
		}
		if got := openOutcome(t, Root{dir: root}, base, name, false); got != walked {
			t.Errorf("Open(%q): openat2 %v, walk %v", name, got, walked)
		}
	})
}
