package symbolize

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path"

	"github.com/hwprof/hwprof/buildid"
	"github.com/hwprof/hwprof/internal/safefile"
)

// DefaultDebugRoot is where distributions install separate debug files.
const DefaultDebugRoot = "/usr/lib/debug"

// ErrRefused is what a file refused by a lookup is (errors.Is): not a
// regular file, or not within its root (see [Options.SymFS]).
var ErrRefused = safefile.ErrRefused

// Options says where files are looked for.
type Options struct {
	// SymFS is the root the recorded paths are looked up in, like perf's
	// --symfs: the object /usr/lib/libc.so.6 is read from
	// SymFS/usr/lib/libc.so.6, and debug roots and .gnu_debuglink
	// directories likewise. Neither .. nor a symbolic link leaves it (an
	// absolute link is read in it, as in a chroot); empty means the file
	// system's root. A recorded path must be absolute and have no ..
	// component, and only regular files are read (package
	// internal/safefile).
	SymFS string
	// DebugDirs are directories of binaries and debug files named by
	// build-id: <hex>, <hex>.debug, .build-id/xx/rest[.debug] and
	// xx/rest[.debug], where xx is the first byte of the build-id in hex.
	// Each is a root of its own, as SymFS is.
	DebugDirs []string
	// DebugRoots are looked in for <root>/.build-id/xx/rest.debug and
	// <root>/<dir of the object>/<debuglink>. Nil means
	// []string{DefaultDebugRoot}.
	DebugRoots []string
	// Kallsyms is the kallsyms file read for KernelPath. Empty means
	// /proc/kallsyms (under SymFS when set).
	Kallsyms string
	// Refused, when set, is told of each file a lookup refused (an error
	// matching ErrRefused, whose message names the file and says why),
	// which it then takes for missing: a FIFO, a device, a directory, a
	// symbolic link out of its root. It may be called from several
	// goroutines at once.
	Refused func(error)
	// FetchDebug, when set, is asked for the separate debug file of a
	// build-id that no local place holds (a debuginfod client: package
	// symbolize/debuginfod): an open regular file, whose build-id is
	// checked as a local one's is. It may be called from several
	// goroutines at once.
	FetchDebug func(id buildid.ID) (*os.File, error)
}

// BuildIDMismatchError says that the file at Path has another build-id than
// the one the recording names, and that no file with Want was found.
type BuildIDMismatchError struct {
	Path      string
	Want, Got buildid.ID // Got is the zero ID when the file has no build-id
}

func (e *BuildIDMismatchError) Error() string {
	got := e.Got.String()
	if e.Got.IsZero() {
		got = "none"
	}
	return fmt.Sprintf("open object: %s: build-id mismatch: recording has %s, file has %s", e.Path, e.Want, got)
}

// root is the root a recording's object paths are looked up in: SymFS,
// or the file system's root.
func (o Options) root() safefile.Root { return safefile.NewRoot(o.SymFS) }

func (o Options) roots() []string {
	if o.DebugRoots == nil {
		return []string{DefaultDebugRoot}
	}
	return o.DebugRoots
}

// openIn opens name in root r (safefile.Root.Open), telling o.Refused
// when the file is refused.
func (o Options) openIn(r safefile.Root, name string) (*os.File, error) {
	f, err := r.Open(name)
	if err != nil && o.Refused != nil && errors.Is(err, ErrRefused) {
		o.Refused(err)
	}
	return f, err
}

// fileBuildID returns the build-id of the ELF file f, the zero ID when it
// has none.
func fileBuildID(f *os.File) (buildid.ID, error) {
	ef, err := elf.NewFile(f)
	if err != nil {
		return buildid.ID{}, fmt.Errorf("read build-id: %s: %w", f.Name(), err)
	}
	id, err := buildid.FromELF(ef)
	if errors.Is(err, buildid.ErrNone) {
		return buildid.ID{}, nil
	}
	if err != nil {
		return buildid.ID{}, fmt.Errorf("read build-id: %s: %w", f.Name(), err)
	}
	return id, nil
}

// buildIDNames returns the names a file with build-id id may have in a
// --debug-dir directory (as names in its root).
func buildIDNames(id string) []string {
	if len(id) < 3 {
		return nil
	}
	xx, rest := id[:2], id[2:]
	return []string{
		"/" + id,
		"/" + id + ".debug",
		path.Join("/.build-id", xx, rest),
		path.Join("/.build-id", xx, rest+".debug"),
		path.Join("/", xx, rest),
		path.Join("/", xx, rest+".debug"),
	}
}

// found is the file found for an object, open: f's Name is its path with
// no symbolic link in it; name is the name it was found by in root.
type found struct {
	f      *os.File
	root   safefile.Root
	name   string
	id     buildid.ID
	symtab bool // the file has a .symtab (set by findDebug)
}

// Find returns the file to read for the object key names and that file's
// build-id: key.Path (in SymFS) when its build-id is key.BuildID (or
// key.BuildID is empty), else a file with key.BuildID in a DebugDirs
// directory. The path returned has no symbolic link in it (a link is
// resolved in its root: see [Options.SymFS]). It fails with a
// *[BuildIDMismatchError] when key.Path holds another build-id and no file
// with key.BuildID is found. Callers that read an object's program
// headers or CFI use it to read the same file the symbols come from.
func (o Options) Find(key ObjectKey) (path string, buildID buildid.ID, err error) {
	fd, err := o.findBinary(key)
	if err != nil {
		return "", buildid.ID{}, err
	}
	fd.f.Close()
	return fd.f.Name(), fd.id, nil
}

// findBinary finds and opens the file to read for key.
func (o Options) findBinary(key ObjectKey) (*found, error) {
	none := buildid.ID{}
	want := key.BuildID
	if want.IsZero() {
		want = none // perf's all-zero id names no build-id
	}
	r := o.root()
	f, openErr := o.openIn(r, key.Path)
	var got buildid.ID
	if openErr == nil {
		id, err := fileBuildID(f)
		if err != nil && want == none {
			f.Close()
			return nil, fmt.Errorf("open object: %w", err)
		}
		if err == nil && (want == none || want.Equal(id)) {
			return &found{f: f, root: r, name: key.Path, id: id}, nil
		}
		f.Close()
		got = id // zero when the file is not readable ELF
	}
	if want != none {
		if fd := o.findByBuildID(want); fd != nil {
			return fd, nil
		}
	}
	switch {
	case openErr == nil:
		return nil, &BuildIDMismatchError{Path: r.Path(key.Path), Want: want, Got: got}
	case errors.Is(openErr, ErrRefused):
		return nil, fmt.Errorf("open object: %w", openErr)
	}
	return nil, fmt.Errorf("open object: %s: %w", r.Path(key.Path), fs.ErrNotExist)
}

// findByBuildID opens a file with build-id want in a DebugDirs directory,
// nil when there is none.
func (o Options) findByBuildID(want buildid.ID) *found {
	for _, dir := range o.DebugDirs {
		r := safefile.NewRoot(dir)
		for _, form := range want.Forms() {
			for _, c := range buildIDNames(form) {
				f, err := o.openIn(r, c)
				if err != nil {
					continue
				}
				if id, err := fileBuildID(f); err == nil && want.Equal(id) {
					return &found{f: f, root: r, name: c, id: id}
				}
				f.Close()
			}
		}
	}
	return nil
}

// debugCand is a place a separate debug file may be: a name in a root.
type debugCand struct {
	root safefile.Root
	name string
}

// findDebug opens a separate debug file for the object bin (opened as f,
// recorded under origPath), nil when there is none.
func (o Options) findDebug(bin *found, origPath string, f *elf.File) *os.File {
	var cands []debugCand
	if hx := bin.id.String(); !bin.id.IsZero() && len(hx) > 2 {
		for _, root := range o.roots() {
			cands = append(cands, debugCand{o.root(), path.Join("/", root, ".build-id", hx[:2], hx[2:]+".debug")})
		}
		for _, dir := range o.DebugDirs {
			for _, n := range buildIDNames(hx) {
				cands = append(cands, debugCand{safefile.NewRoot(dir), n})
			}
		}
	}
	bin.symtab = f.Section(".symtab") != nil
	if df := o.openDebug(bin, cands, 0, false); df != nil {
		return df
	}
	if name, crc, ok := debugLink(f); ok {
		dir := path.Dir(bin.name)
		cands = []debugCand{{bin.root, path.Join(dir, name)}, {bin.root, path.Join(dir, ".debug", name)}}
		for _, root := range o.roots() {
			cands = append(cands, debugCand{o.root(), path.Join("/", root, path.Dir(origPath), name)})
		}
		if df := o.openDebug(bin, cands, crc, true); df != nil {
			return df
		}
	}
	return o.fetchDebug(bin)
}

// fetchDebug asks FetchDebug for bin's debug file, nil when there is no
// FetchDebug, bin has no build-id, or the file fetched has another.
func (o Options) fetchDebug(bin *found) *os.File {
	if o.FetchDebug == nil || bin.id.IsZero() {
		return nil
	}
	f, err := o.FetchDebug(bin.id)
	if err != nil {
		return nil
	}
	if !debugMatches(f, bin.id, 0, false) || !addsSymbols(f, bin.symtab) {
		f.Close()
		return nil
	}
	return f
}

// openDebug opens the first of cands that is a debug file of bin (not bin
// itself), nil when none is.
func (o Options) openDebug(bin *found, cands []debugCand, crc uint32, haveCRC bool) *os.File {
	binInfo, err := bin.f.Stat()
	if err != nil {
		return nil
	}
	for _, c := range cands {
		f, err := o.openIn(c.root, c.name)
		if err != nil {
			continue
		}
		if fi, err := f.Stat(); err == nil && !os.SameFile(fi, binInfo) && debugMatches(f, bin.id, crc, haveCRC) && addsSymbols(f, bin.symtab) {
			return f
		}
		f.Close()
	}
	return nil
}

// addsSymbols says whether a debug file has what its object, which has
// no DWARF, lacks: DWARF, or a symbol table when the object has none
// (symtab). A copy of the object itself (a build-id cache holds one
// under the same build-id) adds nothing.
func addsSymbols(f *os.File, symtab bool) bool {
	ef, err := elf.NewFile(f)
	if err != nil {
		return false
	}
	if s := ef.Section(".symtab"); !symtab && s != nil && s.Type != elf.SHT_NOBITS {
		return true
	}
	return hasDWARF(ef)
}

// debugMatches checks that the debug file f belongs to the object: same
// build-id when the object has one, else (for a debuglink) the CRC-32.
func debugMatches(f *os.File, id buildid.ID, crc uint32, haveCRC bool) bool {
	if !id.IsZero() {
		cid, err := fileBuildID(f)
		return err == nil && cid == id
	}
	if !haveCRC {
		return false
	}
	h := crc32.NewIEEE()
	_, err := io.Copy(h, io.NewSectionReader(f, 0, 1<<62))
	return err == nil && h.Sum32() == crc
}

// debugLink parses .gnu_debuglink: a NUL-terminated file name, padding to
// 4 bytes, and a CRC-32 of the debug file.
func debugLink(f *elf.File) (string, uint32, bool) {
	s := f.Section(".gnu_debuglink")
	if s == nil {
		return "", 0, false
	}
	d, err := s.Data()
	if err != nil {
		return "", 0, false
	}
	n := bytes.IndexByte(d, 0)
	if n <= 0 {
		return "", 0, false
	}
	off := (n + 4) &^ 3
	if off+4 > len(d) {
		return "", 0, false
	}
	name := string(d[:n])
	if path.Base(name) != name || name == "." || name == ".." {
		return "", 0, false
	}
	return name, f.ByteOrder.Uint32(d[off:]), true
}
