package unwind

import (
	"encoding/binary"
	"errors"
	"os"

	"github.com/go-delve/delve/pkg/dwarf/op"
	"github.com/go-delve/delve/pkg/dwarf/regnum"

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/perf"
)

// Options configure an Unwinder.
type Options struct {
	// Method is how Unwind unwinds; MethodAuto picks DWARF for samples
	// with a stack copy and no user callchain (--call-graph dwarf), frame
	// pointers otherwise (with the first frame repaired from a stack copy
	// when the sample has one: RepairCallchain).
	Method Method
	// MaxDepth bounds the frames of one stack (default 512).
	MaxDepth int
	// Root is the directory object paths are looked up in (perf's
	// --symfs; "" for /): neither .. nor a symbolic link leaves it, and
	// only regular files are read (package internal/safefile).
	Root string
	// Open, when set, opens the ELF file of an object path instead (for
	// objects found by build-id); it replaces Root. The unwinder closes
	// the file once it has read its CFI.
	Open func(path string) (*os.File, error)
	// FramePointerFallback unwinds a frame that has no CFI (JIT code, an
	// object without .eh_frame or not on disk) by the frame-pointer
	// convention instead of stopping: right for code that keeps frame
	// pointers (V8, HotSpot, -fno-omit-frame-pointer), wrong frames for code
	// that does not. Off by default.
	FramePointerFallback bool
	// VDSO is the image of the vdso the recorded processes had, to unwind
	// samples taken in it (clock_gettime and friends). The vdso is not a
	// file: LocalVDSO reads this process's, which is the recorded one when
	// the recording was made on this machine and kernel. Without it DWARF
	// unwinding stops in the vdso with StopNoObject.
	VDSO []byte
}

// Unwinder unwinds samples. It keeps the CFI of every object it has read,
// and the rule of every PC it has unwound through, for its lifetime. It is
// safe for concurrent use.
type Unwinder struct {
	opts   Options
	tables tables
}

// New returns an Unwinder.
func New(opts Options) *Unwinder {
	if opts.MaxDepth <= 0 {
		opts.MaxDepth = 512
	}
	return &Unwinder{opts: opts, tables: tables{open: opener(opts), m: make(map[tableKey]*tableEntry)}}
}

// Forget lets go of the CFI tables read so far: the next stack through
// an object reads its table again. A long-running reader (engine.Follower)
// calls it now and then, so that it holds the tables of the objects in
// use, not of every object it met. No unwinding may be under way.
func (u *Unwinder) Forget() {
	u.tables.mu.Lock()
	defer u.tables.mu.Unlock()
	clear(u.tables.m)
	u.tables.loaded.Clear()
}

// Unwind returns the stack of s, innermost frame first, by the Unwinder's
// method, and why it ended.
func (u *Unwinder) Unwind(s *perf.Sample, maps Maps) ([]Frame, StopReason) {
	return u.Append(nil, s, maps)
}

// Append is Unwind appending to dst, so a caller can reuse one slice.
func (u *Unwinder) Append(dst []Frame, s *perf.Sample, maps Maps) ([]Frame, StopReason) {
	return u.AppendWith(dst, s, maps, nil)
}

// Scratch is what one goroutine that unwinds many stacks keeps from one to
// the next (AppendWith): the CFI of the objects it unwound through last,
// which most stacks share. Its zero value is ready; it is not safe for
// concurrent use.
type Scratch struct {
	tables tableMemo
}

// AppendWith is Append keeping in sc (when not nil) what the next stacks
// need again.
func (u *Unwinder) AppendWith(dst []Frame, s *perf.Sample, maps Maps, sc *Scratch) ([]Frame, StopReason) {
	m := u.opts.Method
	if m == MethodAuto {
		m = MethodFP
		if hasStackCopy(s) && !hasUserChain(s) {
			m = MethodDWARF
		}
	}
	switch m {
	case MethodDWARF:
		var memo *tableMemo
		if sc != nil {
			memo = &sc.tables
		}
		return u.appendDWARF(dst, s, maps, memo)
	case MethodLBR:
		return AppendLBR(dst, s, maps), StopChainEnd
	}
	return u.appendFP(dst, s, maps), StopChainEnd
}

// appendFP is AppendCallchain of s's callchain repaired at its first user
// frame (RepairCallchain) when the sample carries a stack copy.
func (u *Unwinder) appendFP(dst []Frame, s *perf.Sample, maps Maps) []Frame {
	if !hasStackCopy(s) {
		return AppendCallchain(dst, s, maps)
	}
	chain, r := u.RepairCallchain(nil, s, maps)
	if r != LeafInserted {
		return AppendCallchain(dst, s, maps)
	}
	fixed := *s
	fixed.Callchain = chain
	return AppendCallchain(dst, &fixed, maps)
}

func hasStackCopy(s *perf.Sample) bool {
	return s.Has(perf.SampleRegsUser|perf.SampleStackUser) && s.RegsUser.ABI != perf.RegsABINone &&
		len(s.StackUser.Valid()) > 0
}

// perfToDWARF maps the perf register numbers of x86-64 (PERF_REG_X86_*) to
// DWARF register numbers.
var perfToDWARF = [...]struct{ perf, dwarf int }{
	{perf.RegAX, regnum.AMD64_Rax}, {perf.RegDX, regnum.AMD64_Rdx}, {perf.RegCX, regnum.AMD64_Rcx},
	{perf.RegBX, regnum.AMD64_Rbx}, {perf.RegSI, regnum.AMD64_Rsi}, {perf.RegDI, regnum.AMD64_Rdi},
	{perf.RegBP, regnum.AMD64_Rbp}, {perf.RegSP, regnum.AMD64_Rsp}, {perf.RegIP, regnum.AMD64_Rip},
	{perf.RegR8, regnum.AMD64_R8}, {perf.RegR8 + 1, regnum.AMD64_R9}, {perf.RegR8 + 2, regnum.AMD64_R10},
	{perf.RegR8 + 3, regnum.AMD64_R11}, {perf.RegR8 + 4, regnum.AMD64_R12}, {perf.RegR8 + 5, regnum.AMD64_R13},
	{perf.RegR8 + 6, regnum.AMD64_R14}, {perf.RegR8 + 7, regnum.AMD64_R15},
}

// regs is the register set of one frame, by DWARF number.
type regs struct {
	v     [nregs]uint64
	known [nregs]bool
}

// stack is the copy of the user stack: memory from sp0 up.
type stack struct {
	sp0  uint64
	data []byte
}

func (st *stack) read(addr uint64) (uint64, bool) {
	if addr < st.sp0 || addr-st.sp0 > uint64(len(st.data)) || uint64(len(st.data))-(addr-st.sp0) < 8 {
		return 0, false
	}
	return binary.LittleEndian.Uint64(st.data[addr-st.sp0:]), true
}

var errOutsideStack = errors.New("read outside the stack copy")

func (st *stack) readMemory(buf []byte, addr uint64) (int, error) {
	if addr < st.sp0 || addr-st.sp0 > uint64(len(st.data)) || uint64(len(st.data))-(addr-st.sp0) < uint64(len(buf)) {
		return 0, errOutsideStack
	}
	return copy(buf, st.data[addr-st.sp0:]), nil
}

// AppendDWARF appends the stack of s to dst: the kernel part of its
// callchain, if any, then the user stack unwound with CFI from the sample's
// user registers and stack copy.
func (u *Unwinder) AppendDWARF(dst []Frame, s *perf.Sample, maps Maps) ([]Frame, StopReason) {
	return u.appendDWARF(dst, s, maps, nil)
}

// appendDWARF is AppendDWARF looking the objects' CFI up through memo (nil:
// a memo of this stack alone).
func (u *Unwinder) appendDWARF(dst []Frame, s *perf.Sample, maps Maps, memo *tableMemo) ([]Frame, StopReason) {
	if s.Has(perf.SampleCallchain) {
		dst = KernelFrames(dst, s, maps)
	} else if s.Has(perf.SampleIP) && s.CPUMode() == perf.MiscKernel {
		dst = lookup(dst, maps, s, s.IP, FrameIP, true)
	}
	if !hasStackCopy(s) {
		if len(dst) == 0 && s.Has(perf.SampleIP) {
			dst = lookup(dst, maps, s, s.IP, FrameIP, s.CPUMode() == perf.MiscKernel)
		}
		return dst, StopNoRegs
	}
	var r regs
	for _, m := range perfToDWARF {
		if v, ok := s.RegsUser.Get(m.perf); ok {
			r.v[m.dwarf], r.known[m.dwarf] = v, true
		}
	}
	if !r.known[regnum.AMD64_Rip] || !r.known[regnum.AMD64_Rsp] {
		return dst, StopNoRegs
	}
	st := stack{sp0: r.v[regnum.AMD64_Rsp], data: s.StackUser.Valid()}
	kind := FrameIP
	// the registers of the frame and of its caller, swapped at each step
	var other regs
	cur, next := &r, &other
	// the last objects' CFI, and the last mappings: a stack's frames
	// are mostly in few objects
	if memo == nil {
		memo = new(tableMemo)
	}
	var mm mapMemo
	rm, _ := maps.(rangeMaps)
	guessed := false // the last step followed a frame pointer without CFI
	for depth := 0; ; depth++ {
		if depth >= u.opts.MaxDepth {
			return dst, StopMaxDepth
		}
		pc := cur.v[regnum.AMD64_Rip]
		if rm != nil {
			dst = mm.lookup(dst, rm, s, pc, kind)
		} else {
			dst = lookup(dst, maps, s, pc, kind, false)
		}
		f := &dst[len(dst)-1]
		if f.Object == nil {
			if guessed {
				// the frame pointer led nowhere: drop the guess
				return dst[:len(dst)-1], StopNoCFI
			}
			return dst, StopNoMapping
		}
		rw, why := u.rowFor(f, memo)
		guessed = false
		if rw == nil {
			switch {
			case u.opts.FramePointerFallback:
				rw = fpRow // JIT code, objects without CFI: try the frame-pointer convention
			case why == StopNoCFI && framePointerAbove(cur):
				// code of a file that has CFI but none for this PC (the C
				// runtime's __do_global_dtors_aux, hand-written assembly):
				// follow its frame pointer as perf's unwinder does, keeping
				// the caller only if it is in a mapping
				rw, guessed = fpRow, true
			default:
				return dst, why
			}
		}
		if stop, ok := stepInto(next, cur, rw, &st); !ok {
			if guessed {
				stop = StopNoCFI
			}
			return dst, stop
		}
		if next.v[regnum.AMD64_Rsp] <= cur.v[regnum.AMD64_Rsp] {
			if guessed {
				return dst, StopNoCFI
			}
			return dst, StopNoProgress
		}
		cur, next = next, cur
		kind = FrameReturn
	}
}

// rangeMaps is a Maps that also says for which addresses around addr its
// answer holds, the object address moving with the address (procmap's
// does): LookupObjectRange.
type rangeMaps interface {
	LookupObjectRange(pid, tid uint32, time uint64, addr addrspace.Addr) (obj *addrspace.Object, objAddr addrspace.ObjAddr, lo, hi addrspace.Addr, ok bool)
}

// mapMemo remembers the last few answers of a rangeMaps for one sample
// (one pid, tid and time).
type mapMemo struct {
	e    [4]mapRange
	next int
}

type mapRange struct {
	obj    *addrspace.Object // nil: unused
	lo, hi addrspace.Addr
	addr   addrspace.Addr
	oa     addrspace.ObjAddr
}

// lookup is the package's lookup of a user frame, through the memo.
func (mm *mapMemo) lookup(dst []Frame, maps rangeMaps, s *perf.Sample, pc uint64, kind FrameKind) []Frame {
	addr := addrspace.Addr(pc)
	f := Frame{Addr: addr, Kind: kind}
	at := addr
	if kind == FrameReturn && at > 0 {
		at-- // the call's mapping: a call can end a mapping
	}
	for i := range mm.e {
		if e := &mm.e[i]; e.obj != nil && e.lo <= at && at < e.hi {
			f.Object = e.obj
			f.ObjAddr = e.oa.Moved(e.addr, addr)
			return append(dst, f)
		}
	}
	if obj, oa, lo, hi, ok := maps.LookupObjectRange(s.PID, s.TID, s.Time, at); ok && obj != nil {
		f.Object = obj
		f.ObjAddr = oa.Moved(at, addr)
		mm.e[mm.next] = mapRange{obj: obj, lo: lo, hi: hi, addr: at, oa: oa}
		mm.next = (mm.next + 1) % len(mm.e)
	}
	return append(dst, f)
}

// tableMemo is the last few objects rowFor looked up the CFI of, and
// their CFI.
type tableMemo struct {
	e    [8]tableOf
	next int
}

type tableOf struct {
	obj *addrspace.Object // nil: unused
	t   *table
	err error
}

// get is u.tables.get through the memo.
func (m *tableMemo) get(u *Unwinder, obj *addrspace.Object) (*table, error) {
	for i := range m.e {
		if e := &m.e[i]; e.obj != nil && e.obj == obj {
			return e.t, e.err
		}
	}
	t, err := u.tables.get(obj)
	m.e[m.next] = tableOf{obj: obj, t: t, err: err}
	m.next = (m.next + 1) % len(m.e)
	return t, err
}

// rowFor returns the CFI row of a frame's PC, or nil and why there is none;
// memo, when not nil, saves looking up the CFI of the same objects again.
func (u *Unwinder) rowFor(f *Frame, memo *tableMemo) (*row, StopReason) {
	var t *table
	var err error
	if memo != nil {
		t, err = memo.get(u, f.Object)
	} else {
		t, err = u.tables.get(f.Object)
	}
	if err != nil {
		return nil, StopNoObject
	}
	rw, err := t.row(f.LookupAddr())
	if err != nil {
		return nil, StopBadCFI
	}
	if rw == nil {
		return nil, StopNoCFI
	}
	return rw, 0
}

// framePointerAbove reports whether the frame's rbp can be a frame pointer:
// known and not below its stack pointer.
func framePointerAbove(cur *regs) bool {
	return cur.known[regnum.AMD64_Rbp] && cur.v[regnum.AMD64_Rbp] >= cur.v[regnum.AMD64_Rsp]
}

// fpRow is the frame-pointer convention as a CFI row: CFA = rbp+16, the
// return address at CFA-8, the caller's rbp at CFA-16.
var fpRow = func() *row {
	r := &row{cfa: rule{kind: ruleCFA, reg: regnum.AMD64_Rbp, off: 16}, ra: regnum.AMD64_Rip}
	r.regs[regnum.AMD64_Rip] = rule{kind: ruleOffset, off: -8}
	r.regs[regnum.AMD64_Rbp] = rule{kind: ruleOffset, off: -16}
	return r.index()
}()

// step computes the caller's registers from the callee's with one CFI row.
func step(cur *regs, rw *row, st *stack) (regs, *StopReason) {
	var next regs
	if stop, ok := stepInto(&next, cur, rw, st); !ok {
		return regs{}, &stop
	}
	return next, nil
}

// stepInto is step writing the caller's registers to next (not cur); ok
// is false when unwinding stops there, and why.
func stepInto(next, cur *regs, rw *row, st *stack) (why StopReason, ok bool) {
	stop := func(r StopReason) (StopReason, bool) { return r, false }
	var cfa uint64
	switch rw.cfa.kind {
	case ruleCFA:
		if rw.cfa.reg >= nregs || !cur.known[rw.cfa.reg] {
			return stop(StopBadCFI)
		}
		cfa = uint64(int64(cur.v[rw.cfa.reg]) + rw.cfa.off)
	case ruleCFAExpression:
		v, ok := eval(cur, rw.cfa.expr, 0, false, st)
		if !ok {
			return stop(StopBadCFI)
		}
		cfa = v // the value of the expression, not dereferenced
	}
	switch rw.regs[rw.ra].kind {
	case ruleUndefined:
		return stop(StopOutermost)
	case ruleSame:
		return stop(StopBadCFI) // x86-64 CIEs always say where the return address is
	}
	// the registers whose rule is ruleSame at once, then the others
	*next = *cur
	for _, m := range rw.moved {
		i := int(m)
		var v uint64
		var known, outside bool
		if ru := &rw.regs[i]; ru.kind == ruleOffset { // most moved registers: recoverReg inlined
			v, known = st.read(uint64(int64(cfa) + ru.off))
			outside = !known
		} else {
			v, known, outside = recoverReg(cur, *ru, i, cfa, st)
		}
		if outside {
			if uint64(i) == rw.ra {
				return stop(StopStackEnd)
			}
			known = false
		}
		next.v[i], next.known[i] = v, known
	}
	next.v[regnum.AMD64_Rsp], next.known[regnum.AMD64_Rsp] = cfa, true
	ra := next.v[rw.ra]
	if !next.known[rw.ra] {
		return stop(StopBadCFI)
	}
	if ra == 0 {
		return stop(StopZeroReturn)
	}
	next.v[regnum.AMD64_Rip], next.known[regnum.AMD64_Rip] = ra, true
	return 0, true
}

// recoverReg applies one register rule; outside reports a read that fell
// outside the stack copy.
func recoverReg(cur *regs, ru rule, i int, cfa uint64, st *stack) (v uint64, known, outside bool) {
	switch ru.kind {
	case ruleSame:
		return cur.v[i], cur.known[i], false
	case ruleOffset:
		v, ok := st.read(uint64(int64(cfa) + ru.off))
		return v, ok, !ok
	case ruleValOffset:
		return uint64(int64(cfa) + ru.off), true, false
	case ruleRegister:
		if ru.reg < nregs {
			return cur.v[ru.reg], cur.known[ru.reg], false
		}
	case ruleExpression:
		addr, ok := eval(cur, ru.expr, cfa, true, st)
		if !ok {
			return 0, false, false
		}
		v, ok := st.read(addr)
		return v, ok, !ok
	case ruleValExpression:
		v, ok := eval(cur, ru.expr, cfa, true, st)
		return v, ok, false
	}
	return 0, false, false
}

// eval runs a DWARF expression over the frame's registers with delve's op,
// the CFA pushed first for register rules (DWARF 5 §6.4.2.3).
func eval(cur *regs, expr []byte, cfa uint64, pushCFA bool, st *stack) (uint64, bool) {
	dregs := make([]*op.DwarfRegister, nregs)
	for i := range nregs {
		if cur.known[i] {
			dregs[i] = op.DwarfRegisterFromUint64(cur.v[i])
		}
	}
	dr := op.NewDwarfRegisters(0, dregs, binary.LittleEndian, regnum.AMD64_Rip, regnum.AMD64_Rsp, regnum.AMD64_Rbp, 0)
	prog := expr
	if pushCFA {
		dr.CFA = int64(cfa)
		prog = append([]byte{byte(op.DW_OP_call_frame_cfa)}, expr...)
	}
	stc := *st // a copy escapes to the heap (the memory reader), not the caller's stack value
	v, pieces, err := safeExecute(*dr, prog, &stc)
	if err != nil || pieces != nil {
		return 0, false
	}
	return uint64(v), true
}

func safeExecute(dr op.DwarfRegisters, prog []byte, st *stack) (v int64, pieces []op.Piece, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = errors.New("unwind: DWARF expression panicked")
		}
	}()
	return op.ExecuteStackProgram(dr, prog, 8, st.readMemory)
}
