package unwind

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-delve/delve/pkg/dwarf/frame"
	"github.com/go-delve/delve/pkg/dwarf/regnum"

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/buildid"
	"github.com/hwprof/hwprof/internal/safefile"
)

// nregs is the number of DWARF registers an x86-64 CFI row tracks: rax..r15
// and the return address column (rip).
const nregs = regnum.AMD64_Rip + 1

// ruleKind is the rule of a register (or the CFA) in one CFI row.
type ruleKind uint8

const (
	ruleSame          ruleKind = iota // not mentioned, or DW_CFA_same_value: the caller's value is the same
	ruleUndefined                     // DW_CFA_undefined: no value (the return address of the outermost frame)
	ruleOffset                        // saved at CFA+off
	ruleValOffset                     // value is CFA+off
	ruleRegister                      // value is in register reg
	ruleExpression                    // saved at the address the expression computes (CFA pushed first)
	ruleValExpression                 // value is what the expression computes (CFA pushed first)
	ruleCFA                           // the CFA rule: reg+off
	ruleCFAExpression                 // the CFA rule: an expression
)

type rule struct {
	kind ruleKind
	reg  uint64
	off  int64
	expr []byte
}

// row is the unwinding rule of one PC: how to find the CFA and each
// register of the caller.
type row struct {
	cfa  rule
	regs [nregs]rule
	ra   uint64 // the return-address column
	// moved lists the registers whose rule is not ruleSame, in order
	// (index): stepInto copies the others at once and applies these
	// rules alone
	moved []uint8
}

// index fills r.moved from r.regs; every row is indexed once built, and r
// must not change afterwards.
func (r *row) index() *row {
	r.moved = r.moved[:0]
	for i := range r.regs {
		if r.regs[i].kind != ruleSame {
			r.moved = append(r.moved, uint8(i))
		}
	}
	return r
}

// table is the CFI of one object: its FDEs sorted by start address, and the
// rows already computed, by PC in the object's address space.
type table struct {
	fdes frame.FrameDescriptionEntries
	err  error

	mu   sync.RWMutex // readers of rows do not wait for each other
	rows map[addrspace.ObjAddr]*row
	// recent is a direct-mapped cache in front of rows that readers
	// share without a lock (each slot an atomic pointer: a load is a
	// plain read, where the RWMutex's reader count is a write to a cache
	// line every unwinding goroutine shares)
	recent [rowSlots]atomic.Pointer[rowSlot]
}

// rowSlots is the number of slots of a table's recent rows, 1<<rowSlotBits.
const (
	rowSlotBits = 12
	rowSlots    = 1 << rowSlotBits
)

// rowSlot is a row of table.recent: pc's rule is r (nil: no FDE covers pc).
type rowSlot struct {
	pc addrspace.ObjAddr
	r  *row
}

// maxRows bounds a table's row cache; past it the cache starts over.
const maxRows = 1 << 16

// row returns the rule for pc, nil when no FDE covers it.
func (t *table) row(pc addrspace.ObjAddr) (*row, error) {
	slot := &t.recent[(uint64(pc)*0x9e3779b97f4a7c15)>>(64-rowSlotBits)]
	if e := slot.Load(); e != nil && e.pc == pc {
		return e.r, nil
	}
	t.mu.RLock()
	r, ok := t.rows[pc]
	t.mu.RUnlock()
	if ok {
		slot.Store(&rowSlot{pc: pc, r: r})
		return r, nil
	}
	fde, err := t.fdes.FDEForPC(uint64(pc))
	if err != nil {
		r = nil
	} else if r, err = establish(fde, uint64(pc)); err != nil {
		return nil, err
	}
	t.mu.Lock()
	if len(t.rows) >= maxRows {
		clear(t.rows)
	}
	t.rows[pc] = r
	t.mu.Unlock()
	slot.Store(&rowSlot{pc: pc, r: r})
	return r, nil
}

// establish runs the FDE's CFA program up to pc and converts the result.
// delve's interpreter is not hardened against malformed programs, so a panic
// in it becomes an error.
func establish(fde *frame.FrameDescriptionEntry, pc uint64) (r *row, err error) {
	defer func() {
		if p := recover(); p != nil {
			r, err = nil, fmt.Errorf("unwind: CFI program at %#x: %v", fde.Begin(), p)
		}
	}()
	fc, err := fde.EstablishFrame(pc)
	if err != nil {
		return nil, fmt.Errorf("unwind: CFI program at %#x: %w", fde.Begin(), err)
	}
	r = &row{ra: fc.RetAddrReg}
	if r.ra >= nregs {
		return nil, fmt.Errorf("unwind: CFI at %#x: return address column %d", fde.Begin(), r.ra)
	}
	switch fc.CFA.Rule {
	case frame.RuleCFA:
		r.cfa = rule{kind: ruleCFA, reg: fc.CFA.Reg, off: fc.CFA.Offset}
	case frame.RuleExpression, frame.RuleValExpression:
		r.cfa = rule{kind: ruleCFAExpression, expr: fc.CFA.Expression}
	default:
		return nil, fmt.Errorf("unwind: CFI at %#x: CFA rule %d", fde.Begin(), fc.CFA.Rule)
	}
	for reg, dr := range fc.Regs {
		if reg >= nregs {
			continue
		}
		r.regs[reg] = convertRule(dr)
	}
	return r.index(), nil
}

func convertRule(dr frame.DWRule) rule {
	switch dr.Rule {
	case frame.RuleUndefined:
		return rule{kind: ruleUndefined}
	case frame.RuleSameVal:
		return rule{kind: ruleSame}
	case frame.RuleOffset:
		return rule{kind: ruleOffset, off: dr.Offset}
	case frame.RuleValOffset:
		return rule{kind: ruleValOffset, off: dr.Offset}
	case frame.RuleRegister:
		return rule{kind: ruleRegister, reg: dr.Reg}
	case frame.RuleExpression:
		return rule{kind: ruleExpression, expr: dr.Expression}
	case frame.RuleValExpression:
		return rule{kind: ruleValExpression, expr: dr.Expression}
	case frame.RuleCFA:
		return rule{kind: ruleValOffset, off: dr.Offset} // delve's name for val_offset of the CFA
	}
	return rule{kind: ruleUndefined}
}

// errNotFile is the error of objects that have no file (the vdso, [stack]).
var errNotFile = errors.New("not a file")

// loadTable reads the .eh_frame and .debug_frame of an ELF file: the FDEs of
// both, sorted, .eh_frame's first where both describe the same range.
func loadTable(f *elf.File) (*table, error) {
	var all frame.FrameDescriptionEntries
	var errs []error
	if sec := f.Section(".eh_frame"); sec != nil && sec.Type != elf.SHT_NOBITS && sec.Addr != 0 {
		fdes, err := parseCFI(sec, sec.Addr)
		if err != nil {
			errs = append(errs, fmt.Errorf(".eh_frame: %w", err))
		}
		all = append(all, fdes...)
	}
	if sec := f.Section(".debug_frame"); sec != nil && sec.Type != elf.SHT_NOBITS {
		fdes, err := parseCFI(sec, 0)
		if err != nil {
			errs = append(errs, fmt.Errorf(".debug_frame: %w", err))
		}
		all = append(all, fdes...)
	}
	if len(all) == 0 {
		if len(errs) > 0 {
			return nil, fmt.Errorf("unwind: read CFI: %w", errors.Join(errs...))
		}
		return nil, errors.New("unwind: read CFI: no .eh_frame or .debug_frame")
	}
	// frame.Parse returns FDEs in section order; FDEForPC needs them sorted.
	sort.SliceStable(all, func(i, j int) bool { return all[i].Begin() < all[j].Begin() })
	return &table{fdes: all, rows: make(map[addrspace.ObjAddr]*row)}, nil
}

func parseCFI(sec *elf.Section, ehFrameAddr uint64) (frame.FrameDescriptionEntries, error) {
	data, err := sec.Data()
	if err != nil {
		return nil, err
	}
	return parseCFIBytes(data, ehFrameAddr)
}

// parseCFIBytes parses a .eh_frame (ehFrameAddr, its address, not 0) or
// .debug_frame (ehFrameAddr 0) section. delve's parser is not hardened
// against malformed input, so a panic in it becomes an error.
func parseCFIBytes(data []byte, ehFrameAddr uint64) (fdes frame.FrameDescriptionEntries, err error) {
	defer func() {
		if p := recover(); p != nil {
			fdes, err = nil, fmt.Errorf("malformed: %v", p)
		}
	}()
	fdes, err = frame.Parse(data, binary.LittleEndian, 0, 8, ehFrameAddr)
	// drop FDEs that describe nothing (padding, discarded sections)
	out := fdes[:0]
	for _, fde := range fdes {
		if fde.End() > fde.Begin() && fde.Begin() != 0 {
			out = append(out, fde)
		}
	}
	return out, err
}

// tables caches the CFI of each object by path and build-id.
type tables struct {
	open func(obj *addrspace.Object) (openedELF, error)

	mu sync.Mutex
	m  map[tableKey]*tableEntry
	// loaded holds, by object, the entries whose CFI has been read: read
	// without a lock, it spares the path and build-id key (and mu) on
	// every stack that starts with an object rowFor's memo does not hold
	loaded sync.Map // *addrspace.Object -> *tableEntry
}

type tableKey struct {
	path    string
	buildID buildid.ID
}

type tableEntry struct {
	once sync.Once
	t    *table
	err  error
}

func (ts *tables) get(obj *addrspace.Object) (*table, error) {
	if v, ok := ts.loaded.Load(obj); ok {
		e := v.(*tableEntry)
		return e.t, e.err
	}
	path := obj.Path
	k := tableKey{path, obj.BuildID}
	ts.mu.Lock()
	e := ts.m[k]
	if e == nil {
		e = &tableEntry{}
		ts.m[k] = e
	}
	ts.mu.Unlock()
	e.once.Do(func() {
		f, err := ts.open(obj)
		if err != nil {
			e.err = fmt.Errorf("unwind: open %s: %w", path, err)
			return
		}
		defer f.Close()
		e.t, e.err = loadTable(f.File)
	})
	ts.loaded.Store(obj, e)
	return e.t, e.err
}

// openedELF is an object's ELF file and the file it is read from (nil
// for an image in memory).
type openedELF struct {
	*elf.File
	file io.Closer
}

// Close closes the ELF file and its file.
func (o openedELF) Close() {
	o.File.Close()
	if o.file != nil {
		o.file.Close()
	}
}

// opener opens the ELF file of an object: the vdso from an image, other
// objects through Options.Open or in Options.Root (a regular file within
// it: package safefile).
func opener(opts Options) func(obj *addrspace.Object) (openedELF, error) {
	return func(obj *addrspace.Object) (openedELF, error) {
		path, isFile := obj.Path, obj.Kind == addrspace.KindFile
		var f *os.File
		var err error
		switch {
		case obj.Kind == addrspace.KindVDSO && opts.VDSO != nil:
			ef, err := elf.NewFile(bytes.NewReader(opts.VDSO))
			return openedELF{File: ef}, err
		case opts.Open != nil:
			f, err = opts.Open(path)
		case !isFile || strings.HasPrefix(path, "["):
			return openedELF{}, errNotFile
		default:
			f, err = safefile.NewRoot(opts.Root).Open(path)
		}
		if err != nil {
			return openedELF{}, err
		}
		ef, err := elf.NewFile(f)
		if err != nil {
			f.Close()
			return openedELF{}, err
		}
		return openedELF{File: ef, file: f}, nil
	}
}
