package jitdump

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Magic is the first word of a jitdump file in the writer's byte order
// (JITHEADER_MAGIC in perf's jitdump.h: "JiTD").
const Magic = 0x4A695444

// headerSize is the size of struct jitheader; a file's header may be
// longer (total_size), never shorter.
const headerSize = 40

// prefixSize is the size of struct jr_prefix.
const prefixSize = 16

// MaxRecord is the largest record body read, code bytes aside: a record
// that claims more is taken for damage.
const MaxRecord = 64 << 20

// ErrNotJitdump is the error of a file that does not start with Magic.
var ErrNotJitdump = errors.New("not a jitdump file (bad magic)")

// Header mirrors struct jitheader in perf's tools/perf/util/jitdump.h.
type Header struct {
	Version   uint32
	TotalSize uint32 // the header's size
	ElfMach   uint32 // ELF e_machine of the code
	PID       uint32
	Timestamp uint64 // when the file was made, in the writer's clock
	Flags     uint64 // JITDUMP_FLAGS_ARCH_TIMESTAMP: timestamps are the TSC
}

// FlagArchTimestamp is JITDUMP_FLAGS_ARCH_TIMESTAMP: the timestamps are
// the CPU's time-stamp counter, not CLOCK_MONOTONIC.
const FlagArchTimestamp = 1

// Kind is a record's type (enum jit_record_type).
type Kind uint32

// The record types of enum jit_record_type.
const (
	KindCodeLoad      Kind = 0
	KindCodeMove      Kind = 1
	KindDebugInfo     Kind = 2
	KindClose         Kind = 3
	KindUnwindingInfo Kind = 4
)

var kindNames = [...]string{"JIT_CODE_LOAD", "JIT_CODE_MOVE", "JIT_CODE_DEBUG_INFO", "JIT_CODE_CLOSE", "JIT_CODE_UNWINDING_INFO"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("JIT record %d", uint32(k))
}

// CodeLoad mirrors struct jr_code_load (the code bytes that follow the
// name are skipped).
type CodeLoad struct {
	PID, TID  uint32
	VMA       uint64
	CodeAddr  uint64
	CodeSize  uint64
	CodeIndex uint64
	Name      string
}

// CodeMove mirrors struct jr_code_move.
type CodeMove struct {
	PID, TID    uint32
	VMA         uint64
	OldCodeAddr uint64
	NewCodeAddr uint64
	CodeSize    uint64
	CodeIndex   uint64
}

// DebugEntry mirrors struct debug_entry: the source line of the code from
// Addr on.
type DebugEntry struct {
	Addr    uint64
	Line    int32
	Discrim int32
	File    string
}

// DebugInfo mirrors struct jr_code_debug_info: the lines of the code that
// the next JIT_CODE_LOAD at CodeAddr loads.
type DebugInfo struct {
	CodeAddr uint64
	Entries  []DebugEntry
}

// UnwindingInfo mirrors the sizes of struct jr_code_unwinding_info (the
// tables themselves are skipped).
type UnwindingInfo struct {
	UnwindingSize  uint64
	EHFrameHdrSize uint64
	MappedSize     uint64
}

// Record is one decoded record: Kind says which of its fields is set.
type Record struct {
	Kind   Kind
	Time   uint64 // the record's timestamp, in the writer's clock
	Offset int64  // where the record starts in the file
	Load   *CodeLoad
	Move   *CodeMove
	Debug  *DebugInfo
	Unwind *UnwindingInfo
}

// Reader decodes a jitdump file's records in order.
type Reader struct {
	r      *bufio.Reader
	bo     binary.ByteOrder
	hdr    Header
	off    int64
	rec    Record
	err    error
	buf    []byte
	closed bool
}

// NewReader reads the header of the jitdump file r holds.
func NewReader(r io.Reader) (*Reader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var b [headerSize]byte
	if _, err := io.ReadFull(br, b[:]); err != nil {
		return nil, fmt.Errorf("jitdump: header: %w", noEOF(err))
	}
	rd := &Reader{r: br}
	switch {
	case binary.LittleEndian.Uint32(b[:]) == Magic:
		rd.bo = binary.LittleEndian
	case binary.BigEndian.Uint32(b[:]) == Magic:
		rd.bo = binary.BigEndian
	default:
		return nil, fmt.Errorf("jitdump: %w", ErrNotJitdump)
	}
	bo := rd.bo
	rd.hdr = Header{
		Version:   bo.Uint32(b[4:]),
		TotalSize: bo.Uint32(b[8:]),
		ElfMach:   bo.Uint32(b[12:]),
		PID:       bo.Uint32(b[20:]),
		Timestamp: bo.Uint64(b[24:]),
		Flags:     bo.Uint64(b[32:]),
	}
	if rd.hdr.TotalSize < headerSize || rd.hdr.TotalSize > MaxRecord {
		return nil, fmt.Errorf("jitdump: header: size %d, want %d or more", rd.hdr.TotalSize, headerSize)
	}
	if _, err := br.Discard(int(rd.hdr.TotalSize - headerSize)); err != nil {
		return nil, fmt.Errorf("jitdump: header: %w", noEOF(err))
	}
	rd.off = int64(rd.hdr.TotalSize)
	return rd, nil
}

// noEOF turns io.EOF into io.ErrUnexpectedEOF: a file cut short.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Header returns the file's header.
func (r *Reader) Header() Header { return r.hdr }

// Next decodes the next record; false at the end of the file, after
// JIT_CODE_CLOSE, or at an error (Err).
func (r *Reader) Next() bool {
	if r.err != nil || r.closed {
		return false
	}
	var p [prefixSize]byte
	n, err := io.ReadFull(r.r, p[:])
	if err == io.EOF && n == 0 {
		return false
	}
	if err != nil {
		return r.fail("record prefix: %w", noEOF(err))
	}
	kind, size, t := Kind(r.bo.Uint32(p[:])), r.bo.Uint32(p[4:]), r.bo.Uint64(p[8:])
	if size < prefixSize {
		return r.fail("%s: size %d, shorter than its prefix", kind, size)
	}
	r.rec = Record{Kind: kind, Time: t, Offset: r.off}
	if err := r.body(kind, uint64(size)-prefixSize); err != nil {
		return r.fail("%s: %w", kind, err)
	}
	r.off += int64(size)
	return true
}

// Record returns the record Next decoded; it is valid until the next call.
func (r *Reader) Record() Record { return r.rec }

// Err returns the error that stopped Next, nil at the end of the file.
func (r *Reader) Err() error { return r.err }

func (r *Reader) fail(format string, args ...any) bool {
	r.err = fmt.Errorf("jitdump: offset %d: "+format, append([]any{r.off}, args...)...)
	return false
}

// readBody reads n bytes of a record's body (at most MaxRecord).
func (r *Reader) readBody(n uint64) ([]byte, error) {
	if n > MaxRecord {
		return nil, fmt.Errorf("body of %d bytes, more than %d", n, MaxRecord)
	}
	if uint64(cap(r.buf)) < n {
		r.buf = make([]byte, n)
	}
	b := r.buf[:n]
	if _, err := io.ReadFull(r.r, b); err != nil {
		return nil, noEOF(err)
	}
	return b, nil
}

// skip discards n bytes.
func (r *Reader) skip(n uint64) error {
	for n > 0 {
		k := min(n, 1<<30)
		if _, err := r.r.Discard(int(k)); err != nil {
			return noEOF(err)
		}
		n -= k
	}
	return nil
}

// body decodes a record's body of size n after its prefix.
func (r *Reader) body(kind Kind, n uint64) error {
	switch kind {
	case KindCodeLoad:
		return r.codeLoad(n)
	case KindCodeMove:
		b, err := r.readBody(n)
		if err != nil {
			return err
		}
		if len(b) < 48 {
			return fmt.Errorf("body of %d bytes, want 48", len(b))
		}
		bo := r.bo
		r.rec.Move = &CodeMove{PID: bo.Uint32(b), TID: bo.Uint32(b[4:]), VMA: bo.Uint64(b[8:]),
			OldCodeAddr: bo.Uint64(b[16:]), NewCodeAddr: bo.Uint64(b[24:]), CodeSize: bo.Uint64(b[32:]), CodeIndex: bo.Uint64(b[40:])}
		return nil
	case KindDebugInfo:
		return r.debugInfo(n)
	case KindUnwindingInfo:
		if n < 24 {
			return fmt.Errorf("body of %d bytes, want 24 or more", n)
		}
		b, err := r.readBody(24)
		if err != nil {
			return err
		}
		r.rec.Unwind = &UnwindingInfo{UnwindingSize: r.bo.Uint64(b), EHFrameHdrSize: r.bo.Uint64(b[8:]), MappedSize: r.bo.Uint64(b[16:])}
		return r.skip(n - 24)
	case KindClose:
		r.closed = true
		return r.skip(n)
	}
	return r.skip(n) // a record type of a later version: skipped, as perf does
}

// codeLoad decodes jr_code_load: 40 bytes of fields, the name, the code.
func (r *Reader) codeLoad(n uint64) error {
	const fixed = 40
	if n < fixed {
		return fmt.Errorf("body of %d bytes, want %d or more", n, fixed)
	}
	b, err := r.readBody(fixed)
	if err != nil {
		return err
	}
	bo := r.bo
	l := &CodeLoad{PID: bo.Uint32(b), TID: bo.Uint32(b[4:]), VMA: bo.Uint64(b[8:]),
		CodeAddr: bo.Uint64(b[16:]), CodeSize: bo.Uint64(b[24:]), CodeIndex: bo.Uint64(b[32:])}
	if l.CodeSize > n-fixed {
		return fmt.Errorf("code of %d bytes in a body of %d", l.CodeSize, n)
	}
	nb, err := r.readBody(n - fixed - l.CodeSize)
	if err != nil {
		return err
	}
	l.Name = cString(nb)
	r.rec.Load = l
	return r.skip(l.CodeSize)
}

// debugInfo decodes jr_code_debug_info: code_addr, nr_entry, entries.
func (r *Reader) debugInfo(n uint64) error {
	b, err := r.readBody(n)
	if err != nil {
		return err
	}
	if len(b) < 16 {
		return fmt.Errorf("body of %d bytes, want 16 or more", len(b))
	}
	bo := r.bo
	d := &DebugInfo{CodeAddr: bo.Uint64(b)}
	count := bo.Uint64(b[8:])
	b = b[16:]
	prev := ""
	// each entry has 16 bytes of fields and at least a NUL: count is
	// bounded by the body read
	if count > uint64(len(b))/17 {
		return fmt.Errorf("%d entries in %d bytes", count, len(b))
	}
	d.Entries = make([]DebugEntry, 0, count)
	for i := range count {
		if len(b) < 17 {
			return fmt.Errorf("entry %d cut short", i)
		}
		e := DebugEntry{Addr: bo.Uint64(b), Line: int32(bo.Uint32(b[8:])), Discrim: int32(bo.Uint32(b[12:]))}
		nul := bytes.IndexByte(b[16:], 0)
		if nul < 0 {
			return fmt.Errorf("entry %d: file name without its NUL", i)
		}
		e.File = string(b[16 : 16+nul])
		if e.File == "\xff" { // the previous entry's file, as perf's jitdump.c has it
			e.File = prev
		}
		prev = e.File
		d.Entries = append(d.Entries, e)
		b = b[16+nul+1:]
	}
	r.rec.Debug = d
	return nil
}

// cString is b up to its first NUL.
func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}
