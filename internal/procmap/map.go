package procmap

import (
	"fmt"
	"sync"

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/buildid"
	"github.com/hwprof/hwprof/perf"
)

// Map is the process model of one recording (or live session): every
// process's mappings over time, and the kernel's. Feed it records in time
// order with Apply; query it with Lookup. It is safe for concurrent use.
type Map struct {
	segs *Segments

	mu      sync.RWMutex
	procs   map[uint32]*Process
	threads map[uint32]uint32 // tid → pid
	kernel  space
	objects map[objectKey]*object
	jit     map[uint32]*jitOverlay // by pid: SetJIT
}

// Process is one process: its pid, command name and address space.
type Process struct {
	PID    uint32
	Comm   string
	Exited bool
	ExitAt uint64 // time of its EXIT record, if Exited
	space  space
}

// New returns an empty Map that reads object segments through segs (nil:
// a fresh NewSegments("")).
func New(segs *Segments) *Map {
	if segs == nil {
		segs = NewSegments("")
	}
	return &Map{
		segs:    segs,
		procs:   make(map[uint32]*Process),
		threads: make(map[uint32]uint32),
		objects: make(map[objectKey]*object),
	}
}

// Segments returns the segment cache the Map reads objects through.
func (m *Map) Segments() *Segments { return m.segs }

// Apply updates the model with one record: *perf.Mmap, *perf.Mmap2,
// *perf.Comm and *perf.Fork (FORK and EXIT). Other records are ignored.
// Records must come in time order (perfdata.Reader delivers them so).
func (m *Map) Apply(rec perf.Record) error {
	switch r := rec.(type) {
	case *perf.Mmap:
		exec := r.Misc&perf.MiscMmapData == 0
		prot := uint32(0x1)
		if exec {
			prot |= protExec
		}
		return m.mmap(r.PID, r.TID, addrspace.Addr(r.Addr), r.Len, r.PgOff, r.Filename, prot, 0, trailerTime(&r.Trailer),
			objectKey{path: r.Filename})
	case *perf.Mmap2:
		k := objectKey{path: r.Filename}
		if r.HasBuildID() {
			k.buildID, _ = buildid.New(r.BuildID) // at most 20 bytes: the decoder checks
		} else {
			k.maj, k.min, k.ino, k.gen = r.Maj, r.Min, r.Ino, r.InoGeneration
		}
		return m.mmap(r.PID, r.TID, addrspace.Addr(r.Addr), r.Len, r.PgOff, r.Filename, r.Prot, r.Flags, trailerTime(&r.Trailer), k)
	case *perf.Comm:
		m.Comm(r.PID, r.TID, r.Comm, r.Exec(), trailerTime(&r.Trailer))
	case *perf.Fork:
		if r.Type == perf.RecordExit {
			m.Exit(r.PID, r.TID, r.Time)
		} else {
			m.Fork(r.PID, r.PPID, r.TID, r.PTID, r.Time)
		}
	}
	return nil
}

func trailerTime(t *perf.Trailer) uint64 {
	if t.Present&perf.SampleTime != 0 {
		return t.Time
	}
	return 0
}

func (m *Map) mmap(pid, tid uint32, start addrspace.Addr, length, pgoff uint64, name string, prot, flags uint32, t uint64, key objectKey) error {
	end := start + addrspace.Addr(length)
	if length == 0 || end < start {
		return fmt.Errorf("procmap: mmap %q at %#x: bad length %#x", name, uint64(start), length)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	key.kind = classify(pid, name, prot&protExec != 0)
	obj := m.objects[key]
	if obj == nil {
		obj = &object{Object: addrspace.Object{Path: name, Kind: key.kind, BuildID: key.buildID,
			Maj: key.maj, Min: key.min, Ino: key.ino, InoGen: key.gen}}
		m.objects[key] = obj
	}
	mp := mapping{Mapping: addrspace.Mapping{Start: start, End: end, PgOff: pgoff, Object: &obj.Object}, obj: obj,
		Prot: prot, Flags: flags, PID: pid, From: t, Until: Forever}
	if pid == KernelPID {
		m.kernel.insert(mp)
		return nil
	}
	m.process(pid, tid).space.insert(mp)
	return nil
}

// process returns pid's process, creating it; the caller holds mu.
func (m *Map) process(pid, tid uint32) *Process {
	p := m.procs[pid]
	if p == nil {
		p = &Process{PID: pid}
		m.procs[pid] = p
	}
	if tid != 0 || pid == 0 {
		m.threads[tid] = pid
	}
	return p
}

// Comm records a command name; with exec set (a COMM record with the exec
// bit) the process's mappings are retired at time t: a new image follows.
func (m *Map) Comm(pid, tid uint32, comm string, exec bool, t uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.process(pid, tid)
	if pid == tid || exec || p.Comm == "" {
		p.Comm = comm
	}
	if exec {
		p.space.retireAll(t)
	}
}

// Fork records a new thread (pid == ppid: it shares its process's
// mappings) or a new process, which gets a copy of its parent's mappings
// from time t on. A pid that is reused starts afresh.
func (m *Map) Fork(pid, ppid, tid, ptid uint32, t uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if pid == ppid {
		m.process(pid, tid)
		return
	}
	_, existed := m.procs[pid]
	child := m.process(pid, tid)
	if existed {
		child.space.retireAll(t)
		child.Exited = false
	}
	if parent := m.procs[ppid]; parent != nil {
		if child.Comm == "" || existed {
			child.Comm = parent.Comm
		}
		for _, mp := range parent.space.clone(pid, t) {
			child.space.insert(mp)
		}
	}
}

// Exit records the end of a thread, and of its process when tid == pid.
// The mappings stay: samples taken before the exit still resolve.
func (m *Map) Exit(pid, tid uint32, t uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p := m.procs[pid]; p != nil && pid == tid {
		p.Exited, p.ExitAt = true, t
	}
}

// Lookup finds the mapping that held addr in process pid (or, if pid is
// unknown, the process of thread tid) at time t, falling back to the
// kernel's mappings, and returns it with addr in the object's address space
// (see the package doc). ok is false when nothing held addr.
func (m *Map) Lookup(pid, tid uint32, t uint64, addr addrspace.Addr) (addrspace.Mapping, addrspace.ObjAddr, bool) {
	mp, _, ok := m.findWhole(pid, tid, t, addr)
	if !ok {
		return addrspace.Mapping{}, 0, false
	}
	return mp.Mapping, mp.Mapping.ObjAddr(addr, m.objSegments(mp.obj)), true
}

// findWhole is find also saying whether the mapping is the answer for
// every address it holds (at the same pid, tid and time): a live mapping
// that began by t, which find returns without looking further.
func (m *Map) findWhole(pid, tid uint32, t uint64, addr addrspace.Addr) (mapping, bool, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	p := m.procs[pid]
	if p == nil {
		if owner, ok := m.threads[tid]; ok {
			p = m.procs[owner]
		}
	}
	if p != nil {
		if mp, whole, ok := p.space.findWhole(t, addr); ok {
			if jm, ok := m.jitFind(p.PID, mp, t, addr); ok {
				return jm, false, true
			}
			return *mp, whole, true
		}
	}
	if mp, whole, ok := m.kernel.findWhole(t, addr); ok {
		return *mp, whole, true
	}
	return mapping{}, false, false
}

// objSegments is the segments of obj (m.segs.Get(obj.Path)) for address
// conversion (addrspace.Mapping.ObjAddr): nil when unknown or not needed
// (the object is not a file or the vdso), through the copy obj keeps while
// the Segments have not been Set since.
func (m *Map) objSegments(obj *object) []addrspace.Segment {
	if !obj.Kind.Linked() {
		return nil
	}
	gen := m.segs.gen.Load()
	if c := obj.segs.Load(); c != nil && c.gen == gen {
		return c.segs
	}
	segs, err := m.segs.Get(obj.Path)
	if err != nil {
		segs = nil
	}
	obj.segs.Store(&objSegs{gen: gen, segEntry: segEntry{segs: segs, err: err}})
	return segs
}

// Process returns a copy of pid's process record (its address space left
// out); ok is false for an unknown pid.
func (m *Map) Process(pid uint32) (Process, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	p := m.procs[pid]
	if p == nil {
		return Process{}, false
	}
	return Process{PID: p.PID, Comm: p.Comm, Exited: p.Exited, ExitAt: p.ExitAt}, true
}

// Mappings returns the mappings of pid alive at time t (KernelPID: the
// kernel's), sorted by start address.
func (m *Map) Mappings(pid uint32, t uint64) []addrspace.Mapping {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if pid == KernelPID {
		return m.kernel.at(t)
	}
	if p := m.procs[pid]; p != nil {
		return p.space.at(t)
	}
	return nil
}
