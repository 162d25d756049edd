package addrspace

import (
	"strconv"

	"github.com/hwprof/hwprof/buildid"
)

// Kind says what an object is.
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

// Linked reports whether objects of kind k have an address space of their
// own, reached through their PT_LOAD segments (files and the vdso); the
// others' object addresses are runtime addresses.
func (k Kind) Linked() bool { return k == KindFile || k == KindVDSO }

// Object is what a mapping maps: one file (or kernel image, vdso,
// anonymous region) identified by its name and, when the records carry
// them, its build-id or device and inode. One *Object stands for every
// mapping of the same object in every process, so callers key per-object
// caches on the pointer.
type Object struct {
	Path    string
	Kind    Kind
	BuildID buildid.ID // from an MMAP2 record with a build-id; the zero ID otherwise
	// Maj, Min, Ino and InoGen identify the file (MMAP2 without a
	// build-id); zero when the record did not say.
	Maj, Min    uint32
	Ino, InoGen uint64
	// JITCode marks a JIT's own record of its code (a jitdump file) as
	// the object of JIT memory: each function it names has addresses of
	// its own, PgOff + (a - Start) in the function's mapping, where other
	// JIT memory's are runtime addresses.
	JITCode bool
}
