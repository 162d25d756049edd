package clobber

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"golang.org/x/arch/x86/x86asm"
	"golang.org/x/sys/unix"

	"github.com/hwprof/hwprof/internal/testprog"
	"github.com/hwprof/hwprof/perf"
)

// base is where hand-assembled code is placed: chunk-aligned, as code in
// a mapping is page-aligned.
const base = 0x400000

// sliceCode serves b at addr as a mapping ending with b.
func sliceCode(addr uint64, b []byte) Code {
	return func(at uint64, buf []byte) (int, error) {
		if at < addr || at >= addr+uint64(len(b)) {
			return 0, fmt.Errorf("no code at %#x", at)
		}
		return copy(buf, b[at-addr:]), nil
	}
}

// asm joins hex byte strings ("48 89 f8") into code.
func asm(t testing.TB, parts ...string) []byte {
	t.Helper()
	var out []byte
	for _, p := range parts {
		for _, f := range strings.Fields(p) {
			var v byte
			if _, err := fmt.Sscanf(f, "%02x", &v); err != nil || len(f) != 2 {
				t.Fatalf("bad byte %q", f)
			}
			out = append(out, v)
		}
	}
	return out
}

// Register bits, written out independently of the package's constants.
const (
	ax  = 1 << perf.RegAX
	bx  = 1 << perf.RegBX
	cx  = 1 << perf.RegCX
	dx  = 1 << perf.RegDX
	si  = 1 << perf.RegSI
	di  = 1 << perf.RegDI
	bp  = 1 << perf.RegBP
	r8  = 1 << perf.RegR8
	x11 = 1 << (perf.RegR8 + 3)
	r12 = 1 << (perf.RegR8 + 4)
)

func names(m uint32) string {
	n := []string{perf.RegAX: "rax", perf.RegBX: "rbx", perf.RegCX: "rcx", perf.RegDX: "rdx",
		perf.RegSI: "rsi", perf.RegDI: "rdi", perf.RegBP: "rbp", perf.RegSP: "rsp"}
	var out []string
	for i := 0; i < 32; i++ {
		if m&(1<<i) == 0 {
			continue
		}
		if i < len(n) && n[i] != "" {
			out = append(out, n[i])
		} else if i >= perf.RegR8 && i <= perf.RegR15 {
			out = append(out, fmt.Sprintf("r%d", i-perf.RegR8+8))
		} else {
			out = append(out, fmt.Sprintf("bit%d", i))
		}
	}
	return "{" + strings.Join(out, " ") + "}"
}

// Each row is one function at base, ending in ret unless said otherwise.
var rows = []struct {
	name string
	code string
	want uint32
	ok   bool
}{
	{"mov", "48 89 f8 c3", ax, true},                                               // mov rax, rdi
	{"sub-registers", "88 e0 41 89 c8 b7 01 66 89 d6 c3", ax | r8 | bx | si, true}, // mov al, ah; mov r8d, ecx; mov bh, 1; mov si, dx
	{"read-only and stores", "48 39 c8 48 85 c9 48 0f a3 c8 53 0f 1f 40 00 f3 0f 1e fa f3 90 0f ae e8 0f 18 08 48 89 07 c3", 0, true},
	{"nop with a register operand", "0f 1f c0 c3", 0, true}, // nop eax
	{"mul", "48 f7 e1 c3", ax | dx, true},                   // mul rcx
	{"div reads its operand", "48 f7 f1 c3", ax | dx, true}, // div rcx
	{"idiv", "48 f7 f9 c3", ax | dx, true},                  // idiv rcx
	{"imul one operand", "48 f7 e9 c3", ax | dx, true},      // imul rcx
	{"imul two operands", "48 0f af d9 c3", bx, true},       // imul rbx, rcx
	{"cqo cdq cwd", "48 99 99 66 99 c3", dx, true},
	{"cdqe cwde cbw", "48 98 98 66 98 c3", ax, true},
	{"xchg", "48 87 ca c3", cx | dx, true},                     // xchg rdx, rcx
	{"xadd", "48 0f c1 ca c3", cx | dx, true},                  // xadd rdx, rcx
	{"xadd to memory", "48 0f c1 0f c3", cx, true},             // xadd [rdi], rcx
	{"cmpxchg to memory", "f0 48 0f b1 0f c3", ax, true},       // lock cmpxchg [rdi], rcx
	{"cmpxchg to a register", "48 0f b1 ca c3", ax | dx, true}, // cmpxchg rdx, rcx
	{"cmpxchg8b", "0f c7 0f c3", ax | dx, true},                // cmpxchg8b [rdi]
	{"cmpxchg16b", "48 0f c7 0f c3", ax | dx, true},            // cmpxchg16b [rdi]
	{"rdtsc", "0f 31 c3", ax | dx, true},
	{"rdtscp", "0f 01 f9 c3", ax | dx | cx, true},
	{"cpuid", "0f a2 c3", ax | bx | cx | dx, true},
	{"syscall", "0f 05 c3", ax | cx | x11, true},
	{"loop", "e2 fe c3", cx, true}, // loop .
	{"leave", "c9 c3", bp, true},
	{"pop", "41 5c c3", r12, true},      // pop r12
	{"movs", "48 a5 c3", si | di, true}, // movsq
	{"rep movs", "f3 48 a5 c3", si | di | cx, true},
	{"stos", "aa c3", di, true},                // stosb
	{"rep stos", "f3 48 ab c3", di | cx, true}, // rep stosq
	{"lods", "ac c3", si | ax, true},           // lodsb
	{"scas reads rax", "ae c3", di, true},      // scasb
	{"repne scas", "f2 ae c3", di | cx, true},
	{"cmps", "a6 c3", si | di, true}, // cmpsb
	{"repe cmps", "f3 a6 c3", si | di | cx, true},
	{"xgetbv", "0f 01 d0 c3", ax | dx, true},
	{"mulx writes two", "c4 e2 f3 f6 c0 c3", ax | cx, true},                    // mulx rax, rcx, rax
	{"pdep", "c4 e2 f3 f5 c2 c3", ax, true},                                    // pdep rax, rcx, rdx
	{"shlx", "c4 e2 f1 f7 c2 c3", ax, true},                                    // shlx rax, rdx, rcx
	{"andn", "c4 e2 f0 f2 c2 c3", ax, true},                                    // andn rax, rcx, rdx
	{"bzhi", "c4 e2 f0 f5 c2 c3", ax, true},                                    // bzhi rax, rdx, rcx
	{"rorx", "c4 e3 fb f0 c2 05 c3", ax, true},                                 // rorx rax, rdx, 5
	{"vex to a general register", "c5 f9 7e c0 c5 f9 d7 c8 c3", ax | cx, true}, // vmovd eax, xmm0; vpmovmskb ecx, xmm0
	{"vector only", "c5 f8 58 c1 66 0f ef c0 0f 29 07 c5 f8 77 c3", 0, true},   // vaddps; pxor; movaps [rdi], xmm0; vzeroupper
	{"pcmpistri", "66 0f 3a 63 c1 00 c3", cx, true},
	{"x87", "d9 e8 dd d8 df e0 c3", ax, true}, // fld1; fstp st0; fnstsw ax
	{"lahf", "9f c3", ax, true},
	{"setcc cmov lea", "0f 94 c1 48 0f 44 da 48 8d 34 7f c3", cx | bx | si, true},    // sete cl; cmove rbx, rdx; lea rsi, [rdi+rdi*2]
	{"unknown op to a register counts", "f3 48 0f b8 c1 48 0f c9 c3", ax | cx, true}, // popcnt rax, rcx; bswap rcx
	{"rdrand decoded without its operand", "48 0f c7 f0 c3", All, false},             // rdrand rax: x86asm shows no operand
	{"vzeroupper then more", "c5 f8 77 31 d2 c4 e1 7c 77 c3", dx, true},              // vzeroupper; xor edx, edx; vzeroall (3-byte VEX)
	{"ud2 ends the path", "48 31 c0 0f 0b 48 31 db c3", ax, true},                    // xor rax, rax; ud2; xor rbx, rbx
	{"ret imm", "48 31 c0 c2 08 00 48 31 db c3", ax, true},                           // xor rax, rax; ret 8; (dead) xor rbx, rbx
	{"branches", "48 85 ff 74 03 31 c0 c3 31 db c3", ax | bx, true},                  // test rdi, rdi; je +3; xor eax, eax; ret; xor ebx, ebx; ret
	{"loop back", "31 c9 48 ff c1 48 39 f9 75 f8 c3", cx, true},                      // xor ecx, ecx; L: inc rcx; cmp rcx, rdi; jne L
	{"jmp over", "eb 03 48 31 db 31 c0 c3", ax, true},                                // jmp +3; (skipped) xor rbx, rbx; xor eax, eax
	{"jrcxz", "e3 02 31 d2 c3", dx, true},                                            // jrcxz +2; xor edx, edx
	{"xbegin", "c7 f8 00 00 00 00 31 d2 0f 01 d5 c3", ax | dx, true},                 // xbegin +0; xor edx, edx; xend
	{"indirect jmp", "ff e0", All, false},                                            // jmp rax
	{"indirect jmp via got", "ff 25 00 00 00 00", All, false},                        // jmp [rip]
	{"indirect call", "ff d0 c3", All, false},                                        // call rax
	{"int3", "31 c0 cc c3", All, false},
	{"unknown instruction without operands", "0f 01 f8 c3", All, false}, // swapgs
	{"sysenter", "0f 34", All, false},
	{"truncated at the mapping's end", "31 c0 48", All, false}, // xor eax, eax; rex.w
	{"falls off the mapping", "31 c0", All, false},
	{"self call", "e8 fb ff ff ff c3", All, false},            // call .
	{"jump out of the mapping", "e9 00 10 00 00", All, false}, // jmp +0x1000
	{"endbr64 then mov", "f3 0f 1e fa 48 89 f8 c3", ax, true},
	{"lock add to memory", "f0 48 01 07 c3", 0, true}, // lock add [rdi], rax
	{"in", "ec c3", ax, true},                         // in al, dx
	{"out reads", "ee c3", 0, true},                   // out dx, al
	{"popf and pushf", "9c 9d c3", 0, true},
	{"enter", "c8 10 00 00 c9 c3", bp, true}, // enter 16, 0; leave
	{"xlat", "d7 c3", ax, true},
	{"movabs", "90 90 48 b8 01 02 03 04 05 06 07 08 c3", ax, true},                             // nop; nop; movabs rax, imm
	{"rsp is never reported", "48 83 ec 08 48 89 e5 c3", bp, true},                             // sub rsp, 8; mov rbp, rsp
	{"r8-r15 extended", "4d 31 c0 4d 31 db c3", r8 | x11, true},                                // xor r8, r8; xor r11, r11
	{"high bytes", "88 fe c3", dx, true},                                                       // mov dh, bh: rbx only read
	{"fallthrough into a tail", "48 85 ff 75 02 31 c9 e9 00 00 00 00 31 db c3", bx | cx, true}, // test; jne +2; xor ecx, ecx; jmp +0 (tail); xor ebx, ebx
}

func TestRows(t *testing.T) {
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			a := New(sliceCode(base, asm(t, r.code)))
			m, ok := a.Clobbers(base)
			if m != r.want || ok != r.ok {
				t.Errorf("%s: Clobbers = %s, %v; want %s, %v", r.code, names(m), ok, names(r.want), r.ok)
			}
			if m&(1<<perf.RegSP|1<<perf.RegIP|1<<perf.RegFlags) != 0 {
				t.Errorf("mask %s has rsp, rip or flags", names(m))
			}
		})
	}
}

// TestMovabsAcrossChunks decodes an instruction that straddles two chunks
// of the reads through Code.
func TestMovabsAcrossChunks(t *testing.T) {
	code := bytes.Repeat([]byte{0x90}, chunkSize-4)
	code = append(code, asm(t, "48 b8 01 02 03 04 05 06 07 08 c3")...)
	reads := 0
	c := sliceCode(base, code)
	a := New(func(at uint64, buf []byte) (int, error) { reads++; return c(at, buf) })
	if m, ok := a.Clobbers(base); m != ax || !ok {
		t.Fatalf("Clobbers = %s, %v; want {rax}, true", names(m), ok)
	}
	if reads != 2 {
		t.Errorf("%d reads through Code for two chunks, want 2 (one per chunk)", reads)
	}
}

func callAt(from, to uint64) string {
	rel := uint32(int32(int64(to) - int64(from+5)))
	return fmt.Sprintf("e8 %02x %02x %02x %02x", byte(rel), byte(rel>>8), byte(rel>>16), byte(rel>>24))
}

// TestCalls: a direct call adds its callee's clobbers; callees are
// memoized by entry; a call cycle cannot be told.
func TestCalls(t *testing.T) {
	const f2 = base + 0x40
	code := make([]byte, 0x80)
	copy(code, asm(t, callAt(base, f2), "31 f6 c3"))              // f1: call f2; xor esi, esi; ret
	copy(code[0x40:], asm(t, "48 c7 c2 01 00 00 00 45 31 c0 c3")) // f2: mov rdx, 1; xor r8d, r8d; ret
	reads := 0
	c := sliceCode(base, code)
	a := New(func(at uint64, buf []byte) (int, error) { reads++; return c(at, buf) })
	if m, ok := a.Clobbers(base); m != dx|si|r8 || !ok {
		t.Fatalf("f1: Clobbers = %s, %v; want {rdx rsi r8}, true", names(m), ok)
	}
	if m, ok := a.Clobbers(base + 5); m != si || !ok {
		t.Errorf("after the call: Clobbers = %s, %v; want {rsi}, true", names(m), ok)
	}
	before := reads
	if m, ok := a.Clobbers(f2); m != dx|r8 || !ok {
		t.Errorf("f2: Clobbers = %s, %v; want {rdx r8}, true", names(m), ok)
	}
	if reads != before {
		t.Errorf("f2 was read again (%d reads); its entry should be memoized", reads-before)
	}

	// f1 calls f2, f2 calls f1.
	copy(code, asm(t, callAt(base, f2), "31 f6 c3"))
	copy(code[0x40:], asm(t, callAt(f2, base), "31 d2 c3"))
	a = New(sliceCode(base, code))
	if m, ok := a.Clobbers(base); m != All || ok {
		t.Errorf("call cycle: Clobbers = %s, %v; want All, false", names(m), ok)
	}
	if _, ok := a.Clobbers(f2); ok {
		t.Errorf("call cycle from f2: ok")
	}

	// A callee that cannot be told makes its caller unknown.
	copy(code[0x40:], asm(t, "ff e0"))
	a = New(sliceCode(base, code))
	if _, ok := a.Clobbers(base); ok {
		t.Errorf("call of an indirect jump: ok")
	}
}

// TestBound: more than MaxInsts instructions in one function cannot be
// told; as many can.
func TestBound(t *testing.T) {
	for _, n := range []int{MaxInsts - 1, MaxInsts} {
		code := append(bytes.Repeat([]byte{0x90}, n), 0xc3)
		m, ok := New(sliceCode(base, code)).Clobbers(base)
		if want := n+1 <= MaxInsts; ok != want || (ok && m != 0) {
			t.Errorf("%d nops and ret: Clobbers = %s, %v; want ok=%v", n, names(m), ok, want)
		}
	}
}

// TestUnreadable: unreadable code cannot be told, and the answer is not
// kept once the code can be read.
func TestUnreadable(t *testing.T) {
	code := asm(t, "31 d2 c3")
	fail := true
	a := New(func(at uint64, buf []byte) (int, error) {
		if fail {
			return 0, unix.EFAULT
		}
		return sliceCode(base, code)(at, buf)
	})
	if m, ok := a.Clobbers(base); ok || m != All {
		t.Errorf("unreadable: Clobbers = %s, %v; want All, false", names(m), ok)
	}
	fail = false
	if m, ok := a.Clobbers(base); !ok || m != dx {
		t.Errorf("readable again: Clobbers = %s, %v; want {rdx}, true", names(m), ok)
	}
}

// phased is the ELF of testdata/c/adaptive_phased.c as built for the
// adaptive period, with its code and symbols.
type phased struct {
	code   Code   // over the test's own read of the segment
	object Code   // objectCode
	text   []byte // the executable segment
	addr   uint64 // its address
	delta  uint64 // its address less its file offset
	syms   map[string]elf.Symbol
}

func loadPhased(t testing.TB) *phased {
	t.Helper()
	bin := testprog.Build(t, "c/adaptive_phased.c", "-O2", "-g", "-fno-omit-frame-pointer", "-mno-omit-leaf-frame-pointer")
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	p := &phased{syms: map[string]elf.Symbol{}}
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_LOAD && prog.Flags&elf.PF_X != 0 {
			p.text = make([]byte, prog.Filesz)
			if _, err := prog.ReadAt(p.text, 0); err != nil {
				t.Fatal(err)
			}
			p.addr, p.delta = prog.Vaddr, prog.Vaddr-prog.Off
		}
	}
	if p.text == nil {
		t.Fatal("no executable segment")
	}
	p.code = sliceCode(p.addr, p.text)
	p.object = objectCode(f)
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		p.syms[s.Name] = s
	}
	for _, n := range []string{"fa", "fb", "fc", "calls", "spin"} {
		if s, ok := p.syms[n]; !ok || s.Size == 0 {
			t.Fatalf("no symbol %s with a size", n)
		}
	}
	return p
}

// insts decodes the function name linearly over its symbol's size.
func (p *phased) insts(t testing.TB, name string) []located {
	t.Helper()
	s := p.syms[name]
	var out []located
	for pc := s.Value; pc < s.Value+s.Size; {
		in, err := x86asm.Decode(p.text[pc-p.addr:], 64)
		if err != nil {
			t.Fatalf("%s+%#x: %v", name, pc-s.Value, err)
		}
		out = append(out, located{pc, in})
		pc += uint64(in.Len)
	}
	return out
}

type located struct {
	pc uint64
	in x86asm.Inst
}

// The test's own register naming: the 64-bit register each name is part
// of, by x86asm's names.
func regBit(a x86asm.Arg) uint32 {
	r, ok := a.(x86asm.Reg)
	if !ok {
		return 0
	}
	n := strings.ToLower(r.String())
	for _, row := range []struct {
		bit   uint32
		names string
	}{
		{ax, "rax eax ax al ah"}, {bx, "rbx ebx bx bl bh"}, {cx, "rcx ecx cx cl ch"},
		{dx, "rdx edx dx dl dh"}, {si, "rsi esi si sil sib"}, {di, "rdi edi di dil dib"},
		{bp, "rbp ebp bp bpl bpb"},
	} {
		for _, f := range strings.Fields(row.names) {
			if n == f {
				return row.bit
			}
		}
	}
	for i := 8; i <= 15; i++ {
		for _, f := range []string{"r%d", "r%dl", "r%dw", "r%db"} {
			if n == fmt.Sprintf(f, i) {
				return 1 << (perf.RegR8 + i - 8)
			}
		}
	}
	return 0
}

// destinations is what a reader of the disassembly sees written: the
// general register in Args[0] of each instruction but compares, tests and
// pushes.
func destinations(ins []located) uint32 {
	var m uint32
	for _, l := range ins {
		switch l.in.Op {
		case x86asm.CMP, x86asm.TEST, x86asm.PUSH:
			continue
		}
		m |= regBit(l.in.Args[0])
	}
	return m
}

// reads returns the general registers an instruction reads (its operands
// after the first, addresses, and the first unless it is only written).
func reads(in x86asm.Inst) uint32 {
	var m uint32
	for i, a := range in.Args {
		if a == nil {
			break
		}
		if mem, ok := a.(x86asm.Mem); ok {
			m |= regBit(mem.Base) | regBit(mem.Index)
			continue
		}
		if i == 0 {
			switch in.Op {
			case x86asm.MOV, x86asm.LEA, x86asm.MOVZX, x86asm.MOVSX, x86asm.MOVSXD, x86asm.POP:
				continue
			}
		}
		m |= regBit(a)
	}
	return m
}

func TestPhased(t *testing.T) {
	p := loadPhased(t)
	a := New(p.object)
	clob := func(name string) uint32 {
		t.Helper()
		m, ok := a.Clobbers(p.syms[name].Value)
		if !ok {
			t.Fatalf("%s: Clobbers cannot tell", name)
		}
		t.Logf("%s: %s", name, names(m))
		return m
	}
	fa, fb, fc, calls := clob("fa"), clob("fb"), clob("fc"), clob("calls")

	// Leaves: exactly what their disassembly writes.
	for _, l := range []struct {
		name string
		m    uint32
	}{{"fa", fa}, {"fb", fb}} {
		if want := destinations(p.insts(t, l.name)); l.m != want {
			t.Errorf("%s: Clobbers = %s, its instructions write %s", l.name, names(l.m), names(want))
		}
	}
	// Callers: their own writes and their callees'.
	if want := destinations(p.insts(t, "fc")) | fa | fb; fc&want != want {
		t.Errorf("fc: Clobbers = %s, lacks %s of fa, fb and its own", names(fc), names(want&^fc))
	}
	if want := destinations(p.insts(t, "calls")) | fc | fa; calls&want != want {
		t.Errorf("calls: Clobbers = %s, lacks %s of fc, fa and its own", names(calls), names(want&^calls))
	}

	// What calls keeps across its call of fa: registers it reads after the
	// call before writing them, other than fa's result in rax. They are
	// what IPA-RA leaves in caller-saved registers, and Clobbers(fa) must
	// not name them.
	ins := p.insts(t, "calls")
	faEntry := p.syms["fa"].Value
	var kept uint32
	for i, l := range ins {
		if l.in.Op != x86asm.CALL || l.in.Args[0] == nil {
			continue
		}
		rel, ok := l.in.Args[0].(x86asm.Rel)
		if !ok || l.pc+uint64(l.in.Len)+uint64(int64(rel)) != faEntry {
			continue
		}
		written := uint32(ax)
		for _, n := range ins[i+1:] {
			if n.in.Op == x86asm.RET || n.in.Op == x86asm.CALL || n.in.Op == x86asm.JMP || strings.HasPrefix(n.in.Op.String(), "J") {
				break
			}
			kept |= reads(n.in) &^ written
			if n.in.Op != x86asm.CMP && n.in.Op != x86asm.TEST {
				written |= regBit(n.in.Args[0])
			}
		}
	}
	const callerSaved = ax | cx | dx | si | di | r8 | 1<<(perf.RegR8+1) | 1<<(perf.RegR8+2) | x11
	t.Logf("calls keeps %s across its call of fa", names(kept))
	if kept&callerSaved == 0 {
		t.Errorf("calls keeps no caller-saved register across call fa (%s): the program no longer shows IPA-RA", names(kept))
	}
	if fa&kept != 0 {
		t.Errorf("Clobbers(fa) = %s names %s, which calls keeps across the call", names(fa), names(fa&kept))
	}

	// spin's loop: from its head, the loop's registers are written; the
	// registers the loop only reads and spin never writes are not.
	spin := p.insts(t, "spin")
	var head, end uint64
	for _, l := range spin {
		if rel, ok := l.in.Args[0].(x86asm.Rel); ok && rel < 0 && strings.HasPrefix(l.in.Op.String(), "J") {
			head, end = l.pc+uint64(l.in.Len)+uint64(int64(rel)), l.pc
		}
	}
	if head == 0 {
		t.Fatal("no backward branch in spin")
	}
	var loop []located
	for _, l := range spin {
		if l.pc >= head && l.pc <= end {
			loop = append(loop, l)
		}
	}
	m, ok := a.Clobbers(head)
	if !ok {
		t.Fatalf("spin loop at %#x: cannot tell", head)
	}
	body := destinations(loop)
	var onlyRead uint32
	for _, l := range loop {
		onlyRead |= reads(l.in)
	}
	onlyRead &^= destinations(spin) | bp
	t.Logf("spin loop: Clobbers %s, the loop writes %s, only reads %s", names(m), names(body), names(onlyRead))
	if body == 0 || m&body != body {
		t.Errorf("spin loop: Clobbers = %s, lacks %s that the loop writes", names(m), names(body&^m))
	}
	if onlyRead == 0 || m&onlyRead != 0 {
		t.Errorf("spin loop: Clobbers = %s; the loop only reads %s", names(m), names(onlyRead))
	}
}

func TestObjectCode(t *testing.T) {
	p := loadPhased(t)
	buf := make([]byte, 64)
	for _, at := range []uint64{p.addr, p.syms["fa"].Value, p.addr + uint64(len(p.text)) - 64} {
		n, err := p.object(at, buf)
		if err != nil || n != len(buf) || !bytes.Equal(buf, p.text[at-p.addr:][:64]) {
			t.Errorf("objectCode at %#x: %d, %v, %x; want the segment's bytes", at, n, err, buf[:n])
		}
	}
	end := p.addr + uint64(len(p.text))
	if n, err := p.object(end-10, buf); err != nil || n != 10 {
		t.Errorf("objectCode 10 bytes before the segment's end: %d, %v; want 10 bytes", n, err)
	}
	if n, err := p.object(end, buf); err == nil {
		t.Errorf("objectCode past the segment: %d bytes, no error", n)
	}
	if n, err := p.object(p.addr-1, buf); err == nil {
		t.Errorf("objectCode before the segment: %d bytes, no error", n)
	}
}

// textOfSelf returns the running address of fn and 64 bytes there from
// the test binary's file, found through the mapping that holds it.
func textOfSelf(t *testing.T, fn any) (uint64, []byte) {
	t.Helper()
	pc := uint64(reflect.ValueOf(fn).Pointer())
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(maps), "\n") {
		var lo, hi, off uint64
		var perms, dev string
		var inode uint64
		var path string
		if n, _ := fmt.Sscanf(line, "%x-%x %s %x %s %d %s", &lo, &hi, &perms, &off, &dev, &inode, &path); n < 7 || pc < lo || pc >= hi {
			continue
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		b := make([]byte, min(64, hi-pc))
		if _, err := f.ReadAt(b, int64(pc-lo+off)); err != nil {
			t.Fatal(err)
		}
		return pc, b
	}
	t.Fatalf("no file mapping holds %#x", pc)
	return 0, nil
}

func TestProcessCodeSelf(t *testing.T) {
	addr, want := textOfSelf(t, New)
	got := make([]byte, len(want))
	n, err := ProcessCode(os.Getpid())(addr, got)
	if err != nil || n != len(want) {
		t.Fatalf("ProcessCode(self)(%#x) = %d, %v; want %d bytes", addr, n, err, len(want))
	}
	if !bytes.Equal(got, want) {
		t.Errorf("process code at %#x differs from the ELF's:\n%x\n%x", addr, got, want)
	}

	// Near the end of a mapping the read is short.
	page := os.Getpagesize()
	mem, err := unix.Mmap(-1, 0, 2*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	if err := unix.Mprotect(mem[page:], unix.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	copy(mem[page-16:], "0123456789abcdef")
	end := uint64(reflect.ValueOf(&mem[0]).Pointer()) + uint64(page)
	buf := make([]byte, 64)
	n, err = ProcessCode(os.Getpid())(end-16, buf)
	if err != nil || n != 16 || string(buf[:16]) != "0123456789abcdef" {
		t.Errorf("read across a mapping's end: %d, %v, %q; want 16 bytes", n, err, buf[:n])
	}
	if n, err := ProcessCode(os.Getpid())(end, buf); err == nil {
		t.Errorf("read of a PROT_NONE page: %d bytes, no error", n)
	}
}

func TestProcessCodeExited(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	addr, want := textOfSelf(t, New)
	n, err := ProcessCode(cmd.Process.Pid)(addr, make([]byte, len(want)))
	if err == nil {
		t.Fatalf("read from exited process %d: %d bytes, no error", cmd.Process.Pid, n)
	}
	if !errors.Is(err, unix.ESRCH) {
		t.Errorf("exited process: %v, want ESRCH", err)
	}
	// Clobbers over it cannot tell.
	if _, ok := New(ProcessCode(cmd.Process.Pid)).Clobbers(addr); ok {
		t.Error("Clobbers over an exited process: ok")
	}
}

func BenchmarkClobbers(b *testing.B) {
	p := loadPhased(b)
	var entries []uint64
	for _, n := range []string{"fa", "fb", "fc", "calls", "spin"} {
		entries = append(entries, p.syms[n].Value)
	}
	for _, c := range []struct {
		name string
		code Code
	}{{"cold", p.code}, {"cold-file", p.object}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				a := New(c.code)
				for _, e := range entries {
					if _, ok := a.Clobbers(e); !ok {
						b.Fatalf("%#x: cannot tell", e)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(entries)), "ns/function")
		})
	}
	b.Run("memoized", func(b *testing.B) {
		a := New(p.code)
		for _, e := range entries {
			a.Clobbers(e)
		}
		b.ReportAllocs()
		for b.Loop() {
			for _, e := range entries {
				a.Clobbers(e)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(entries)), "ns/function")
	})
}

// TestShrinksAlongCode: from any instruction of a function, the mask is a
// subset of the mask at its entry (everything reachable from the
// instruction is reachable from the entry).
func TestShrinksAlongCode(t *testing.T) {
	p := loadPhased(t)
	a := New(p.code)
	for _, name := range []string{"fa", "fb", "fc", "calls", "spin"} {
		entry, ok := a.Clobbers(p.syms[name].Value)
		if !ok {
			t.Fatalf("%s: cannot tell", name)
		}
		for _, l := range p.insts(t, name) {
			m, ok := a.Clobbers(l.pc)
			if !ok {
				t.Errorf("%s+%#x: cannot tell", name, l.pc-p.syms[name].Value)
			} else if m&^entry != 0 {
				t.Errorf("%s+%#x: %s not within the entry's %s", name, l.pc-p.syms[name].Value, names(m), names(entry))
			}
		}
	}
}

// FuzzClobbers: any bytes give an answer without panicking, within All,
// and All when it cannot tell.
func FuzzClobbers(f *testing.F) {
	for _, r := range rows {
		f.Add(asm(f, r.code))
	}
	f.Fuzz(func(t *testing.T, code []byte) {
		a := New(sliceCode(base, code))
		for _, ip := range []uint64{base, base + 1} {
			m, ok := a.Clobbers(ip)
			if m&^All != 0 || (!ok && m != All) {
				t.Fatalf("Clobbers(%#x) = %s, %v", ip, names(m), ok)
			}
		}
	})
}

// TestLive: over a running adaptive_phased (a PIE), Clobbers through
// ProcessCode at run-time addresses agrees with Clobbers through
// objectCode at the object's addresses.
func TestLive(t *testing.T) {
	p := loadPhased(t)
	cmd := exec.Command(testprog.Build(t, "c/adaptive_phased.c", "-O2", "-g", "-fno-omit-frame-pointer", "-mno-omit-leaf-frame-pointer"), "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	// The executable mapping of the program, once exec is done.
	var bias uint64
	found := false
	for try := 0; !found && try < 200; try++ {
		maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", cmd.Process.Pid))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(maps), "\n") {
			var lo, hi, off, inode uint64
			var perms, dev, path string
			if n, _ := fmt.Sscanf(line, "%x-%x %s %x %s %d %s", &lo, &hi, &perms, &off, &dev, &inode, &path); n == 7 &&
				perms[2] == 'x' && strings.HasSuffix(path, "/adaptive_phased") {
				bias = lo - (off + p.delta) // lo holds file offset off, at object address off + delta
				found = true
			}
		}
		if !found {
			time.Sleep(5 * time.Millisecond)
		}
	}
	if !found {
		t.Fatal("no executable mapping of adaptive_phased in the running process")
	}
	live, file := New(ProcessCode(cmd.Process.Pid)), New(p.object)
	for _, name := range []string{"fa", "fb", "fc", "calls", "spin"} {
		at := p.syms[name].Value
		lm, lok := live.Clobbers(at + bias)
		fm, fok := file.Clobbers(at)
		if !lok || !fok || lm != fm {
			t.Errorf("%s: live %s, %v; file %s, %v", name, names(lm), lok, names(fm), fok)
		}
	}
}

// objectCode returns a Code over the executable PT_LOAD segments of the
// ELF object f, at the object's own addresses (for a shared library or a
// PIE, the caller subtracts the mapping's load bias from run-time
// addresses). Reads are short at a segment's end and fail outside every
// executable segment. f must stay open while the Code is used. The tests
// read programs' code from their files with it, and check ProcessCode
// against it.
func objectCode(f *elf.File) Code {
	var segs []*elf.Prog
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 {
			segs = append(segs, p)
		}
	}
	return func(addr uint64, buf []byte) (int, error) {
		for _, p := range segs {
			if addr < p.Vaddr || addr-p.Vaddr >= p.Filesz {
				continue
			}
			n := min(uint64(len(buf)), p.Filesz-(addr-p.Vaddr))
			got, err := p.ReadAt(buf[:n], int64(addr-p.Vaddr))
			if err != nil && got == 0 {
				return 0, fmt.Errorf("clobber: read code at %#x: %w", addr, err)
			}
			return got, nil
		}
		return 0, fmt.Errorf("clobber: read code at %#x: %w", addr, errNoSegment)
	}
}

var errNoSegment = errors.New("no executable segment there")
