package record

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/hwprof/hwprof/internal/safefile"
	"github.com/hwprof/hwprof/symbolize"
)

// perfMaps are the perf maps (/tmp/perf-PID.map) of recorded processes
// that write theirs where a report does not look: a process in another
// pid namespace names its map by its pid there (NSpid in
// /proc/PID/status), and one in another mount namespace writes it in
// its own /tmp. When such a process maps anonymous executable memory
// (JIT code), its /tmp is opened through /proc/PID/root while it lives
// and held; at the end of the recording its map, if it wrote one, is
// copied to the host's /tmp under the recorded pid, where report (and
// perf report) read a perf map, also once the process and its
// namespaces are gone.
type perfMaps struct {
	seen map[uint32]bool
	held []heldTmp
}

// heldTmp is the /tmp of a process whose perf map is not the host's.
type heldTmp struct {
	pid, inner uint32
	dir        *os.File
}

// isAnonExec says whether an executable mapping's name is anonymous
// memory, where JIT code is (the kernel writes "//anon").
func isAnonExec(name string) bool {
	return name == "" || name == "//anon" || strings.HasPrefix(name, "[anon") || strings.HasPrefix(name, "/memfd:")
}

// note holds the /tmp of process pid, once, when its perf map is not the
// host's /tmp/perf-PID.map (at most maxHeld).
func (m *perfMaps) note(pid uint32) {
	if m.seen[pid] || pid == 0 || pid == ^uint32(0) {
		return
	}
	if m.seen == nil {
		m.seen = map[uint32]bool{}
	}
	m.seen[pid] = true
	inner, ok := innerPID(pid)
	if !ok || len(m.held) >= maxHeld || (inner == pid && safefile.ProcessRoot(pid) == "") {
		return // gone, or the host's own perf map
	}
	dir, err := safefile.NewRoot("/proc/" + strconv.FormatUint(uint64(pid), 10) + "/root").OpenDir("/tmp")
	if err != nil {
		return
	}
	m.held = append(m.held, heldTmp{pid: pid, inner: inner, dir: dir})
}

// innerPID returns process pid's pid in its own pid namespace: the last
// of the NSpid line of /proc/PID/status.
func innerPID(pid uint32) (uint32, bool) {
	b, err := os.ReadFile("/proc/" + strconv.FormatUint(uint64(pid), 10) + "/status")
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "NSpid:"); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				return 0, false
			}
			n, err := strconv.ParseUint(f[len(f)-1], 10, 32)
			return uint32(n), err == nil
		}
	}
	return pid, true // a kernel without pid namespaces: the one pid
}

// keep copies the perf map of every process held to the host's /tmp
// under its recorded pid, and closes what it held. It returns the
// failures, joined; a process that wrote no map is none.
func (m *perfMaps) keep(tmp string) error {
	var errs []error
	for _, h := range m.held {
		if err := keepPerfMap(h, tmp); err != nil {
			errs = append(errs, err)
		}
		h.dir.Close()
	}
	m.held = nil
	return errors.Join(errs...)
}

// keepPerfMap copies the perf map of one held process.
func keepPerfMap(h heldTmp, tmp string) error {
	src, err := safefile.OpenOwnedIn(h.dir, filepath.Base(symbolize.PerfMapPath(int(h.inner))))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer src.Close()
	return keepAs(src, filepath.Join(tmp, filepath.Base(symbolize.PerfMapPath(int(h.pid)))))
}

// keepJITDumps copies the jitdump files that processes of other mount
// namespaces mapped (held open since: containerFiles) to the host's
// /tmp/jit-PID.dump (symbolize.KeptJITDumpPath), the recorded pid of the
// first process that mapped each, where report reads one whose recorded
// path is not there.
func (r *recorder) keepJITDumps() error {
	var errs []error
	for path, f := range r.files.held {
		if !isJITDump(path) {
			continue
		}
		if err := keepAs(f, symbolize.KeptJITDumpPath(int(r.buildIDs[path]))); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// isJITDump says whether a path names a jitdump file, jit-PID.dump (as
// the engine's IsJITDump).
func isJITDump(p string) bool {
	n, ok1 := strings.CutSuffix(filepath.Base(p), ".dump")
	n, ok2 := strings.CutPrefix(n, "jit-")
	if !ok1 || !ok2 {
		return false
	}
	_, err := strconv.ParseUint(n, 10, 32)
	return err == nil
}

// keepAs copies the file src to dst, written whole beside it and linked
// there only if dst does not exist: hwprof replaces no file it did not
// write, and a file of that name may be another process's (one that had
// that pid before, or the host's own). One exception: a dst whose bytes
// begin src's is this file as an earlier recording kept it (another
// recording of the same process, -a beside a recording of the process,
// that ended before it had written everything): it is replaced by the
// longer copy; a dst that src's bytes begin is kept as it is. Not when
// dst is src.
func keepAs(src *os.File, dst string) error {
	fi, err := src.Stat()
	if err != nil {
		return err
	}
	if same(fi, dst) {
		return nil // the process's /tmp is ours, and its pids too
	}
	f, err := os.CreateTemp(filepath.Dir(dst), ".hwprof-keep-*")
	if err != nil {
		return fmt.Errorf("keep %s as %s: %w", src.Name(), dst, err)
	}
	defer os.Remove(f.Name())
	_, err = io.Copy(f, io.NewSectionReader(src, 0, fi.Size()))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Link(f.Name(), dst) // fails if dst exists: never over another file
	}
	if errors.Is(err, os.ErrExist) {
		switch prefix(dst, f.Name()) {
		case dstShorter:
			err = os.Rename(f.Name(), dst) // the same file, kept earlier with less of it
		case dstLonger:
			return nil // the same file, kept already with as much or more
		default:
			return fmt.Errorf("keep %s as %s: a file of that name exists (another process's): left as it is", src.Name(), dst)
		}
	}
	if err != nil {
		return fmt.Errorf("keep %s as %s: %w", src.Name(), dst, err)
	}
	return nil
}

// How an existing file's bytes compare with a new copy's (prefix).
const (
	unrelated = iota
	dstShorter
	dstLonger
)

// maxCompare bounds the bytes prefix reads of each file.
const maxCompare = 64 << 20

// prefix says whether the regular file dst is an earlier, shorter copy
// of the file at ours (its bytes begin ours), a longer or equal one (ours
// begin its), or neither (or unreadable, or not a regular file).
func prefix(dst, ours string) int {
	if fi, err := os.Lstat(dst); err != nil || !fi.Mode().IsRegular() {
		return unrelated
	}
	a, err1 := readUpTo(dst)
	b, err2 := readUpTo(ours)
	switch {
	case err1 != nil || err2 != nil:
		return unrelated
	case len(a) < len(b) && bytes.Equal(a, b[:len(a)]):
		return dstShorter
	case len(a) >= len(b) && bytes.Equal(a[:len(b)], b):
		return dstLonger
	}
	return unrelated
}

// readUpTo reads a regular file of at most maxCompare bytes, not following
// a link.
func readUpTo(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxCompare+1))
	if err == nil && len(b) > maxCompare {
		err = errors.New("too large to compare")
	}
	return b, err
}

// same says whether the file path is the file of fi.
func same(fi os.FileInfo, path string) bool {
	b, err := os.Lstat(path)
	return err == nil && os.SameFile(fi, b)
}
