package symbolize

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hwprof/hwprof/perf/perfdata"
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
	Want, Got string // hex; Got is empty when the file has no build-id
}

func (e *BuildIDMismatchError) Error() string {
	got := e.Got
	if got == "" {
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

// BuildIDHex returns the hex build-id of the ELF file at path, or "" when
// it has none.
func BuildIDHex(path string) (string, error) {
	id, err := perfdata.ReadBuildID(path)
	if errors.Is(err, perfdata.ErrNoBuildID) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(id), nil
}

// CleanBuildID returns a recorded hex build-id in lower case, or "" when it
// is empty or all zeros (perf writes zeros for an object whose build-id it
// did not know).
func CleanBuildID(id string) string {
	id = strings.ToLower(id)
	if strings.Trim(id, "0") == "" {
		return ""
	}
	return id
}

// SameBuildID reports whether a build-id a recording gives (recorded) is
// that of a file (file), both hex. perf before 5.x wrote every build-id
// padded with zero bytes to 20 bytes and without its length, so an 8-byte
// (xxHash) or 16-byte (MD5, UUID) build-id of the file followed by zeros
// matches too.
func SameBuildID(recorded, file string) bool {
	recorded, file = CleanBuildID(recorded), CleanBuildID(file)
	if recorded == "" || file == "" || len(recorded) < len(file) {
		return false
	}
	return recorded[:len(file)] == file && strings.Trim(recorded[len(file):], "0") == ""
}

// buildIDForms returns the names a recorded build-id may be filed under:
// itself, then, when it ends in zero bytes (perf's padding), each shorter
// form down to the last non-zero byte.
func buildIDForms(id string) []string {
	forms := []string{id}
	for len(id) > 2 && id[len(id)-2:] == "00" {
		id = id[:len(id)-2]
		forms = append(forms, id)
	}
	return forms
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
func (o Options) Find(key ObjectKey) (path, buildID string, err error) {
	return o.findBinary(key)
}

// findBinary returns the file to read for key and its build-id.
func (o Options) findBinary(key ObjectKey) (string, string, error) {
	key.BuildID = CleanBuildID(key.BuildID)
	p := o.symfs(key.Path)
	var got string
	found := exists(p)
	if found {
		id, err := BuildIDHex(p)
		if err != nil && key.BuildID == "" {
			return "", "", fmt.Errorf("open object: %w", err)
		}
		if err == nil && (key.BuildID == "" || SameBuildID(key.BuildID, id)) {
			return p, id, nil
		}
		got = id // "" when the file is not readable ELF
	}
	if key.BuildID != "" {
		for _, dir := range o.DebugDirs {
			for _, want := range buildIDForms(key.BuildID) {
				for _, c := range buildIDNames(dir, want) {
					if !exists(c) {
						continue
					}
					if id, err := BuildIDHex(c); err == nil && SameBuildID(key.BuildID, id) {
						return c, id, nil
					}
				}
			}
		}
	}
	if found {
		return "", "", &BuildIDMismatchError{Path: p, Want: key.BuildID, Got: got}
	}
	return "", "", fmt.Errorf("open object: %s: %w", p, fs.ErrNotExist)
}

// findDebug returns a separate debug file for the object at path (opened
// as f, recorded under origPath, with build-id id), or "".
func (o Options) findDebug(path, origPath, id string, f *elf.File) string {
	var cands []string
	if id != "" {
		for _, root := range o.roots() {
			cands = append(cands, filepath.Join(o.symfs(root), ".build-id", id[:2], id[2:]+".debug"))
		}
		for _, dir := range o.DebugDirs {
			cands = append(cands, buildIDNames(dir, id)...)
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
func debugMatches(c, id string, crc uint32, haveCRC bool) bool {
	if id != "" {
		cid, err := BuildIDHex(c)
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

// GoBuildID returns the Go build-id of the ELF file at path (the
// .note.go.buildid note's text, as `go tool buildid` prints it), or ""
// when it has none.
func GoBuildID(path string) (string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", fmt.Errorf("read Go build-id: %w", err)
	}
	defer f.Close()
	s := f.Section(".note.go.buildid")
	if s == nil {
		return "", nil
	}
	b, err := s.Data()
	if err != nil {
		return "", fmt.Errorf("read Go build-id: %s: %w", path, err)
	}
	return parseGoBuildIDNote(f.ByteOrder, b), nil
}

// parseGoBuildIDNote reads the note of name "Go" and type 4
// (cmd/internal/buildid's ELF note) from b, "" when b holds none.
func parseGoBuildIDNote(bo binary.ByteOrder, b []byte) string {
	for len(b) >= 12 {
		nsz, dsz, typ := bo.Uint32(b), bo.Uint32(b[4:]), bo.Uint32(b[8:])
		nEnd := 12 + (uint64(nsz)+3)&^3
		dEnd := nEnd + (uint64(dsz)+3)&^3
		if uint64(len(b)) < nEnd+uint64(dsz) {
			return ""
		}
		if typ == 4 && nsz == 4 && string(b[12:15]) == "Go\x00" {
			return strings.TrimRight(string(b[nEnd:nEnd+uint64(dsz)]), "\x00")
		}
		if uint64(len(b)) < dEnd {
			return ""
		}
		b = b[dEnd:]
	}
	return ""
}
