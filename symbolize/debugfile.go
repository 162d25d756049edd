package symbolize

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/hwprof/hwprof/buildid"
)

// DefaultDebugRoot is where distributions install separate debug files.
const DefaultDebugRoot = "/usr/lib/debug"

// Options says where files are looked for.
type Options struct {
	// SymFS prefixes every path looked at, like perf's --symfs: the
	// object /usr/lib/libc.so.6 is read from SymFS/usr/lib/libc.so.6, and
	// debug roots and .gnu_debuglink directories likewise.
	SymFS string
	// DebugDirs are directories of binaries and debug files named by
	// build-id: <hex>, <hex>.debug, .build-id/xx/rest[.debug] and
	// xx/rest[.debug], where xx is the first byte of the build-id in hex.
	DebugDirs []string
	// DebugRoots are looked in for <root>/.build-id/xx/rest.debug and
	// <root>/<dir of the object>/<debuglink>. Nil means
	// []string{DefaultDebugRoot}.
	DebugRoots []string
	// Kallsyms is the kallsyms file read for KernelPath. Empty means
	// /proc/kallsyms (under SymFS when set).
	Kallsyms string
	// SymbolsOnly makes a Symbolizer open objects with OpenSymbols: ELF
	// symbols only, no DWARF lines and inlines, for output that names
	// functions only (function+offset, as perf script without srcline).
	SymbolsOnly bool
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

func (o Options) symfs(p string) string {
	if o.SymFS == "" {
		return p
	}
	return filepath.Join(o.SymFS, p)
}

func (o Options) roots() []string {
	if o.DebugRoots == nil {
		return []string{DefaultDebugRoot}
	}
	return o.DebugRoots
}

// fileBuildID returns the build-id of the ELF file at path, the zero ID
// when it has none.
func fileBuildID(path string) (buildid.ID, error) {
	id, err := buildid.Read(path)
	if errors.Is(err, buildid.ErrNone) {
		return buildid.ID{}, nil
	}
	return id, err
}

// buildIDNames returns the names a file with build-id id may have under a
// --debug-dir directory.
func buildIDNames(dir, id string) []string {
	if len(id) < 3 {
		return nil
	}
	xx, rest := id[:2], id[2:]
	return []string{
		filepath.Join(dir, id),
		filepath.Join(dir, id+".debug"),
		filepath.Join(dir, ".build-id", xx, rest),
		filepath.Join(dir, ".build-id", xx, rest+".debug"),
		filepath.Join(dir, xx, rest),
		filepath.Join(dir, xx, rest+".debug"),
	}
}

func exists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// Find returns the file to read for the object key names and that file's
// build-id: key.Path (under SymFS) when its build-id is key.BuildID (or
// key.BuildID is empty), else a file with key.BuildID under a DebugDirs
// directory. It fails with a *[BuildIDMismatchError] when key.Path holds
// another build-id and no file with key.BuildID is found. Callers that
// read an object's program headers or CFI use it to read the same file
// the symbols come from.
func (o Options) Find(key ObjectKey) (path string, buildID buildid.ID, err error) {
	return o.findBinary(key)
}

// findBinary returns the file to read for key and its build-id.
func (o Options) findBinary(key ObjectKey) (string, buildid.ID, error) {
	none := buildid.ID{}
	want := key.BuildID
	if want.IsZero() {
		want = none // perf's all-zero id names no build-id
	}
	p := o.symfs(key.Path)
	var got buildid.ID
	found := exists(p)
	if found {
		id, err := fileBuildID(p)
		if err != nil && want == none {
			return "", none, fmt.Errorf("open object: %w", err)
		}
		if err == nil && (want == none || want.Equal(id)) {
			return p, id, nil
		}
		got = id // zero when the file is not readable ELF
	}
	if want != none {
		for _, dir := range o.DebugDirs {
			for _, form := range want.Forms() {
				for _, c := range buildIDNames(dir, form) {
					if !exists(c) {
						continue
					}
					if id, err := fileBuildID(c); err == nil && want.Equal(id) {
						return c, id, nil
					}
				}
			}
		}
	}
	if found {
		return "", none, &BuildIDMismatchError{Path: p, Want: want, Got: got}
	}
	return "", none, fmt.Errorf("open object: %s: %w", p, fs.ErrNotExist)
}

// findDebug returns a separate debug file for the object at path (opened
// as f, recorded under origPath, with build-id id), or "".
func (o Options) findDebug(path, origPath string, id buildid.ID, f *elf.File) string {
	var cands []string
	if hx := id.String(); !id.IsZero() && len(hx) > 2 {
		for _, root := range o.roots() {
			cands = append(cands, filepath.Join(o.symfs(root), ".build-id", hx[:2], hx[2:]+".debug"))
		}
		for _, dir := range o.DebugDirs {
			cands = append(cands, buildIDNames(dir, hx)...)
		}
	}
	for _, c := range cands {
		if c != path && exists(c) && debugMatches(c, id, 0, false) {
			return c
		}
	}
	name, crc, ok := debugLink(f)
	if !ok {
		return ""
	}
	dir := filepath.Dir(path)
	cands = []string{filepath.Join(dir, name), filepath.Join(dir, ".debug", name)}
	for _, root := range o.roots() {
		cands = append(cands, filepath.Join(o.symfs(root), filepath.Dir(origPath), name))
	}
	for _, c := range cands {
		if c != path && exists(c) && debugMatches(c, id, crc, true) {
			return c
		}
	}
	return ""
}

// debugMatches checks that the debug file c belongs to the object: same
// build-id when the object has one, else (for a debuglink) the CRC-32.
func debugMatches(c string, id buildid.ID, crc uint32, haveCRC bool) bool {
	if !id.IsZero() {
		cid, err := fileBuildID(c)
		return err == nil && cid == id
	}
	if !haveCRC {
		return false
	}
	data, err := os.ReadFile(c)
	return err == nil && crc32.ChecksumIEEE(data) == crc
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
	if filepath.Base(name) != name {
		return "", 0, false
	}
	return name, f.ByteOrder.Uint32(d[off:]), true
}
