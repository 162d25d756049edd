package engine

import (
	"debug/elf"
	"path/filepath"

	"github.com/hwprof/hwprof/ccmap"
	"github.com/hwprof/hwprof/internal/procmap"
	"golang.org/x/arch/x86/x86asm"
)

// An addrKey is one code address of the address-level profile: an
// instruction in an object (its address in the object's ELF address
// space), or, for an address no mapping held, the runtime address with a
// nil object.
type addrKey struct {
	obj  *procmap.Object
	pid  uint32 // JIT code: the process, whose perf map names it; else 0
	addr procmap.ObjAddr
}

// newAddrKey is the key of address a of obj in process pid.
func newAddrKey(obj *procmap.Object, pid uint32, a procmap.ObjAddr) addrKey {
	if obj == nil || obj.Kind != procmap.KindJIT {
		pid = 0
	}
	return addrKey{obj: obj, pid: pid, addr: a}
}

// addrTable interns code addresses into dense ids (ccmap.FuncIDs of the
// address-level map) and turns return addresses into the addresses of
// their call instructions, each unique return address decoded once.
type addrTable struct {
	ids   map[addrKey]ccmap.FuncID
	keys  []addrKey
	calls map[addrKey]procmap.ObjAddr // return address -> call instruction
	code  *codeReader
}

func newAddrTable(code *codeReader) *addrTable {
	return &addrTable{
		ids:   make(map[addrKey]ccmap.FuncID),
		calls: make(map[addrKey]procmap.ObjAddr),
		code:  code,
	}
}

// id returns the id of a code address, giving it one the first time.
func (t *addrTable) id(k addrKey) ccmap.FuncID {
	if id, ok := t.ids[k]; ok {
		return id
	}
	id := ccmap.FuncID(len(t.keys))
	t.ids[k] = id
	t.keys = append(t.keys, k)
	return id
}

// callOf returns the address of the call instruction that returns to ra
// in obj: the instruction ending at ra that decodes as a call (a 5-byte
// CALL rel32 first, then CALL r/m of 2 to 7 bytes). When the code cannot
// be read or no call ends at ra, it is ra-1, inside the call instruction,
// which still names the right function and source line.
func (t *addrTable) callOf(obj *procmap.Object, ra procmap.ObjAddr) procmap.ObjAddr {
	if ra == 0 {
		return 0
	}
	k := addrKey{obj: obj, addr: ra}
	if a, ok := t.calls[k]; ok {
		return a
	}
	a := ra - 1
	if obj != nil && ra > 7 {
		if b, ok := t.code.read(obj, ra-7, 7); ok && len(b) == 7 {
			a = ra - procmap.ObjAddr(callLenBefore(b))
		}
	}
	t.calls[k] = a
	return a
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
// opened once.
type codeReader struct {
	resolve func(path string) string // recorded path -> file to open
	files   map[string]*elfCode
}

type elfCode struct {
	f     *elf.File
	progs []*elf.Prog // executable PT_LOAD segments
}

func newCodeReader(resolve func(string) string) *codeReader {
	return &codeReader{resolve: resolve, files: make(map[string]*elfCode)}
}

// read returns up to n bytes of code at addr of obj (fewer at the end of
// a segment), false if it has no file or addr is in no executable segment.
func (c *codeReader) read(obj *procmap.Object, addr procmap.ObjAddr, n int) ([]byte, bool) {
	if obj.Kind != procmap.KindFile || !filepath.IsAbs(obj.Path) {
		return nil, false
	}
	ec, ok := c.files[obj.Path]
	if !ok {
		ec = c.open(obj.Path)
		c.files[obj.Path] = ec
	}
	if ec == nil {
		return nil, false
	}
	a := uint64(addr)
	for _, p := range ec.progs {
		if a >= p.Vaddr && a < p.Vaddr+p.Filesz {
			b := make([]byte, min(uint64(n), p.Vaddr+p.Filesz-a))
			if _, err := p.ReadAt(b, int64(a-p.Vaddr)); err != nil {
				return nil, false
			}
			return b, true
		}
	}
	return nil, false
}

func (c *codeReader) open(path string) *elfCode {
	f, err := elf.Open(c.resolve(path))
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
