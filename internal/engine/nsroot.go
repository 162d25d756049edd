package engine

import (
	"github.com/hwprof/hwprof/buildid"
	"github.com/hwprof/hwprof/internal/procmap"
	"github.com/hwprof/hwprof/internal/safefile"
	"github.com/hwprof/hwprof/symbolize"
)

// locateInRoot finds the file path that process pid mapped in the
// process's own root, /proc/PID/root, when the process lives and its root
// is not ours (a container, another mount namespace, a chroot): the
// recording's paths are the process's, which the host may not have, or
// have as other files. The file must have the recorded build-id, when
// there is one (a pid reused since by another process names other
// files). It reports whether it found it; the caller holds r.mu.
func (r *Objects) locateInRoot(opts symbolize.Options, path string, id buildid.ID, pid uint32) bool {
	root := liveRoot(pid)
	if root == "" {
		return false
	}
	opts.SymFS, opts.DebugDirs = root, nil
	if _, _, err := opts.Find(symbolize.ObjectKey{Path: path, BuildID: id}); err != nil {
		return false
	}
	file := root + path // opened through the link, while the process lives
	r.found[path] = file
	if r.inRoot == nil {
		r.inRoot = map[string]string{}
	}
	r.inRoot[path] = root
	if segs, err := procmap.ReadSegments(file); err == nil {
		r.segs.Set(path, segs)
	}
	return true
}

// rootOf returns the root a recorded path was found in by locateInRoot,
// "" when it was not.
func (r *Objects) rootOf(path string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.inRoot[path]
}

// liveRoot is safefile.ProcessRoot.
func liveRoot(pid uint32) string { return safefile.ProcessRoot(pid) }
