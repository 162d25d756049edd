package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/hwprof/hwprof/buildid"

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/internal/procmap"
	"github.com/hwprof/hwprof/internal/safefile"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/perfdata"
	"github.com/hwprof/hwprof/symbolize"
	"github.com/hwprof/hwprof/symbolize/debuginfod"
	"github.com/hwprof/hwprof/unwind"
	"golang.org/x/sys/unix"
)

// Options say where a recording's objects are found.
type Options struct {
	// SymFS prefixes every object path, like perf's --symfs.
	SymFS string
	// DebugDirs are directories of binaries and debug files named by
	// build-id (see symbolize.Options).
	DebugDirs []string
	// Objects maps an object path as recorded to the local file to read
	// for it (read as it is: not under SymFS, its build-id not checked).
	Objects map[string]string
	// Debuginfod, when not nil, is asked for the debug file of an object
	// without DWARF that no local place holds (its cache, then its
	// servers), by the object's build-id.
	Debuginfod *debuginfod.Client
	// Live: the recording is being made on this machine (Follower): its
	// kernel is the running one when its header does not say (a file
	// still written has no feature sections yet).
	Live bool
}

// Objects is the one resolver of a recording's objects: for each object
// the file its segments, CFI, code and symbols are read from (its recorded
// path under --symfs when the build-id matches, else a file named by its
// build-id under a debug directory, or a file given in Options.Objects),
// and the key its symbols are resolved by (Key): the kernel's kallsyms,
// the perf map /tmp/perf-PID.map of JIT code, the running kernel's vdso
// written to a file, or the object's file with its recorded build-id
// (all-zero build-ids cleaned away). It is safe for concurrent use.
type Objects struct {
	o        Options
	segs     *procmap.Segments
	buildIDs map[string]buildid.ID // recorded path -> build-id from the header (all-zero ids left out)
	mmapIDs  map[string]buildid.ID // recorded path -> build-id from MMAP2 records

	mu    sync.Mutex
	found map[string]string // recorded path -> file read ("" when none)
	// refused are the files refused (safefile.RefusedError: not a regular
	// file within its root), once each, in the order met
	refusedMu   sync.Mutex // noteRefused is called under mu too
	refused     []error
	refusedSeen map[string]bool

	// the kernel: the kallsyms file that names it or why none does
	// (decided once, by SettleKernel, from the header's facts feats
	// holds by then), and whether the recording was made on the running
	// kernel (whose vdso is then the recorded one)
	feats       *perfdata.FileFeatures
	kernelOnce  sync.Once
	kallsyms    string
	kernelWhy   string
	kernelLocal bool
	vdso        []byte
	vdsoFile    string // vdso written out for symbolizing, removed by Close
	local       map[string]bool
	// kref is the kernel's map as the recording gives it (under mu)
	kref kernelRef
	// the jitdump files read (Engine.mappedJITDump), by recorded path
	jit jitDumps
	// inRoot are the objects found in their process's root, not ours
	// (locateInRoot): recorded path -> /proc/PID/root (under mu)
	inRoot map[string]string
}

// NewObjects reads what the recording's header says of its objects: the
// build-id table and the kernel's release and host.
func NewObjects(f *perfdata.FileFeatures, o Options) *Objects {
	r := &Objects{
		o:        o,
		segs:     procmap.NewSegments(o.SymFS),
		buildIDs: map[string]buildid.ID{},
		found:    map[string]string{},
		local:    map[string]bool{},
	}
	for _, b := range f.BuildIDs {
		if !b.ID.IsZero() {
			r.buildIDs[b.Path] = b.ID
		}
	}
	for rec, file := range o.Objects {
		r.found[rec] = file
		r.local[file] = true
		if s, err := procmap.ReadSegments(file); err == nil {
			r.segs.Set(rec, s)
		}
	}
	r.feats = f
	kid, release, host := r.kernelFacts()
	r.kernelLocal, _ = symbolize.KernelIsLocal(kid, release, host)
	if r.kernelLocal {
		if vdso, err := unwind.LocalVDSO(); err == nil {
			r.vdso = vdso
		}
	}
	return r
}

// kernelFacts are what the header says of the recording's kernel: its
// build-id, release and host (the running kernel's for a Live file
// that says none yet).
func (r *Objects) kernelFacts() (kid buildid.ID, release, host string) {
	kid = r.buildIDs[symbolize.KernelPath]
	release, host = r.feats.OSRelease, r.feats.Hostname
	if r.o.Live && kid.IsZero() && release == "" && host == "" {
		release, host = runningKernel()
	}
	return kid, release, host
}

// SettleKernel decides, once, which kallsyms file names the recording's
// kernel, from the header's facts as read by then. The reader calls it
// at the first record that is not one of the header's: a pipe-mode
// stream gives its OS release and host name in HEADER_FEATURE records
// before any other, after New (a file gives them in its header, read by
// Open). Every later use of the kernel waits for it; a use before it
// (a recording without records) settles it then.
func (r *Objects) SettleKernel() {
	r.kernelOnce.Do(func() {
		kid, release, host := r.kernelFacts()
		r.kallsyms, r.kernelWhy = symbolize.FindKallsyms(r.baseOptions(), kid, release, host)
	})
}

// symbolizeOptions are the symbolizer's options for files looked for
// under SymFS and DebugDirs, the kernel's kallsyms included.
func (r *Objects) symbolizeOptions() symbolize.Options {
	r.SettleKernel()
	o := r.baseOptions()
	o.Kallsyms = r.kallsyms
	return o
}

// baseOptions are symbolizeOptions without the kernel's kallsyms.
func (r *Objects) baseOptions() symbolize.Options {
	o := symbolize.Options{SymFS: r.o.SymFS, DebugDirs: r.o.DebugDirs, Refused: r.noteRefused}
	if r.o.Debuginfod.Enabled() {
		o.FetchDebug = r.o.Debuginfod.Open
	}
	return o
}

// noteRefused keeps a refused file's refusal (the *safefile.RefusedError
// err wraps), once per file. It is safe for concurrent use.
func (r *Objects) noteRefused(err error) {
	var re *safefile.RefusedError
	if !errors.As(err, &re) {
		return
	}
	r.refusedMu.Lock()
	defer r.refusedMu.Unlock()
	msg := re.Error()
	if r.refusedSeen[msg] {
		return
	}
	if r.refusedSeen == nil {
		r.refusedSeen = map[string]bool{}
	}
	r.refusedSeen[msg] = true
	r.refused = append(r.refused, re)
}

// Refused returns the files a lookup refused so far (not a regular file
// within its root: a FIFO, a device, a directory, a symbolic link out of
// --symfs), once each, in the order met: errors matching
// symbolize.ErrRefused, whose message is the warning (it names the file
// and says why). A file refused is taken for missing.
func (r *Objects) Refused() []error {
	r.refusedMu.Lock()
	defer r.refusedMu.Unlock()
	return slices.Clone(r.refused)
}

// Segments are the objects' PT_LOAD segments for the process model, read
// from the files Locate found.
func (r *Objects) Segments() *procmap.Segments { return r.segs }

// VDSO is the running kernel's vdso image when the recording was made on
// it (for the unwinder), else nil.
func (r *Objects) VDSO() []byte { return r.vdso }

// Kernel returns the kallsyms file that names the recording's kernel, or
// "" and why none does.
func (r *Objects) Kernel() (kallsyms, why string) {
	r.SettleKernel()
	return r.kallsyms, r.kernelWhy
}

// kernelRef is the host kernel's text map as a recording gives it (its
// first kernel MMAP record, as perf synthesizes it: pid -1, the name
// "[kernel.kallsyms]" followed by the name of a reference symbol, "_text"
// or "_stext", and that symbol's address at recording time as the file
// offset).
type kernelRef struct {
	sym        string // "" until a kernel MMAP record names one
	addr       uint64
	start, end uint64 // the map's addresses
}

// noteKernel keeps the kernel map of an MMAP record's fields.
func (r *Objects) noteKernel(pid uint32, start, length, pgoff uint64, name string) {
	sym, ok := strings.CutPrefix(name, symbolize.KernelPath)
	if pid != procmap.KernelPID || !ok || sym == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.kref.sym == "" {
		r.kref = kernelRef{sym: sym, addr: pgoff, start: start, end: start + length}
	}
}

// kernelMap returns the kernel's text map as recorded; false when the
// recording has no kernel MMAP record naming a reference symbol.
func (r *Objects) kernelMap() (kernelRef, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.kref, r.kref.sym != ""
}

// Mapped finds the file of the object an MMAP or MMAP2 record maps,
// once per recorded path, and gives its segments to the process model.
func (r *Objects) Mapped(d perf.Record) {
	switch m := d.(type) {
	case *perf.Mmap:
		r.noteKernel(m.PID, m.Addr, m.Len, m.PgOff, m.Filename)
		r.locateIn(m.Filename, r.buildIDs[m.Filename], m.PID)
	case *perf.Mmap2:
		r.noteKernel(m.PID, m.Addr, m.Len, m.PgOff, m.Filename)
		id := r.buildIDs[m.Filename]
		if m.HasBuildID() {
			id, _ = buildid.New(m.BuildID) // at most 20 bytes: the decoder checks
			if !id.IsZero() {
				r.mu.Lock()
				if r.mmapIDs == nil {
					r.mmapIDs = map[string]buildid.ID{}
				}
				r.mmapIDs[m.Filename] = id
				r.mu.Unlock()
			}
		}
		r.locateIn(m.Filename, id, m.PID)
	}
}

// BuildIDs are the known build-ids of the recording's objects by recorded
// path: its build-id table's, and those of MMAP2 records applied so far
// (which win, being what was mapped).
func (r *Objects) BuildIDs() map[string]buildid.ID {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]buildid.ID, len(r.buildIDs)+len(r.mmapIDs))
	for _, ids := range []map[string]buildid.ID{r.buildIDs, r.mmapIDs} {
		for path, id := range ids {
			out[path] = id
		}
	}
	return out
}

// locate finds the file for path (recorded with build-id id, or the zero ID).
// A name that is not an absolute path is no file ("anon_inode:[perf_event]",
// as the kernel names an anonymous inode's mapping): it is not looked for.
func (r *Objects) locate(path string, id buildid.ID) { r.locateIn(path, id, 0) }

// locateIn is locate for a file process pid mapped (0: unknown): in the
// process's own root first, while it lives, when that is not ours.
func (r *Objects) locateIn(path string, id buildid.ID, pid uint32) {
	if !strings.HasPrefix(path, "/") || strings.HasPrefix(path, "//") {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.found[path]; ok {
		return
	}
	// A file refused here is warned of when its symbols are looked for:
	// mappings of devices (a GPU's) are common, and nothing may sample them.
	opts := r.symbolizeOptions()
	opts.Refused = nil
	if r.locateInRoot(opts, path, id, pid) {
		return
	}
	file, _, err := opts.Find(symbolize.ObjectKey{Path: path, BuildID: id})
	r.found[path] = file
	if err != nil {
		return
	}
	if segs, err := procmap.ReadSegments(file); err == nil {
		r.segs.Set(path, segs)
	}
}

// File is the file to read for a recorded object path: the one Mapped
// found (looked for now when it was not: with the build-id of the
// recording's header), with no symbolic link in its path; "" when no file
// with the recorded build-id exists, or the one there is refused.
func (r *Objects) File(path string) string {
	r.mu.Lock()
	file, ok := r.found[path]
	r.mu.Unlock()
	if ok {
		return file
	}
	r.locate(path, r.buildIDs[path])
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.found[path]
}

// Open opens the file of a recorded object path (the unwinder's
// Options.Open).
func (r *Objects) Open(path string) (*os.File, error) {
	file := r.File(path)
	if file == "" {
		return nil, fmt.Errorf("open %s: no file with the recorded build-id: %w", path, fs.ErrNotExist)
	}
	return safefile.OpenLocal(file)
}

// Key names the symbols of an object as seen by process pid: the kernel's
// kallsyms for the kernel and its modules, the perf map of pid for JIT
// code, the vdso's file, or the object's file with its build-id. It is
// false for objects nothing names (anonymous data, the stack, a vdso of
// another kernel).
func (r *Objects) Key(obj *addrspace.Object, pid uint32) (symbolize.ObjectKey, bool) {
	switch obj.Kind {
	case addrspace.KindKernel, addrspace.KindModule:
		return symbolize.ObjectKey{Path: symbolize.KernelPath}, true
	case addrspace.KindJIT:
		if IsJITDump(obj.Path) { // a function of a jitdump (Engine.mappedJITDump)
			return symbolize.ObjectKey{Path: obj.Path}, true
		}
		return symbolize.ObjectKey{Path: symbolize.PerfMapPath(int(pid))}, true
	case addrspace.KindVDSO:
		p := r.vdsoPath()
		return symbolize.ObjectKey{Path: p}, p != ""
	case addrspace.KindFile:
		id := r.buildIDs[obj.Path]
		if obj.BuildID.Len() > 0 {
			id = obj.BuildID // all-zero: no build-id, as symbolize takes it
		}
		if file, ok := r.o.Objects[obj.Path]; ok {
			return symbolize.ObjectKey{Path: file}, true
		}
		return symbolize.ObjectKey{Path: obj.Path, BuildID: id}, true
	}
	return symbolize.ObjectKey{}, false
}

// vdsoPath returns a file holding the running kernel's vdso, for a
// recording made on this kernel, or "": the vdso is in no file, so it is
// written out for the symbolizer, once.
func (r *Objects) vdsoPath() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.vdsoFile != "" || len(r.vdso) == 0 {
		return r.vdsoFile
	}
	p, err := symbolize.TempObject(r.vdso, "hwprof-vdso-*.so")
	if err != nil {
		r.vdso = nil
		return ""
	}
	r.vdsoFile = p
	r.local[p] = true
	return r.vdsoFile
}

// isLocal says whether a key's path is a file of this machine to read as
// it is (a file given in Options.Objects, the vdso's file): not under
// SymFS, without a build-id check.
func (r *Objects) isLocal(path string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.local[path]
}

// Close removes the files Objects wrote.
func (r *Objects) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.vdsoFile == "" {
		return nil
	}
	err := os.Remove(r.vdsoFile)
	r.vdsoFile = ""
	if err != nil {
		return fmt.Errorf("remove vdso file: %w", err)
	}
	return nil
}

// runningKernel is the release and host name of the running kernel, as
// uname(2) gives them and a recording's header records them; "" when
// unknown.
func runningKernel() (release, host string) {
	var uts unix.Utsname
	if err := unix.Uname(&uts); err != nil {
		return "", ""
	}
	return unix.ByteSliceToString(uts.Release[:]), unix.ByteSliceToString(uts.Nodename[:])
}
