package engine

import (
	"debug/elf"
	"path/filepath"
	"sync"

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/ccmap"
	"github.com/hwprof/hwprof/internal/safefile"
	"golang.org/x/arch/x86/x86asm"
)

// An addrKey is one code address of the address-level profile: an
// instruction in an object (its address in the object's ELF address
// space), or, for an address no mapping held, the runtime address with a
// nil object.
type addrKey struct {
	obj  *addrspace.Object
	pid  uint32 // JIT code: the process, whose perf map names it; else 0
	addr addrspace.ObjAddr
}

// newAddrKey is the key of address a of obj in process pid.
func newAddrKey(obj *addrspace.Object, pid uint32, a addrspace.ObjAddr) addrKey {
	if obj == nil || obj.Kind != addrspace.KindJIT {
		pid = 0
	}
	return addrKey{obj: obj, pid: pid, addr: a}
}

// addrTable interns code addresses into dense ids (ccmap.FuncIDs of the
// address-level map) and turns return addresses into the addresses of
// their call instructions (its retTable).
type addrTable struct {
	ids  map[addrKey]ccmap.FuncID
	keys []addrKey
	// memo is a direct-mapped cache in front of ids (a map lookup hashes
	// the 24-byte key; most samples repeat a few thousand addresses)
	memo *[addrMemoSize]idSlot
	// onNew, if set, is called with the key of every new id
	onNew func(k addrKey)
	retTable
}

// addrMemoSize is the number of slots of addrTable's and retTable's
// direct-mapped caches.
const (
	addrMemoBits = 12
	addrMemoSize = 1 << addrMemoBits
)

// idSlot is one slot of addrTable.memo: key k has id id, when set.
type idSlot struct {
	k   addrKey
	id  ccmap.FuncID
	set bool
}

// memoSlot is the slot of address a (of process pid) in a direct-mapped
// cache of addrMemoSize slots.
func memoSlot(a addrspace.ObjAddr, pid uint32) uint64 {
	return ((uint64(a) ^ uint64(pid)<<40) * 0x9e3779b97f4a7c15) >> (64 - addrMemoBits)
}

// retTable turns return addresses into the addresses of their call
// instructions, each unique return address decoded once. The loader's
// addrTable has one, and each sample preparer its own (the answers are
// the code's, whichever table gives them); they share the codeReader.
type retTable struct {
	calls map[addrKey]retInfo // return address -> its call instruction
	code  *codeReader
	// memo is a direct-mapped cache in front of calls (an empty slot
	// has address 0, which ret never looks up)
	memo *[addrMemoSize]retSlot
}

// retSlot is one slot of retTable.memo: the return address addr of obj
// says r.
type retSlot struct {
	obj  *addrspace.Object
	addr addrspace.ObjAddr
	r    retInfo
}

func newRetTable(code *codeReader) retTable {
	return retTable{calls: make(map[addrKey]retInfo), code: code, memo: new([addrMemoSize]retSlot)}
}

// retInfo is what the code before a return address says: the address of
// the call instruction that ends at it, and whether one does.
type retInfo struct {
	call  addrspace.ObjAddr
	check retCheck
}

// retCheck is the verdict on a return address.
type retCheck uint8

const (
	// retUnknown: the code could not be read (no file with the recorded
	// build-id, JIT code, the vdso): not judged.
	retUnknown retCheck = iota
	// retCall: a call instruction ends at the return address.
	retCall
	// retNotCall: the code before the address is no call: nothing
	// returns there, unless a runtime made the frame up (Go starts a
	// goroutine with goexit+1 as its return address, after a NOP).
	retNotCall
	// retNotCode: the address is in no executable code (no mapping, data,
	// the stack, the heap, the kernel for a user frame, a file's
	// non-executable part): no return address at all.
	retNotCode
)

func newAddrTable(code *codeReader) *addrTable {
	return &addrTable{
		ids:      make(map[addrKey]ccmap.FuncID),
		memo:     new([addrMemoSize]idSlot),
		retTable: newRetTable(code),
	}
}

// id returns the id of a code address, giving it one the first time.
func (t *addrTable) id(k addrKey) ccmap.FuncID {
	m := &t.memo[memoSlot(k.addr, k.pid)]
	if m.set && m.k == k {
		return m.id
	}
	id, ok := t.ids[k]
	if !ok {
		id = ccmap.FuncID(len(t.keys))
		t.ids[k] = id
		t.keys = append(t.keys, k)
		if t.onNew != nil {
			t.onNew(k)
		}
	}
	*m = idSlot{k: k, id: id, set: true}
	return id
}

// callOf returns the address of the call instruction that returns to ra
// in obj: the instruction ending at ra that decodes as a call (a 5-byte
// CALL rel32 first, then CALL r/m of 2 to 7 bytes). When the code cannot
// be read or no call ends at ra, it is ra-1, inside the call instruction,
// which still names the right function and source line.
func (t *retTable) callOf(obj *addrspace.Object, ra addrspace.ObjAddr) addrspace.ObjAddr {
	return t.ret(obj, ra).call
}

// checkReturn says whether ra can be a return address of user code in
// obj (nil: in no mapping): whether a call instruction ends at it.
func (t *retTable) checkReturn(obj *addrspace.Object, ra addrspace.ObjAddr) retCheck {
	if obj != nil && obj.Kind == addrspace.KindFile {
		return t.ret(obj, ra).check
	}
	return checkObject(obj)
}

// checkObject is checkReturn's answer for a return address in obj when
// obj is not a file's code (whose answer is ret's).
func checkObject(obj *addrspace.Object) retCheck {
	if obj == nil {
		return retNotCode
	}
	switch obj.Kind {
	case addrspace.KindKernel, addrspace.KindModule, addrspace.KindAnon, addrspace.KindStack, addrspace.KindHeap:
		return retNotCode
	}
	return retUnknown // JIT code, the vdso, vsyscall
}

// ret decodes the code before ra once.
func (t *retTable) ret(obj *addrspace.Object, ra addrspace.ObjAddr) retInfo {
	if ra == 0 {
		return retInfo{check: retNotCode}
	}
	m := &t.memo[memoSlot(ra, 0)]
	if m.addr == ra && m.obj == obj {
		return m.r
	}
	k := addrKey{obj: obj, addr: ra}
	if r, ok := t.calls[k]; ok {
		*m = retSlot{obj: obj, addr: ra, r: r}
		return r
	}
	r := retInfo{call: ra - 1}
	if obj != nil && ra > 7 {
		b, st := t.code.readCode(obj, ra-7, 7)
		switch {
		case st == codeOK && len(b) == 7:
			n := callLenBefore(b)
			r.call = ra - addrspace.ObjAddr(n)
			r.check = retCall
			if n == 1 {
				r.call, r.check = ra-1, retNotCall
			}
		case st == codeNotExec:
			// the call itself must be executable: it ends at ra, so its
			// last byte is at ra-1
			if _, st1 := t.code.readCode(obj, ra-1, 1); st1 == codeNotExec {
				r.check = retNotCode
			}
		}
	}
	t.calls[k] = r
	*m = retSlot{obj: obj, addr: ra, r: r}
	return r
}

// callLenBefore returns the length of the call instruction that ends at
// the end of b (7 bytes before a return address), or 1 when none does.
func callLenBefore(b []byte) int {
	for _, n := range [...]int{5, 2, 3, 6, 7, 4} {
		if n == 5 && b[len(b)-5] != 0xe8 {
			continue
		}
		inst, err := x86asm.Decode(b[len(b)-n:], 64)
		if err == nil && inst.Len == n && (inst.Op == x86asm.CALL || inst.Op == x86asm.LCALL) {
			return n
		}
	}
	return 1
}

// codeReader reads the code of objects by their ELF addresses, each file
// opened once. It is safe for concurrent use (the sample preparers share
// it with the folding goroutine).
type codeReader struct {
	resolve func(path string) string // recorded path -> file to open

	mu    sync.Mutex
	files map[string]*elfCode
}

type elfCode struct {
	f     *safefile.ELF
	progs []*elf.Prog // executable PT_LOAD segments
	funcs []funcRange // its function symbols, read when first needed (function)
}

func newCodeReader(resolve func(string) string) *codeReader {
	return &codeReader{resolve: resolve, files: make(map[string]*elfCode)}
}

// read returns up to n bytes of code at addr of obj (fewer at the end of
// a segment), false if it has no file or addr is in no executable segment.
func (c *codeReader) read(obj *addrspace.Object, addr addrspace.ObjAddr, n int) ([]byte, bool) {
	b, st := c.readCode(obj, addr, n)
	return b, st == codeOK
}

// codeStatus says what reading code found.
type codeStatus uint8

const (
	codeOK      codeStatus = iota
	codeNoFile             // no file to read (not a file object, or no file with its build-id)
	codeNotExec            // the file has no executable segment at the address
)

// readCode is read, saying why it read nothing.
func (c *codeReader) readCode(obj *addrspace.Object, addr addrspace.ObjAddr, n int) ([]byte, codeStatus) {
	if obj.Kind != addrspace.KindFile || !filepath.IsAbs(obj.Path) {
		return nil, codeNoFile
	}
	c.mu.Lock()
	ec, ok := c.files[obj.Path]
	if !ok {
		ec = c.open(obj.Path)
		c.files[obj.Path] = ec
	}
	c.mu.Unlock()
	if ec == nil {
		return nil, codeNoFile
	}
	a := uint64(addr)
	for _, p := range ec.progs {
		if a >= p.Vaddr && a < p.Vaddr+p.Filesz {
			b := make([]byte, min(uint64(n), p.Vaddr+p.Filesz-a))
			if _, err := p.ReadAt(b, int64(a-p.Vaddr)); err != nil {
				return nil, codeNoFile
			}
			return b, codeOK
		}
	}
	return nil, codeNotExec
}

func (c *codeReader) open(path string) *elfCode {
	file := c.resolve(path)
	if file == "" {
		return nil
	}
	f, err := safefile.OpenELF(file)
	if err != nil {
		return nil
	}
	ec := &elfCode{f: f}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 {
			ec.progs = append(ec.progs, p)
		}
	}
	return ec
}

func (c *codeReader) close() {
	for _, ec := range c.files {
		if ec != nil {
			ec.f.Close()
		}
	}
}
