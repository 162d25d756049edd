// Package clobber tells which general registers the rest of a running
// function's activation may still write, from its machine code (x86-64).
//
// A sample taken at ip in a function F sees registers that the code still
// to run in F's activation cannot write: they hold values that are
// constant for the rest of the activation — F's arguments it keeps, or its
// caller's state kept in caller-saved registers across the call because
// the compiler knows F does not write them (gcc's interprocedural register
// allocation, -fipa-ra). Analyzer.Clobbers computes the complement: the
// registers that the code reachable from ip up to F's returns may write,
// following direct calls into their callees, as the compiler does.
//
// The analysis is a reachability walk over decoded instructions
// (golang.org/x/arch/x86/x86asm, 64-bit mode): fall-through, both sides of
// a conditional branch (jcc, jrcxz, loop*, xbegin), the targets of direct
// jumps (a tail call is followed into its target), a path ends at ret,
// ud2 or hlt. A direct call adds the callee's clobbers from its entry,
// analysed once per entry. It cannot tell — and says so with ok=false —
// when code is unreadable or cannot be decoded, on an indirect jump or
// call (PLT stubs are `jmp *GOT`, so any call into another object), on
// int/int3 (a uprobe or breakpoint patched into the code hides the
// instruction it replaced), on an instruction it cannot classify, on a
// call cycle (recursion: the fixpoint is not computed; see Clobbers), and
// past MaxInsts instructions in one function or MaxTotal in one call of
// Clobbers.
//
// What the caller provides: a Code that reads the program's code, such
// as ProcessCode over a live process at run-time addresses (what the
// recorder uses). A process with uprobes or breakpoints in it shows int3
// at their addresses, so Clobbers cannot tell there; a Code over the
// object's file would not have that limit. The package keeps no
// goroutines and does not log.
package clobber

import (
	"errors"
	"fmt"

	"golang.org/x/arch/x86/x86asm"
	"golang.org/x/sys/unix"

	"github.com/hwprof/hwprof/perf"
)

// Code reads len(buf) bytes of the program's code at addr; n < len(buf)
// near the end of a mapping. An error with n == 0 means nothing could be
// read there.
type Code func(addr uint64, buf []byte) (n int, err error)

// Bounds of one analysis.
const (
	// MaxInsts bounds the distinct instructions walked from one start
	// address (a function's entry or the ip given to Clobbers), jump
	// targets included; beyond it the result is ok=false.
	MaxInsts = 4096
	// MaxTotal bounds the instructions decoded by one call of Clobbers,
	// callees included.
	MaxTotal = 1 << 16
)

// All is every general register a mask of Clobbers can hold: rax, rbx,
// rcx, rdx, rsi, rdi, rbp and r8-r15, as perf_event_x86_regs bits (RSP,
// RIP, flags and segments never set). Clobbers returns it with ok=false.
const All uint32 = (1<<(perf.RegBP+1) - 1) | (1<<(perf.RegR15+1) - 1<<perf.RegR8)

// chunkSize is the unit of reads through Code; it divides the page size, so
// an aligned chunk never starts in another mapping than the address asked
// for.
const chunkSize = 256

// maxMemo bounds the start addresses an Analyzer remembers (some tens of
// MB of map); past it the memo starts again.
const maxMemo = 1 << 20

// maxInstLen is the longest x86 instruction.
const maxInstLen = 15

// status is the outcome of the analysis of one start address.
type status uint8

const (
	known    status = iota // mask is the clobber set
	unknown                // cannot tell, for a reason of the code itself: memoized
	untimely               // cannot tell now (unreadable code, MaxTotal): not memoized
)

type result struct {
	mask uint32
	st   status
}

// Analyzer computes clobber sets and memoizes them per start address (the
// ip given to Clobbers, and each callee's entry), for the life of the
// Analyzer: it assumes the code does not change. Code is read in chunks
// of 256 bytes, cached for one call of Clobbers. Not safe for concurrent
// use.
type Analyzer struct {
	code   Code
	memo   map[uint64]result
	active map[uint64]bool   // entries being analysed (call cycle detection)
	chunks map[uint64][]byte // chunk base -> bytes read (short near a mapping's end); for one Clobbers call
	total  int               // instructions decoded in this Clobbers call
	window [maxInstLen]byte  // an instruction's bytes across two chunks
}

// New returns an Analyzer that reads code through code.
func New(code Code) *Analyzer {
	return &Analyzer{
		code:   code,
		memo:   make(map[uint64]result),
		active: make(map[uint64]bool),
		chunks: make(map[uint64][]byte),
	}
}

// Clobbers returns the general registers that the code reachable from ip,
// up to the returns of the running function, may write, as a mask of
// perf_event_x86_regs numbers (bit perf.RegAX ... perf.RegR8+7; RSP and
// RIP/flags/segments never set). Sub-registers (eax, al, ah, r8d...) count
// as the full register. ok is false when it cannot tell (code unreadable,
// an instruction it cannot decode or classify, an indirect jump or call,
// int3, a call cycle, more than MaxInsts or MaxTotal instructions); the
// mask is then All, and the caller must assume every register may be
// written.
//
// Masks shrink along the code: when ip2 is reachable from ip1,
// Clobbers(ip2) ⊆ Clobbers(ip1), so two samples of one activation at
// different ips can get different masks. A key that must be the same at
// every sample of one activation takes the mask at the function's entry
// (its symbol, or the start of its FDE): the registers that nothing in the
// activation writes.
//
// A call cycle (direct or mutual recursion reachable from ip) gives
// ok=false rather than a fixpoint: the recursive function's clobbers would
// be the union over the cycle, which is sound but needs an iteration over
// the cycle that this package does not do.
func (a *Analyzer) Clobbers(ip uint64) (mask uint32, ok bool) {
	if len(a.memo) >= maxMemo {
		clear(a.memo) // a long recording of a large program: start again
	}
	a.total = 0
	r := a.analyze(ip)
	clear(a.chunks)
	if r.st != known {
		return All, false
	}
	return r.mask & All, true
}

// analyze returns the clobbers from start, memoized unless untimely.
func (a *Analyzer) analyze(start uint64) result {
	if r, ok := a.memo[start]; ok {
		return r
	}
	if a.active[start] {
		return result{st: unknown}
	}
	a.active[start] = true
	r := a.walk(start)
	delete(a.active, start)
	if r.st != untimely {
		a.memo[start] = r
	}
	return r
}

// walk visits every instruction reachable from start without returning.
func (a *Analyzer) walk(start uint64) result {
	seen := make(map[uint64]struct{})
	work := []uint64{start}
	var mask uint32
paths:
	for len(work) > 0 {
		pc := work[len(work)-1]
		work = work[:len(work)-1]
		for {
			if _, ok := seen[pc]; ok {
				continue paths
			}
			seen[pc] = struct{}{}
			if len(seen) > MaxInsts {
				return result{st: unknown}
			}
			if a.total++; a.total > MaxTotal {
				return result{st: untimely}
			}
			in, st := a.decode(pc)
			if st != known {
				return result{st: st}
			}
			next := pc + uint64(in.Len)
			step, target := flow(&in, next)
			switch step {
			case stepEnd:
				continue paths
			case stepFail:
				return result{st: unknown}
			case stepJump:
				pc = target
				continue
			case stepBranch:
				work = append(work, target)
				mask |= implicit[in.Op] // loop*: rcx, xbegin: rax
				pc = next
				continue
			case stepCall:
				r := a.analyze(target)
				if r.st != known {
					return result{st: r.st}
				}
				mask |= r.mask
				pc = next
				continue
			}
			w, ok := writes(&in)
			if !ok {
				return result{st: unknown}
			}
			mask |= w
			pc = next
		}
	}
	return result{mask: mask}
}

// A step is what an instruction does to the walk.
type step uint8

const (
	stepNext   step = iota // fall through
	stepEnd                // the path ends (ret, ud2, hlt)
	stepFail               // cannot follow (indirect, far, trap)
	stepJump               // continue at target only
	stepBranch             // continue at target and fall through
	stepCall               // the callee at target, then fall through
)

// flow classifies a control-transfer instruction; next is the address of
// the following instruction.
func flow(in *x86asm.Inst, next uint64) (step, uint64) {
	rel, isRel := in.Args[0].(x86asm.Rel)
	target := next + uint64(int64(rel))
	switch in.Op {
	case x86asm.RET, x86asm.UD0, x86asm.UD1, x86asm.UD2, x86asm.HLT:
		return stepEnd, 0
	case x86asm.JMP:
		if isRel {
			return stepJump, target
		}
		return stepFail, 0
	case x86asm.CALL:
		if isRel {
			return stepCall, target
		}
		return stepFail, 0
	case x86asm.JA, x86asm.JAE, x86asm.JB, x86asm.JBE, x86asm.JE, x86asm.JG,
		x86asm.JGE, x86asm.JL, x86asm.JLE, x86asm.JNE, x86asm.JNO, x86asm.JNP,
		x86asm.JNS, x86asm.JO, x86asm.JP, x86asm.JS, x86asm.JCXZ, x86asm.JECXZ,
		x86asm.JRCXZ, x86asm.LOOP, x86asm.LOOPE, x86asm.LOOPNE, x86asm.XBEGIN:
		if isRel {
			return stepBranch, target
		}
		return stepFail, 0
	case x86asm.INT, x86asm.INTO, x86asm.ICEBP, x86asm.IRET, x86asm.IRETD,
		x86asm.IRETQ, x86asm.LRET, x86asm.LCALL, x86asm.LJMP, x86asm.SYSENTER,
		x86asm.SYSEXIT, x86asm.SYSRET, x86asm.RSM:
		return stepFail, 0
	}
	return stepNext, 0
}

// endbr is the first three bytes of endbr64 (fa) and endbr32 (fb), which
// x86asm (v0.32.0) decodes as a lone rep prefix.
var endbr = [3]byte{0xf3, 0x0f, 0x1e}

// decode decodes the instruction at pc.
func (a *Analyzer) decode(pc uint64) (x86asm.Inst, status) {
	b, st := a.bytes(pc)
	if st != known {
		return x86asm.Inst{}, st
	}
	if len(b) >= 4 && [3]byte(b[:3]) == endbr && (b[3] == 0xfa || b[3] == 0xfb) {
		return x86asm.Inst{Op: x86asm.NOP, Len: 4, Mode: 64}, known
	}
	if n := vzero(b); n > 0 {
		return x86asm.Inst{Op: x86asm.VZEROUPPER, Len: n, Mode: 64}, known
	}
	in, err := x86asm.Decode(b, 64)
	if err != nil || in.Op == 0 || in.Len == 0 {
		return in, unknown
	}
	return in, known
}

// vzero returns the length of the vzeroupper or vzeroall at the start of
// b, or 0. x86asm (v0.32.0) decodes every VEX instruction with a ModRM
// byte, and these two, VEX.0F 77, have none: it takes the next
// instruction's first byte for one, so the length it gives is wrong.
func vzero(b []byte) int {
	switch {
	case len(b) >= 3 && b[0] == 0xc5 && b[2] == 0x77: // two-byte VEX, map 0F
		return 3
	case len(b) >= 4 && b[0] == 0xc4 && b[1]&0x1f == 1 && b[3] == 0x77: // three-byte VEX, map 0F
		return 4
	}
	return 0
}

// bytes returns the code at pc: up to maxInstLen bytes (fewer at the end
// of a mapping), through the chunk cache.
func (a *Analyzer) bytes(pc uint64) ([]byte, status) {
	base := pc &^ (chunkSize - 1)
	c, err := a.chunk(base)
	off := pc - base
	if err != nil || off >= uint64(len(c)) {
		return nil, untimely
	}
	b := c[off:]
	if len(b) >= maxInstLen || len(c) < chunkSize {
		return b, known
	}
	// The instruction may go on in the next chunk.
	n := copy(a.window[:], b)
	if d, err := a.chunk(base + chunkSize); err == nil {
		n += copy(a.window[n:maxInstLen], d)
	}
	return a.window[:n], known
}

// chunk returns the bytes of the chunk at base, read once per Clobbers
// call.
func (a *Analyzer) chunk(base uint64) ([]byte, error) {
	if c, ok := a.chunks[base]; ok {
		if c == nil {
			return nil, errUnreadable
		}
		return c, nil
	}
	buf := make([]byte, chunkSize)
	n, err := a.code(base, buf)
	if n <= 0 || n > chunkSize {
		a.chunks[base] = nil
		if err == nil {
			err = errUnreadable
		}
		return nil, err
	}
	a.chunks[base] = buf[:n]
	return buf[:n], nil
}

var errUnreadable = errors.New("clobber: code unreadable")

// Register bit of each x86 register number (the encoding's order: ax, cx,
// dx, bx, sp, bp, si, di, r8-r15) in perf_event_x86_regs.
var encToPerf = [16]uint8{
	perf.RegAX, perf.RegCX, perf.RegDX, perf.RegBX, perf.RegSP, perf.RegBP, perf.RegSI, perf.RegDI,
	perf.RegR8, perf.RegR8 + 1, perf.RegR8 + 2, perf.RegR8 + 3, perf.RegR8 + 4, perf.RegR8 + 5, perf.RegR8 + 6, perf.RegR15,
}

// gpr returns the perf_event_x86_regs bit of the full register that a
// names, if it is a general register (any width).
func gpr(a x86asm.Arg) (uint32, bool) {
	r, ok := a.(x86asm.Reg)
	if !ok {
		return 0, false
	}
	var enc int
	switch {
	case r >= x86asm.AL && r <= x86asm.BL:
		enc = int(r - x86asm.AL)
	case r >= x86asm.AH && r <= x86asm.BH: // ah, ch, dh, bh: high bytes of ax-bx
		enc = int(r - x86asm.AH)
	case r >= x86asm.SPB && r <= x86asm.R15B:
		enc = int(r-x86asm.SPB) + 4
	case r >= x86asm.AX && r <= x86asm.R15W:
		enc = int(r - x86asm.AX)
	case r >= x86asm.EAX && r <= x86asm.R15L:
		enc = int(r - x86asm.EAX)
	case r >= x86asm.RAX && r <= x86asm.R15:
		enc = int(r - x86asm.RAX)
	default:
		return 0, false
	}
	return 1 << encToPerf[enc], true
}

const (
	rax = 1 << perf.RegAX
	rbx = 1 << perf.RegBX
	rcx = 1 << perf.RegCX
	rdx = 1 << perf.RegDX
	rsi = 1 << perf.RegSI
	rdi = 1 << perf.RegDI
	rbp = 1 << perf.RegBP
	r11 = 1 << (perf.RegR8 + 3)
)

// readOnly lists instructions that write no general register, whatever
// their operands name (rsp aside): Args[0] is read, or there is none.
var readOnly = map[x86asm.Op]bool{
	x86asm.CMP: true, x86asm.TEST: true, x86asm.BT: true, x86asm.PUSH: true,
	x86asm.PUSHF: true, x86asm.PUSHFD: true, x86asm.PUSHFQ: true,
	x86asm.POPF: true, x86asm.POPFD: true, x86asm.POPFQ: true,
	x86asm.NOP: true, x86asm.PAUSE: true, x86asm.LFENCE: true, x86asm.MFENCE: true,
	x86asm.SFENCE: true, x86asm.PREFETCHNTA: true, x86asm.PREFETCHT0: true,
	x86asm.PREFETCHT1: true, x86asm.PREFETCHT2: true, x86asm.PREFETCHW: true,
	x86asm.CLFLUSH: true, x86asm.CLC: true, x86asm.STC: true, x86asm.CMC: true,
	x86asm.CLD: true, x86asm.STD: true, x86asm.SAHF: true, x86asm.EMMS: true,
	x86asm.VZEROUPPER: true, x86asm.VZEROALL: true, x86asm.XEND: true,
	x86asm.XTEST: true, x86asm.XABORT: true, x86asm.LDMXCSR: true,
	x86asm.STMXCSR: true, x86asm.VLDMXCSR: true, x86asm.VSTMXCSR: true,
	x86asm.XSAVE: true, x86asm.XSAVE64: true, x86asm.XSAVEC: true,
	x86asm.XSAVEC64: true, x86asm.XSAVEOPT: true, x86asm.XSAVEOPT64: true,
	x86asm.XRSTOR: true, x86asm.XRSTOR64: true, x86asm.WRFSBASE: true,
	x86asm.WRGSBASE: true, x86asm.OUT: true, x86asm.MONITOR: true,
	x86asm.MWAIT: true, x86asm.PTEST: true, x86asm.VPTEST: true,
	x86asm.VTESTPS: true, x86asm.VTESTPD: true, x86asm.COMISS: true,
	x86asm.COMISD: true, x86asm.UCOMISS: true, x86asm.UCOMISD: true,
	x86asm.VCOMISS: true, x86asm.VCOMISD: true, x86asm.VUCOMISS: true,
	x86asm.VUCOMISD: true, x86asm.KORTESTB: true, x86asm.KORTESTW: true,
	x86asm.KORTESTD: true, x86asm.KORTESTQ: true, x86asm.KTESTB: true,
	x86asm.KTESTW: true, x86asm.KTESTD: true, x86asm.KTESTQ: true,
	x86asm.CLI: true, x86asm.STI: true,
}

// implicit lists the registers an instruction writes beyond its explicit
// destination (string instructions are in stringOps; the branches here,
// loop* and xbegin, are walked by flow).
var implicit = map[x86asm.Op]uint32{
	x86asm.CBW: rax, x86asm.CWDE: rax, x86asm.CDQE: rax,
	x86asm.CWD: rdx, x86asm.CDQ: rdx, x86asm.CQO: rdx,
	x86asm.CMPXCHG:    rax,
	x86asm.CMPXCHG8B:  rax | rdx,
	x86asm.CMPXCHG16B: rax | rdx,
	x86asm.RDTSC:      rax | rdx, x86asm.RDTSCP: rax | rdx | rcx,
	x86asm.RDPMC: rax | rdx, x86asm.RDMSR: rax | rdx, x86asm.XGETBV: rax | rdx,
	x86asm.CPUID:   rax | rbx | rcx | rdx,
	x86asm.SYSCALL: rax | rcx | r11,
	x86asm.LOOP:    rcx, x86asm.LOOPE: rcx, x86asm.LOOPNE: rcx,
	x86asm.XBEGIN: rax, // on abort, at the fallback
	x86asm.LEAVE:  rbp, x86asm.ENTER: rbp,
	x86asm.LAHF: rax, x86asm.XLATB: rax,
	x86asm.PCMPESTRI: rcx, x86asm.PCMPISTRI: rcx,
	x86asm.VPCMPESTRI: rcx, x86asm.VPCMPISTRI: rcx,
}

// implicitOnly lists instructions whose explicit operands are only read.
var implicitOnly = map[x86asm.Op]bool{
	x86asm.ENTER: true, x86asm.CMPXCHG8B: true, x86asm.CMPXCHG16B: true, x86asm.XLATB: true,
}

// stringOps gives the registers each string instruction writes without a
// rep prefix (the operands x86asm shows are its implicit memory operands
// and accumulator, read or written as given here).
var stringOps = map[x86asm.Op]uint32{
	x86asm.MOVSB: rsi | rdi, x86asm.MOVSW: rsi | rdi, x86asm.MOVSD: rsi | rdi, x86asm.MOVSQ: rsi | rdi,
	x86asm.CMPSB: rsi | rdi, x86asm.CMPSW: rsi | rdi, x86asm.CMPSD: rsi | rdi, x86asm.CMPSQ: rsi | rdi,
	x86asm.STOSB: rdi, x86asm.STOSW: rdi, x86asm.STOSD: rdi, x86asm.STOSQ: rdi,
	x86asm.SCASB: rdi, x86asm.SCASW: rdi, x86asm.SCASD: rdi, x86asm.SCASQ: rdi,
	x86asm.LODSB: rsi | rax, x86asm.LODSW: rsi | rax, x86asm.LODSD: rsi | rax, x86asm.LODSQ: rsi | rax,
	x86asm.INSB: rdi, x86asm.INSW: rdi, x86asm.INSD: rdi,
	x86asm.OUTSB: rsi, x86asm.OUTSW: rsi, x86asm.OUTSD: rsi,
}

// twoDest lists instructions that write their second operand too.
var twoDest = map[x86asm.Op]bool{x86asm.XCHG: true, x86asm.XADD: true, x86asm.MULX: true}

// writes returns the general registers in inst writes (rsp included, the
// caller drops it); ok is false when it cannot classify the instruction.
func writes(in *x86asm.Inst) (mask uint32, ok bool) {
	op := in.Op
	if readOnly[op] {
		return 0, true
	}
	if m, ok := stringOps[op]; ok {
		if rep(in) {
			m |= rcx
		}
		return m, true
	}
	switch op {
	case x86asm.MUL, x86asm.DIV, x86asm.IDIV:
		return rax | rdx, true // Args[0] is the source
	case x86asm.IMUL:
		if in.Args[1] == nil {
			return rax | rdx, true
		}
	}
	m, isImplicit := implicit[op]
	if isImplicit && implicitOnly[op] {
		return m, true
	}
	if in.Args[0] == nil {
		// Without operands, an instruction must be known: its writes are
		// all implicit. The x87 instructions write no general register.
		if isImplicit || (op >= x86asm.F2XM1 && op <= x86asm.FYL2XP1) {
			return m, true
		}
		return 0, false
	}
	switch in.Args[0].(type) {
	case x86asm.Imm, x86asm.Rel:
		return 0, false // not a destination: an unknown control or system instruction
	}
	if w, ok := gpr(in.Args[0]); ok {
		m |= w
	}
	if twoDest[op] {
		if w, ok := gpr(in.Args[1]); ok {
			m |= w
		}
	}
	// Otherwise Args[0] is memory (a store), a vector, x87, mask or
	// segment register: no general register written beyond the implicit.
	return m, true
}

// rep reports whether in has a rep or repne prefix.
func rep(in *x86asm.Inst) bool {
	for _, p := range in.Prefix {
		if p == 0 {
			break
		}
		switch p &^ (x86asm.PrefixImplicit | x86asm.PrefixIgnored) {
		case x86asm.PrefixREP, x86asm.PrefixREPN:
			return true
		}
	}
	return false
}

// ProcessCode returns a Code that reads the code of the live process pid
// with process_vm_readv(2) (the caller needs ptrace access to it: the same
// user without Yama restrictions, or CAP_SYS_PTRACE). A read fails once
// the process is gone. The code read is the process's view: a uprobe or
// breakpoint shows as int3, which Clobbers reports as ok=false.
func ProcessCode(pid int) Code {
	return func(addr uint64, buf []byte) (int, error) {
		if len(buf) == 0 {
			return 0, nil
		}
		local := []unix.Iovec{{Base: &buf[0]}}
		local[0].SetLen(len(buf))
		remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: len(buf)}}
		n, err := unix.ProcessVMReadv(pid, local, remote, 0)
		if err != nil {
			return 0, fmt.Errorf("clobber: read code of process %d at %#x: %w", pid, addr, err)
		}
		return n, nil
	}
}
