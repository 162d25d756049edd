package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"sync"

	"github.com/hwprof/hwprof/internal/safefile"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/symbolize"
	"github.com/hwprof/hwprof/symbolize/jitdump"
)

// IsJITDump says whether path names a jitdump file: jit-PID.dump, the
// name every writer gives it (perf's jvmti agent, V8's --perf-prof).
func IsJITDump(p string) bool {
	pid, ok := strings.CutSuffix(path.Base(p), ".dump")
	if !ok {
		return false
	}
	pid, ok = strings.CutPrefix(pid, "jit-")
	if !ok {
		return false
	}
	_, err := strconv.ParseUint(pid, 10, 32)
	return err == nil
}

// jitDumps are the jitdump files of a recording, read once each.
type jitDumps struct {
	mu       sync.Mutex
	read     map[string]*jitdump.Timeline // by recorded path; nil: unreadable
	warnings []string
}

// mappedJITDump reads the jitdump file an MMAP record maps, once, and
// has the process model name the process's JIT code with it: a runtime
// that writes one maps it so that the recording names it, as perf inject
// -j finds it. The MMAP record's time says when the file was made, in the
// recording's clock (jitdump.NewTimeline).
func (e *Engine) mappedJITDump(d perf.Record) {
	var pid uint32
	var name string
	var tr *perf.Trailer
	switch m := d.(type) {
	case *perf.Mmap:
		pid, name, tr = m.PID, m.Filename, &m.Trailer
	case *perf.Mmap2:
		pid, name, tr = m.PID, m.Filename, &m.Trailer
	default:
		return
	}
	if !IsJITDump(name) {
		return
	}
	var at uint64
	if tr.Present&perf.SampleTime != 0 {
		at = tr.Time
	}
	if tl := e.Objects.readJITDump(name, at, pid); tl != nil {
		e.Maps.SetJIT(pid, name, tl)
	}
}

// readJITDump reads the jitdump file at the recorded path p, mapped by
// process pid at time at (0: unknown), once: in the process's own root
// while it runs when that is not ours (a container's), else in SymFS,
// else, for a container's that record kept, /tmp/jit-PID.dump
// (symbolize.KeptJITDumpPath).
// It returns nil when the file cannot be read, which is warned of once. A
// file damaged after some records gives those.
func (r *Objects) readJITDump(p string, at uint64, pid uint32) *jitdump.Timeline {
	j := &r.jit
	j.mu.Lock()
	defer j.mu.Unlock()
	if tl, ok := j.read[p]; ok {
		return tl
	}
	if j.read == nil {
		j.read = map[string]*jitdump.Timeline{}
	}
	root := safefile.NewRoot(r.o.SymFS)
	if dir := liveRoot(pid); dir != "" && r.o.SymFS == "" {
		root = safefile.NewRoot(dir)
	}
	tl, err := readTimeline(root, p, at, false)
	if errors.Is(err, fs.ErrNotExist) && r.o.SymFS == "" {
		// a container's file, kept by record once the process ended
		if kept, kerr := readTimeline(safefile.Root{}, symbolize.KeptJITDumpPath(int(pid)), at, true); kerr == nil {
			tl, err = kept, nil
		}
	}
	if err != nil {
		r.noteRefused(err)
		if !errors.Is(err, safefile.ErrRefused) {
			j.warnings = append(j.warnings, err.Error())
		}
	}
	j.read[p] = tl
	return tl
}

// readTimeline reads the jitdump file p in root; owned: only a file of
// root or the user, not a symbolic link (safefile.Root.OpenOwned), for
// a file in /tmp.
func readTimeline(root safefile.Root, p string, at uint64, owned bool) (*jitdump.Timeline, error) {
	open := root.Open
	if owned {
		open = root.OpenOwned
	}
	f, err := open(p)
	if err != nil {
		return nil, fmt.Errorf("JIT code: %w", err)
	}
	defer f.Close()
	rd, err := jitdump.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("JIT code: %s: %w", root.Path(p), err)
	}
	tl, err := jitdump.NewTimeline(rd, at)
	if err != nil {
		return tl, fmt.Errorf("JIT code: %s: %w (its functions before are named)", root.Path(p), err)
	}
	return tl, nil
}

// jitDump returns the resolver of the jitdump file read for the recorded
// path p.
func (r *Objects) jitDump(p string) (symbolize.Resolver, error) {
	r.jit.mu.Lock()
	defer r.jit.mu.Unlock()
	tl := r.jit.read[p]
	if tl == nil {
		return nil, fmt.Errorf("JIT code: %s: not read", p)
	}
	return tl, nil
}

// JITDumpWarnings are the jitdump files that could not be read, or were
// damaged, once each, as warnings.
func (r *Objects) JITDumpWarnings() []string {
	r.jit.mu.Lock()
	defer r.jit.mu.Unlock()
	return append([]string(nil), r.jit.warnings...)
}
