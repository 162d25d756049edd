package procmap

import (
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/hwprof/hwprof/buildid"
)

// Addr is a runtime virtual address in a process's (or the kernel's)
// address space, as samples and callchains carry it.
type Addr uint64

// ObjAddr is an address in an object's own ELF virtual address space: what
// addr2line, the object's symbol table and its DWARF take.
type ObjAddr uint64

// KernelPID is the pid of kernel mappings ("[kernel.kallsyms]_text" and
// modules): -1 as perf writes it.
const KernelPID = ^uint32(0)

// Forever is the Until of a mapping that is still mapped.
const Forever = ^uint64(0)

// Kind says what a mapping holds.
type Kind uint8

const (
	KindFile     Kind = iota // a file: executable or shared library (or a data file)
	KindKernel               // the kernel image ([kernel.kallsyms]_text)
	KindModule               // a kernel module
	KindVDSO                 // [vdso]
	KindVsyscall             // [vsyscall]
	KindAnon                 // anonymous memory that is not executable
	KindJIT                  // anonymous executable memory: JIT code, see /tmp/perf-PID.map
	KindStack                // [stack]
	KindHeap                 // [heap]
)

var kindNames = [...]string{"file", "kernel", "module", "vdso", "vsyscall", "anon", "jit", "stack", "heap"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Object is what a mapping maps: one file (or kernel image, vdso, anonymous
// region) identified by its name and, when the records carry them, its
// build-id or device and inode. Objects are shared by every mapping of the
// same file in every process, so callers can key per-object caches on the
// pointer.
type Object struct {
	Path    string
	Kind    Kind
	BuildID buildid.ID // from an MMAP2 record with a build-id; the zero ID otherwise
	// Maj, Min, Ino and InoGeneration identify the file (MMAP2 without a
	// build-id); zero when the record did not say.
	Maj, Min    uint32
	Ino, InoGen uint64
	// jitCode: a JIT code file's functions (SetJIT), whose object
	// addresses are the file's, not runtime addresses
	jitCode bool

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
	kind     Kind
}

// Mapping is one range of a process's address space mapped to an object,
// alive during [From, Until) in the recording's clock.
type Mapping struct {
	Start, End Addr   // [Start, End)
	PgOff      uint64 // file offset of Start
	Prot       uint32 // PROT_* bits (MMAP records: PROT_EXEC unless a data mapping)
	Flags      uint32 // MAP_* bits (MMAP2 only)
	PID        uint32 // the owning process; KernelPID for kernel mappings
	Object     *Object
	From       uint64 // time of the record that mapped it (0 when it had none)
	Until      uint64 // time it was replaced, unmapped by an exec, or Forever
}

// Contains reports whether a falls in the mapping's range.
func (m *Mapping) Contains(a Addr) bool { return m.Start <= a && a < m.End }

// Live reports whether the mapping is alive at time t.
func (m *Mapping) Live(t uint64) bool { return m.From <= t && t < m.Until }

const protExec = 0x4 // PROT_EXEC

// Exec reports whether the mapping is executable.
func (m *Mapping) Exec() bool { return m.Prot&protExec != 0 }

// classify tells an object's kind from its owner and name as perf does
// (is_anon_memory, is_no_dso_memory, machine__is_kernel_mmap).
func classify(pid uint32, name string, exec bool) Kind {
	if pid == KernelPID {
		if strings.HasPrefix(name, "[kernel.kallsyms]") || strings.HasPrefix(name, "[guest.kernel.kallsyms") {
			return KindKernel
		}
		return KindModule
	}
	switch {
	case name == "[vdso]":
		return KindVDSO
	case name == "[vsyscall]":
		return KindVsyscall
	case strings.HasPrefix(name, "[stack"):
		return KindStack
	case name == "[heap]":
		return KindHeap
	case isAnon(name):
		if exec {
			return KindJIT
		}
		return KindAnon
	}
	return KindFile
}

func isAnon(name string) bool {
	return name == "" || name == "//anon" || strings.HasPrefix(name, "[anon") ||
		strings.HasPrefix(name, "/dev/zero") || strings.HasPrefix(name, "/anon_hugepage") ||
		strings.HasPrefix(name, "/memfd:")
}
