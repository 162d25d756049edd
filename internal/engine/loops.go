package engine

import (
	"cmp"
	"debug/elf"
	"slices"

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/unwind"
	"golang.org/x/arch/x86/x86asm"
)

// A frame-pointer loop: a frame whose saved frame pointer points to
// itself, or a ring of frames pointing to each other (a function that
// used rbp for data, a corrupted stack). The kernel's walk then repeats
// the same return addresses until the depth limit. The callchain carries
// no frame addresses, so the same (return address, frame) pair twice,
// which no real stack has, cannot be seen; a repeated sequence of return
// addresses is also what recursion shows. loopStack therefore judges only
// stacks cut at the limit whose return addresses end in a repeated cycle,
// and calls one a loop only when some adjacent pair of the cycle cannot
// be a call: recursion, direct or mutual, through a tail call, a function
// pointer or code without frame pointers, is never called a loop.

// maxLoopPeriod is the longest cycle of return addresses looked for;
// loopRepeats the number of times it must repeat at the end of the stack.
const (
	maxLoopPeriod = 16
	loopRepeats   = 3
)

// maxTailFuncs bounds the functions followed through tail jumps when
// looking for a way from a call's target to a function.
const maxTailFuncs = 32

// loopStack reports whether frames (a frame-pointer stack cut at the
// depth limit, innermost first) ends in a cycle of user return addresses
// that cannot be real: a pair of adjacent return addresses in the cycle,
// inner in function G and outer after a call instruction, where G is
// code that sets up a frame pointer (so the frame read after G's return
// address is G's own, and the outer return address is where G was called
// from) and the call is a direct call whose target cannot reach G, not
// even through tail jumps. Anything not known for sure (no symbols, an
// indirect call or jump, code that cannot be read or decoded, a function
// without the standard prologue) keeps the stack.
func (l *loader) loopStack(frames []unwind.Frame) bool {
	var ret []*unwind.Frame
	for i := range frames {
		if f := &frames[i]; !f.Kernel && f.Kind == unwind.FrameReturn {
			ret = append(ret, f)
		}
	}
	p := cyclePeriod(ret)
	if p == 0 {
		return false
	}
	n := len(ret)
	for j := n - 1 - p; j < n-1; j++ {
		if l.notCall(ret[j], ret[j+1]) {
			return true
		}
	}
	return false
}

// cyclePeriod returns the shortest period, up to maxLoopPeriod, with
// which the last loopRepeats cycles of ret repeat (by runtime address),
// or 0.
func cyclePeriod(ret []*unwind.Frame) int {
	n := len(ret)
	for p := 1; p <= maxLoopPeriod && loopRepeats*p <= n; p++ {
		ok := true
		for j := n - loopRepeats*p; j < n-p && ok; j++ {
			ok = ret[j].Addr == ret[j+p].Addr
		}
		if ok {
			return p
		}
	}
	return 0
}

// notCall reports whether return address outer cannot be where the
// function holding return address inner was called from.
func (l *loader) notCall(inner, outer *unwind.Frame) bool {
	oi, oo := inner.Object, outer.Object
	if oi == nil || oo == nil || oi != oo || oi.Kind != addrspace.KindFile {
		return false // a call between objects goes through an indirect jump (the PLT)
	}
	// by the call's last byte: a call to a function that does not
	// return may end its caller, its return address the next function's
	g, ok := l.code.function(oi, inner.ObjAddr-1)
	if !ok || !l.code.framePrologue(oi, g) {
		return false
	}
	target, ok := l.directCall(oo, outer.ObjAddr)
	if !ok {
		return false
	}
	return !l.code.mayReach(oo, target, g)
}

// directCall returns the target of the direct call (CALL rel32) that
// ends at return address ra of obj, false if it is none.
func (l *loader) directCall(obj *addrspace.Object, ra addrspace.ObjAddr) (addrspace.ObjAddr, bool) {
	r := l.addrs.ret(obj, ra)
	if r.check != retCall || ra-r.call != 5 {
		return 0, false
	}
	b, st := l.code.readCode(obj, r.call, 5)
	if st != codeOK || len(b) != 5 {
		return 0, false
	}
	inst, err := x86asm.Decode(b, 64)
	if err != nil || inst.Op != x86asm.CALL {
		return 0, false
	}
	rel, ok := inst.Args[0].(x86asm.Rel)
	if !ok {
		return 0, false
	}
	return addrspace.ObjAddr(int64(ra) + int64(rel)), true
}

// funcRange is a function symbol's code: [start, end).
type funcRange struct{ start, end addrspace.ObjAddr }

func (r funcRange) has(a addrspace.ObjAddr) bool { return a >= r.start && a < r.end }

// function returns the function symbol of obj holding a, false if no
// symbol of a known size does.
func (c *codeReader) function(obj *addrspace.Object, a addrspace.ObjAddr) (funcRange, bool) {
	if _, st := c.readCode(obj, a, 1); st == codeNoFile {
		return funcRange{}, false
	}
	c.mu.Lock() // the preparers read code at the same time
	ec := c.files[obj.Path]
	if ec == nil {
		c.mu.Unlock()
		return funcRange{}, false
	}
	if ec.funcs == nil {
		ec.funcs = funcSymbols(ec.f.File)
	}
	funcs := ec.funcs
	c.mu.Unlock()
	i, _ := slices.BinarySearchFunc(funcs, a, func(r funcRange, a addrspace.ObjAddr) int {
		switch {
		case r.end <= a:
			return -1
		case r.start > a:
			return 1
		}
		return 0
	})
	if i < len(funcs) && funcs[i].has(a) {
		return funcs[i], true
	}
	return funcRange{}, false
}

// funcSymbols returns the sized function symbols of f (its symbol table,
// else its dynamic one), sorted, overlapping ones (aliases) merged.
func funcSymbols(f *elf.File) []funcRange {
	syms, err := f.Symbols()
	if err != nil || len(syms) == 0 {
		syms, _ = f.DynamicSymbols()
	}
	out := []funcRange{}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Size > 0 && s.Value != 0 {
			out = append(out, funcRange{addrspace.ObjAddr(s.Value), addrspace.ObjAddr(s.Value + s.Size)})
		}
	}
	slices.SortFunc(out, func(a, b funcRange) int {
		return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(b.end, a.end))
	})
	merged := out[:0]
	for _, r := range out {
		if k := len(merged) - 1; k >= 0 && r.start < merged[k].end {
			merged[k].end = max(merged[k].end, r.end)
			continue
		}
		merged = append(merged, r)
	}
	return merged
}

// endbr64 is the instruction that may open a function built with
// -fcf-protection (the default of many distributions' compilers).
var endbr64 = []byte{0xf3, 0x0f, 0x1e, 0xfa}

// framePrologue reports whether function g of obj begins by setting up
// a frame pointer: push %rbp; mov %rsp,%rbp (after an endbr64).
func (c *codeReader) framePrologue(obj *addrspace.Object, g funcRange) bool {
	b, st := c.readCode(obj, g.start, 8)
	if st != codeOK {
		return false
	}
	if len(b) >= 4 && slices.Equal(b[:4], endbr64) {
		b = b[4:]
	}
	return len(b) >= 4 && b[0] == 0x55 && b[1] == 0x48 && b[2] == 0x89 && b[3] == 0xe5
}

// mayReach reports whether a call to target in obj may enter function g
// without leaving a frame of its own between: target is in g, or its
// function's jumps out of itself (tail calls) may lead there. An indirect
// jump, code without a symbol and code that does not decode may lead
// anywhere.
func (c *codeReader) mayReach(obj *addrspace.Object, target addrspace.ObjAddr, g funcRange) bool {
	todo := []addrspace.ObjAddr{target}
	var seen []funcRange
	for len(todo) > 0 {
		a := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if g.has(a) {
			return true
		}
		fn, ok := c.function(obj, a)
		if !ok || len(seen) == maxTailFuncs {
			return true
		}
		if slices.Contains(seen, fn) {
			continue
		}
		seen = append(seen, fn)
		out, ok := c.jumpsOut(obj, fn)
		if !ok {
			return true
		}
		todo = append(todo, out...)
	}
	return false
}

// jumpsOut returns the targets outside fn of fn's direct jumps, false if
// fn has an indirect jump or cannot be read or decoded.
func (c *codeReader) jumpsOut(obj *addrspace.Object, fn funcRange) ([]addrspace.ObjAddr, bool) {
	b, st := c.readCode(obj, fn.start, int(fn.end-fn.start))
	if st != codeOK || len(b) != int(fn.end-fn.start) {
		return nil, false
	}
	var out []addrspace.ObjAddr
	for off := 0; off < len(b); {
		if len(b)-off >= 4 && slices.Equal(b[off:off+4], endbr64) {
			off += 4
			continue
		}
		inst, err := x86asm.Decode(b[off:], 64)
		if err != nil {
			return nil, false
		}
		off += inst.Len
		if !isJump(inst.Op) {
			continue
		}
		rel, ok := inst.Args[0].(x86asm.Rel)
		if !ok {
			return nil, false
		}
		if t := fn.start + addrspace.ObjAddr(int64(off)+int64(rel)); !fn.has(t) {
			out = append(out, t)
		}
	}
	return out, true
}

// isJump reports whether op transfers control without a call: JMP and
// the conditional jumps (a tail call may be conditional).
func isJump(op x86asm.Op) bool {
	switch op {
	case x86asm.JMP, x86asm.JA, x86asm.JAE, x86asm.JB, x86asm.JBE, x86asm.JCXZ, x86asm.JE, x86asm.JECXZ,
		x86asm.JG, x86asm.JGE, x86asm.JL, x86asm.JLE, x86asm.JNE, x86asm.JNO, x86asm.JNP, x86asm.JNS,
		x86asm.JO, x86asm.JP, x86asm.JRCXZ, x86asm.JS, x86asm.LJMP:
		return true
	}
	return false
}
