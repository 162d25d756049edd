package symbolize

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/buildid"
	"github.com/hwprof/hwprof/internal/testprog"
)

// stripped builds the C test program with -O2 -g, copies it to dir, keeps an
// unstripped copy (symprog.full), writes symprog.debug with only the debug
// information and strips symprog; it returns the paths and the build-id.
func stripped(t *testing.T, dir string, debuglink bool) (bin, full, dbg, id string) {
	t.Helper()
	need(t, "gcc", "objcopy")
	bin = testprog.Copy(t, testprog.Build(t, "c/symprog.c", "-O2", "-g", "-Wl,--build-id"), dir)
	full = bin + ".full"
	dbg = bin + ".debug"
	run(t, dir, nil, "cp", bin, full)
	run(t, dir, nil, "objcopy", "--only-keep-debug", bin, dbg)
	run(t, dir, nil, "objcopy", "--strip-debug", bin)
	if debuglink {
		run(t, dir, nil, "objcopy", "--add-gnu-debuglink="+dbg, bin)
	}
	id, err := fileHex(bin)
	if err != nil || id == "" {
		t.Fatalf("build-id of %s: %q, %v", bin, id, err)
	}
	return bin, full, dbg, id
}

// sameAsFull checks that o resolves every test address of full as an
// object opened on full itself does.
func sameAsFull(t *testing.T, o *Object, full string) {
	t.Helper()
	if !o.HasDWARF() {
		t.Fatalf("no DWARF found (debug file %q)", o.DebugPath())
	}
	ref, err := Open(ObjectKey{Path: full}, Options{DebugRoots: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	addrs := testAddrs(t, full, all, 0)
	got, want := o.Symbolize(addrs), ref.Symbolize(addrs)
	inlined := 0
	for i, a := range addrs {
		g, w := ours(got[i]), ours(want[i])
		if len(w) > 1 {
			inlined++
		}
		if !slices.Equal(g, w) {
			t.Errorf("%#x: got %v, unstripped %v", uint64(a), g, w)
		}
	}
	if inlined == 0 {
		t.Error("no inlined frames checked")
	}
}

func mkdirMove(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(from, to); err != nil {
		t.Fatal(err)
	}
}

func TestSeparateDebugFile(t *testing.T) {
	tests := []struct {
		name      string
		debuglink bool
		// place moves the debug file and returns the options to find it.
		place func(t *testing.T, dir, dbg, id string) Options
	}{
		{"debuglink-same-dir", true, func(t *testing.T, dir, dbg, id string) Options {
			return Options{DebugRoots: []string{}}
		}},
		{"debuglink-dot-debug-dir", true, func(t *testing.T, dir, dbg, id string) Options {
			mkdirMove(t, dbg, filepath.Join(dir, ".debug", "symprog.debug"))
			return Options{DebugRoots: []string{}}
		}},
		{"debuglink-under-debug-root", true, func(t *testing.T, dir, dbg, id string) Options {
			root := t.TempDir()
			mkdirMove(t, dbg, filepath.Join(root, dir, "symprog.debug"))
			return Options{DebugRoots: []string{root}}
		}},
		{"build-id-under-debug-root", false, func(t *testing.T, dir, dbg, id string) Options {
			root := t.TempDir()
			mkdirMove(t, dbg, filepath.Join(root, ".build-id", id[:2], id[2:]+".debug"))
			return Options{DebugRoots: []string{root}}
		}},
		{"debug-dir-flat", false, func(t *testing.T, dir, dbg, id string) Options {
			dd := t.TempDir()
			mkdirMove(t, dbg, filepath.Join(dd, id+".debug"))
			return Options{DebugRoots: []string{}, DebugDirs: []string{dd}}
		}},
		{"debug-dir-build-id-layout", false, func(t *testing.T, dir, dbg, id string) Options {
			dd := t.TempDir()
			mkdirMove(t, dbg, filepath.Join(dd, ".build-id", id[:2], id[2:]+".debug"))
			return Options{DebugRoots: []string{}, DebugDirs: []string{dd}}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			bin, full, dbg, id := stripped(t, dir, tt.debuglink)
			opts := tt.place(t, dir, dbg, id)
			o, err := Open(ObjectKey{Path: bin, BuildID: mustID(t, id)}, opts)
			if err != nil {
				t.Fatal(err)
			}
			if o.DebugPath() == "" {
				t.Fatal("no separate debug file used")
			}
			sameAsFull(t, o, full)
		})
	}
}

func TestStrippedWithoutDebugFile(t *testing.T) {
	dir := t.TempDir()
	bin, _, dbg, _ := stripped(t, dir, true)
	if err := os.Remove(dbg); err != nil {
		t.Fatal(err)
	}
	o, err := Open(ObjectKey{Path: bin}, Options{DebugRoots: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if o.HasDWARF() {
		t.Fatal("DWARF found without a debug file")
	}
	// Symbols still resolve, without file and line.
	f := o.Symbolize(testAddrs(t, bin, func(s string) bool { return s == "hot" }, 0))
	for _, l := range f {
		if l.Symbol == nil || l.Symbol.Name.Raw != "hot" || len(l.Frames) != 1 || l.Frames[0].File != "" {
			t.Errorf("%#x: %+v", uint64(l.Addr), l)
		}
	}
}

func TestDebuglinkCRCMismatch(t *testing.T) {
	dir := t.TempDir()
	need(t, "gcc", "objcopy")
	// Without a build-id the debuglink CRC decides.
	bin := testprog.Copy(t, testprog.Build(t, "c/symprog.c", "-O2", "-g", "-Wl,--build-id=none"), dir)
	dbg := bin + ".debug"
	run(t, dir, nil, "objcopy", "--only-keep-debug", bin, dbg)
	run(t, dir, nil, "objcopy", "--strip-debug", "--add-gnu-debuglink="+dbg, bin)
	o, err := Open(ObjectKey{Path: bin}, Options{DebugRoots: []string{}})
	if err != nil || o.DebugPath() != dbg {
		t.Fatalf("matching CRC: debug file %q, %v", o.DebugPath(), err)
	}
	if err := os.WriteFile(dbg, []byte("not the debug file"), 0o644); err != nil {
		t.Fatal(err)
	}
	o, err = Open(ObjectKey{Path: bin}, Options{DebugRoots: []string{}})
	if err != nil || o.DebugPath() != "" {
		t.Fatalf("wrong CRC: debug file %q used, %v", o.DebugPath(), err)
	}
}

func TestBuildIDMismatch(t *testing.T) {
	dir := t.TempDir()
	bin, full, _, id := stripped(t, dir, false)
	other := "0123456789abcdef0123456789abcdef01234567"

	// The recording names another build-id: an error, not the wrong file.
	_, err := Open(ObjectKey{Path: bin, BuildID: mustID(t, other)}, Options{DebugRoots: []string{}})
	var mm *BuildIDMismatchError
	if !errors.As(err, &mm) || mm.Want.String() != other || mm.Got.String() != id || mm.Path != bin {
		t.Fatalf("err %v, want a BuildIDMismatchError", err)
	}
	if got := err.Error(); got[:12] != "open object:" {
		t.Errorf("error %q lacks the operation prefix", got)
	}

	// The recorded build-id: the file is used.
	if o, err := Open(ObjectKey{Path: bin, BuildID: mustID(t, id)}, Options{DebugRoots: []string{}}); err != nil || len(o.Symbolize([]addrspace.ObjAddr{0x1000})) != 1 {
		t.Errorf("Open with the right build-id: %v", err)
	}

	// A --debug-dir holding the binary with the recorded build-id is used
	// instead: the file on disk changed since the recording.
	dd := t.TempDir()
	run(t, dir, nil, "cp", full, filepath.Join(dd, id))
	if err := os.WriteFile(bin, []byte("\x7fELF rebuilt"), 0o755); err != nil {
		t.Fatal(err)
	}
	o, err := Open(ObjectKey{Path: bin, BuildID: mustID(t, id)}, Options{DebugRoots: []string{}, DebugDirs: []string{dd}})
	if err != nil {
		t.Fatal(err)
	}
	if o.Path() != filepath.Join(dd, id) {
		t.Errorf("read %s, want the --debug-dir copy", o.Path())
	}
	sameAsFull(t, o, full)

	// Missing everywhere: not found.
	_, err = Open(ObjectKey{Path: filepath.Join(dir, "gone"), BuildID: mustID(t, other)}, Options{DebugDirs: []string{dd}})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing object: %v", err)
	}
}

func TestSymFS(t *testing.T) {
	need(t, "gcc")
	symfs := t.TempDir()
	bin := testprog.Copy(t, testprog.Build(t, "c/symprog.c", "-O2", "-g"), symfs)
	mkdirMove(t, bin, filepath.Join(symfs, "usr", "bin", "prog"))
	o, err := Open(ObjectKey{Path: "/usr/bin/prog"}, Options{SymFS: symfs, DebugRoots: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if o.Path() != filepath.Join(symfs, "usr", "bin", "prog") {
		t.Errorf("read %s", o.Path())
	}
	sameAsFull(t, o, o.Path())
}

// A recording of perf before 5.x pads a short build-id with zeros to 20
// bytes; the --debug-dir file named by the short id is found and used.
func TestDebugDirPaddedBuildID(t *testing.T) {
	need(t, "gcc")
	bin := testprog.Build(t, "c/symprog.c", "-O2", "-g", "-Wl,--build-id=0x572ac72487ae1966")
	id, err := fileHex(bin)
	if err != nil || id != "572ac72487ae1966" {
		t.Fatalf("build-id %q, %v", id, err)
	}
	dd := t.TempDir()
	if err := os.Rename(testprog.Copy(t, bin, dd), filepath.Join(dd, id)); err != nil { // a link out of dd is not followed
		t.Fatal(err)
	}
	recorded := id + strings.Repeat("00", 12)
	key := ObjectKey{Path: "/elsewhere/prog", BuildID: mustID(t, recorded)}
	path, got, err := Options{DebugDirs: []string{dd}}.Find(key)
	if err != nil || path != filepath.Join(dd, id) || got.String() != id {
		t.Fatalf("Find: %q %q %v", path, got, err)
	}
	o, err := Open(key, Options{DebugRoots: []string{}, DebugDirs: []string{dd}})
	if err != nil {
		t.Fatal(err)
	}
	sameAsFull(t, o, bin)
	// The file at the recorded path with the padded id matches too.
	if _, err := Open(ObjectKey{Path: bin, BuildID: mustID(t, recorded)}, Options{DebugRoots: []string{}}); err != nil {
		t.Errorf("recorded path with a padded build-id: %v", err)
	}
}

// fileHex is the build-id of the ELF file at path in hex, "" if none.
func fileHex(path string) (string, error) {
	id, err := buildid.Read(path)
	if errors.Is(err, buildid.ErrNone) {
		return "", nil
	}
	return id.String(), err
}

// mustID parses a hex build-id.
func mustID(t testing.TB, hex string) buildid.ID {
	t.Helper()
	id, err := buildid.Parse(hex)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestOpenSymbolsLines: OpenSymbols reads the line tables of the DWARF an
// object's own file holds, so its single frame has the file and line of
// Open's innermost frame at every address, inlined code included; the
// DWARF of a separate debug file it leaves to Open.
func TestOpenSymbolsLines(t *testing.T) {
	dir := t.TempDir()
	bin, full, _, _ := stripped(t, dir, true)
	opts := Options{DebugRoots: []string{}}
	ref, err := Open(ObjectKey{Path: full}, opts)
	if err != nil {
		t.Fatal(err)
	}
	o, err := OpenSymbols(ObjectKey{Path: full}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if o.HasDWARF() || o.DWARFErr() != nil {
		t.Fatalf("OpenSymbols: DWARF %v (%v), want its line tables alone", o.HasDWARF(), o.DWARFErr())
	}
	addrs := testAddrs(t, full, all, -1)
	got, want := o.Symbolize(addrs), ref.Symbolize(addrs)
	lines := 0
	for i, a := range addrs {
		if len(want[i].Frames) == 0 {
			continue
		}
		if len(got[i].Frames) != 1 {
			t.Fatalf("%#x: %d frames, want 1", uint64(a), len(got[i].Frames))
		}
		g, w := got[i].Frames[0], want[i].Frames[0]
		if g.File != w.File || g.Line != w.Line || g.Column != w.Column {
			t.Errorf("%#x: %s:%d:%d, Open's innermost frame %s:%d:%d", uint64(a), g.File, g.Line, g.Column, w.File, w.Line, w.Column)
		}
		if g.Line > 0 {
			lines++
		}
	}
	if lines == 0 {
		t.Fatal("no address has a line")
	}
	// stripped, with its DWARF in symprog.debug beside it
	s, err := OpenSymbols(ObjectKey{Path: bin}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if s.DebugPath() == "" {
		t.Fatal("the debug file was not found")
	}
	for i, l := range s.Symbolize(addrs) {
		if len(l.Frames) > 0 && l.Frames[0].File != "" {
			t.Fatalf("%#x: %s from the separate debug file", uint64(addrs[i]), l.Frames[0].File)
		}
	}
}

// A build-id cache holds a copy of a stripped object under its own
// build-id: that copy is not its debug file (it adds nothing), and the
// debug file found after it (FetchDebug, as a debuginfod client) is used.
func TestCopyOfStrippedIsNoDebugFile(t *testing.T) {
	dir := t.TempDir()
	bin, full, dbg, id := stripped(t, dir, false)
	run(t, dir, nil, "objcopy", "--strip-all", bin)
	cache := filepath.Join(dir, "cache")
	os.MkdirAll(filepath.Join(cache, ".build-id", id[:2]), 0o755)
	run(t, dir, nil, "cp", bin, filepath.Join(cache, ".build-id", id[:2], id[2:]))
	fetched := 0
	opts := Options{DebugRoots: []string{}, DebugDirs: []string{cache}, FetchDebug: func(buildid.ID) (*os.File, error) {
		fetched++
		return os.Open(dbg)
	}}
	o, err := Open(ObjectKey{Path: bin}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if fetched != 1 || o.DebugPath() != dbg {
		t.Fatalf("debug file %q, fetched %d times: want %s, fetched once", o.DebugPath(), fetched, dbg)
	}
	sameAsFull(t, o, full)
}
