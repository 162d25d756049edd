package procmap

import (
	"strings"
	"sync/atomic"

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/buildid"
)

// KernelPID is the pid of kernel mappings ("[kernel.kallsyms]_text" and
// modules): -1 as perf writes it.
const KernelPID = ^uint32(0)

// Forever is the Until of a mapping that is still mapped.
const Forever = ^uint64(0)

// object is an Object of the Map with its copy of its segments.
type object struct {
	addrspace.Object
	// segs is the Map's Segments' answer for Path, kept here so that
	// looking up an address does not look up the path (objSegments)
	segs atomic.Pointer[objSegs]
}

// objSegs is an Object's copy of its segments, as of a generation of the
// Segments they came from.
type objSegs struct {
	gen uint64
	segEntry
}

type objectKey struct {
	path     string
	buildID  buildid.ID
	maj, min uint32
	ino, gen uint64
	kind     addrspace.Kind
}

// mapping is one range of a process's address space mapped to an object
// (Mapping.Object is &obj.Object), alive during [From, Until) in the
// recording's clock.
type mapping struct {
	addrspace.Mapping
	obj   *object
	Prot  uint32 // PROT_* bits (MMAP records: PROT_EXEC unless a data mapping)
	Flags uint32 // MAP_* bits (MMAP2 only)
	PID   uint32 // the owning process; KernelPID for kernel mappings
	From  uint64 // time of the record that mapped it (0 when it had none)
	Until uint64 // time it was replaced, unmapped by an exec, or Forever
}

// Live reports whether the mapping is alive at time t.
func (m *mapping) Live(t uint64) bool { return m.From <= t && t < m.Until }

const protExec = 0x4 // PROT_EXEC

// classify tells an object's kind from its owner and name as perf does
// (is_anon_memory, is_no_dso_memory, machine__is_kernel_mmap).
func classify(pid uint32, name string, exec bool) addrspace.Kind {
	if pid == KernelPID {
		if strings.HasPrefix(name, "[kernel.kallsyms]") || strings.HasPrefix(name, "[guest.kernel.kallsyms") {
			return addrspace.KindKernel
		}
		return addrspace.KindModule
	}
	switch {
	case name == "[vdso]":
		return addrspace.KindVDSO
	case name == "[vsyscall]":
		return addrspace.KindVsyscall
	case strings.HasPrefix(name, "[stack"):
		return addrspace.KindStack
	case name == "[heap]":
		return addrspace.KindHeap
	case isAnon(name):
		if exec {
			return addrspace.KindJIT
		}
		return addrspace.KindAnon
	}
	return addrspace.KindFile
}

func isAnon(name string) bool {
	return name == "" || name == "//anon" || strings.HasPrefix(name, "[anon") ||
		strings.HasPrefix(name, "/dev/zero") || strings.HasPrefix(name, "/anon_hugepage") ||
		strings.HasPrefix(name, "/memfd:")
}
