package uprobe

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/hwprof/hwprof/internal/safefile"
	"github.com/hwprof/hwprof/perf/synth"
)

// Executables returns the programs to probe: argv[0] looked up through
// PATH (made absolute, and rejected unless it is an ELF file), or else each
// process's /proc/PID/exe, distinct files once.
func Executables(argv []string, pids []int) ([]string, error) {
	if len(argv) > 0 {
		path, err := exec.LookPath(argv[0])
		if err != nil {
			return nil, err
		}
		if path, err = filepath.Abs(path); err != nil {
			return nil, err
		}
		if err := isELF(path); err != nil {
			return nil, err
		}
		return []string{path}, nil
	}
	var exes []string
	seen := map[string]bool{}
	for _, pid := range pids {
		link := "/proc/" + strconv.Itoa(pid) + "/exe"
		path, err := os.Readlink(link)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("no process with pid %d", pid)
			}
			return nil, err
		}
		if _, err := os.Stat(path); err != nil {
			path = link // deleted or in another mount namespace: the kernel resolves the link
		}
		if !seen[path] {
			seen[path] = true
			exes = append(exes, path)
		}
	}
	return exes, nil
}

// isELF rejects what cannot be probed (a script, say) with a clear error.
func isELF(path string) error {
	f, err := safefile.OpenELF(path)
	if err != nil {
		return fmt.Errorf("%s: not an ELF executable (%v); probe the interpreter's binary instead", path, err)
	}
	return f.Close()
}

// LibraryDirs are the directories searched for a library named without a
// path, after the executable's RUNPATH/RPATH and LD_LIBRARY_PATH.
var LibraryDirs = []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib", "/usr/local/lib"}

// FindLibrary resolves a shared library to probe. A name with a slash is a
// path (made absolute; it must exist). A bare name is a library's file
// name or soname, whole or without its version suffix: "libm", "libm.so"
// and "libm.so.6" all name libm.so.6, never libmount.so.1 (MatchLibrary).
// It is looked up first among the files the processes pids map (their
// base names, then their DT_SONAMEs), then in the executable exe's
// RUNPATH/RPATH, LD_LIBRARY_PATH and LibraryDirs, where only ELF files
// count (libm.so is often a linker script).
func FindLibrary(name, exe string, pids []int) (string, error) {
	if strings.Contains(name, "/") {
		path, err := filepath.Abs(name)
		if err == nil {
			_, err = os.Stat(path)
		}
		return path, err
	}
	for _, pid := range pids {
		maps, err := synth.Mappings("/proc", pid)
		if err != nil {
			continue // the process may have exited; the directories remain
		}
		path, err := mappedLibrary(name, maps)
		if path != "" || err != nil {
			return path, err
		}
	}
	for _, d := range searchDirs(exe) {
		if path := dirLibrary(name, d); path != "" {
			return path, nil
		}
	}
	return "", fmt.Errorf("library %s not found (mapped by the processes, in RUNPATH, LD_LIBRARY_PATH "+
		"or the library directories); give its path", name)
}

// mappedLibrary returns the mapped file that is library name: by base
// name first, then by soname (an older glibc maps libm-2.31.so, whose
// soname is libm.so.6). A match whose file was deleted since it was
// mapped is an error: the file on disk now is not the one running.
func mappedLibrary(name string, maps []synth.Mapping) (string, error) {
	type file struct {
		path    string
		deleted bool
	}
	var files []file
	for _, m := range maps {
		if strings.HasPrefix(m.Path, "/") {
			p, deleted := strings.CutSuffix(m.Path, " (deleted)")
			files = append(files, file{p, deleted})
		}
	}
	pick := func(f file) (string, error) {
		if f.deleted {
			return "", fmt.Errorf("library %s: %s was deleted after the process mapped it (upgraded?); its code on disk is not the code running", name, f.path)
		}
		return f.path, nil
	}
	for _, f := range files {
		if MatchLibrary(name, filepath.Base(f.path)) {
			return pick(f)
		}
	}
	sonames := map[string]string{}
	for _, f := range files {
		so, ok := sonames[f.path]
		if !ok && !f.deleted {
			so = soname(f.path)
			sonames[f.path] = so
		}
		if so != "" && MatchLibrary(name, so) {
			return pick(f)
		}
	}
	return "", nil
}

// MatchLibrary reports whether file, a library's file name or soname,
// is the library name: equal to it, or name followed by a version suffix
// only: ".so" or ".so.N[.N...]" when name has no ".so", ".N[.N...]" when
// it ends in ".so" or a version. So "libm" matches "libm.so.6" but not
// "libmount.so.1", and "libc.so" matches "libc.so.6".
func MatchLibrary(name, file string) bool {
	if file == name {
		return true
	}
	rest, ok := strings.CutPrefix(file, name)
	if !ok || rest == "" || rest[0] != '.' {
		return false
	}
	rest = rest[1:]
	if !strings.Contains(name, ".so") {
		// libm → libm.so or libm.so.6
		if rest == "so" {
			return true
		}
		v, ok := strings.CutPrefix(rest, "so.")
		return ok && isVersion(v)
	}
	return isVersion(rest) // libm.so → libm.so.6; libfoo.so.1 → libfoo.so.1.2.3
}

// isVersion reports whether v is dot-separated decimal numbers: "6", "6.0.30".
func isVersion(v string) bool {
	if v == "" {
		return false
	}
	for p := range strings.SplitSeq(v, ".") {
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return false
		}
	}
	return true
}

// soname returns the DT_SONAME of an ELF shared object, "" if it has none
// or is not one.
func soname(path string) string {
	f, err := safefile.OpenELF(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	v, err := f.DynString(elf.DT_SONAME)
	if err != nil || len(v) == 0 {
		return ""
	}
	return v[0]
}

// searchDirs are the directories a bare library name is looked up in:
// exe's RUNPATH and RPATH ($ORIGIN expanded), LD_LIBRARY_PATH, LibraryDirs.
func searchDirs(exe string) []string {
	var dirs []string
	if f, err := safefile.OpenELF(exe); err == nil {
		for _, tag := range []elf.DynTag{elf.DT_RUNPATH, elf.DT_RPATH} {
			if v, err := f.DynString(tag); err == nil {
				for _, s := range v {
					dirs = append(dirs, filepath.SplitList(strings.ReplaceAll(s, "$ORIGIN", filepath.Dir(exe)))...)
				}
			}
		}
		f.Close()
	}
	dirs = append(dirs, filepath.SplitList(os.Getenv("LD_LIBRARY_PATH"))...)
	dirs = append(dirs, LibraryDirs...)
	return slices.DeleteFunc(dirs, func(d string) bool { return d == "" })
}

// dirLibrary returns the ELF file in dir that is library name: the name
// itself, else the shortest file name MatchLibrary accepts (libm.so.6
// before libm.so.6.0 would be), "" if none.
func dirLibrary(name, dir string) string {
	if p := filepath.Join(dir, name); isELF(p) == nil {
		return p
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	var cands []string
	for _, e := range ents {
		if MatchLibrary(name, e.Name()) {
			cands = append(cands, e.Name())
		}
	}
	slices.SortFunc(cands, func(a, b string) int {
		if len(a) != len(b) {
			return len(a) - len(b)
		}
		return strings.Compare(a, b)
	})
	for _, c := range cands {
		if p := filepath.Join(dir, c); isELF(p) == nil {
			return p
		}
	}
	return ""
}
