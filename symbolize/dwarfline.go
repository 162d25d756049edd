package symbolize

import (
	"bytes"
	"compress/zlib"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
)

// debug/dwarf reads a DWARF 5 line program header's directory and file
// name counts and allocates that many entries before it reads one
// (LineReader.readHeader): a count of 2^40 in a 3 KB file made it
// allocate 277 GB and the process die (found by FuzzOpen). Every entry
// of a real table takes at least a byte (its DW_LNCT_path), so a count
// larger than the bytes left in the unit is malformed: checkLineCounts
// rejects it before debug/dwarf sees it.

// lineSection returns the .debug_line bytes of f as debug/elf's DWARF
// reads them (SHF_COMPRESSED sections decompressed by Section.Data, the
// GNU .zdebug_line by hand), or nil if there is none or it is unreadable
// (then debug/dwarf has no line tables either, or fails on its own).
func lineSection(f *elf.File) []byte {
	if s := f.Section(".debug_line"); s != nil && s.Type != elf.SHT_NOBITS {
		b, err := s.Data()
		if err != nil {
			return nil
		}
		return b
	}
	s := f.Section(".zdebug_line")
	if s == nil || s.Type == elf.SHT_NOBITS {
		return nil
	}
	b, err := s.Data()
	if err != nil || len(b) < 12 || string(b[:4]) != "ZLIB" {
		return nil
	}
	n := binary.BigEndian.Uint64(b[4:12])
	zr, err := zlib.NewReader(bytes.NewReader(b[12:]))
	if err != nil {
		return nil
	}
	// Bound by what a zlib stream can expand to (1032:1).
	out, err := io.ReadAll(io.LimitReader(zr, int64(min(n, uint64(len(b))*1032))))
	if err != nil {
		return nil
	}
	return out
}

// lineReader is a cursor over a line program header; reads past the end
// set short and return 0.
type lineReader struct {
	b     []byte
	bo    binary.ByteOrder
	short bool
}

func (r *lineReader) bytes(n uint64) []byte {
	if r.short || n > uint64(len(r.b)) {
		r.short = true
		return nil
	}
	b := r.b[:n]
	r.b = r.b[n:]
	return b
}

func (r *lineReader) u8() uint64 {
	if b := r.bytes(1); b != nil {
		return uint64(b[0])
	}
	return 0
}

func (r *lineReader) u32() uint64 {
	if b := r.bytes(4); b != nil {
		return uint64(r.bo.Uint32(b))
	}
	return 0
}

func (r *lineReader) u64() uint64 {
	if b := r.bytes(8); b != nil {
		return r.bo.Uint64(b)
	}
	return 0
}

func (r *lineReader) uleb() uint64 {
	var v uint64
	for shift := 0; ; shift += 7 {
		c := r.bytes(1)
		if c == nil {
			return 0
		}
		if shift < 64 {
			v |= uint64(c[0]&0x7f) << shift
		}
		if c[0]&0x80 == 0 {
			return v
		}
	}
}

// DW_FORM values readLNCT reads (<dwarf.h>).
const (
	formBlock    = 0x09
	formData1    = 0x0b
	formData2    = 0x05
	formData4    = 0x06
	formData8    = 0x07
	formData16   = 0x1e
	formString   = 0x08
	formStrp     = 0x0e
	formLineStrp = 0x1f
	formStrpSup  = 0x1d
	formStrx     = 0x1a
	formStrx1    = 0x25
	formStrx2    = 0x26
	formStrx3    = 0x27
	formStrx4    = 0x28
	formUdata    = 0x0f
)

// skipForm skips a value of form as debug/dwarf's readLNCT reads it (a
// form it does not know takes no bytes there).
func (r *lineReader) skipForm(form uint64, dwarf64 bool) {
	switch form {
	case formString:
		if i := bytes.IndexByte(r.b, 0); i >= 0 {
			r.bytes(uint64(i) + 1)
		} else {
			r.short = true
		}
	case formStrp, formLineStrp, formStrpSup:
		if dwarf64 {
			r.u64()
		} else {
			r.u32()
		}
	case formStrx, formUdata:
		r.uleb()
	case formStrx1, formData1:
		r.bytes(1)
	case formStrx2, formData2:
		r.bytes(2)
	case formStrx3:
		r.bytes(3)
	case formStrx4, formData4:
		r.bytes(4)
	case formData8:
		r.bytes(8)
	case formData16:
		r.bytes(16)
	case formBlock:
		r.bytes(r.uleb())
	}
}

// checkLineCounts checks the directory and file name counts of the DWARF
// 5 line program header at off in sec (byte order bo): each must be at
// most the bytes left in the unit. Headers of other versions, and headers
// debug/dwarf rejects anyway (outside the section, cut short), pass.
func checkLineCounts(sec []byte, off int64, bo binary.ByteOrder) error {
	if off < 0 || off >= int64(len(sec)) {
		return nil
	}
	r := &lineReader{b: sec[off:], bo: bo}
	n, dwarf64 := r.u32(), false
	if n == 0xffffffff {
		n, dwarf64 = r.u64(), true
	}
	if r.short || n > uint64(len(r.b)) {
		return nil
	}
	r.b = r.b[:n]
	if version := r.bytes(2); version == nil || bo.Uint16(version) != 5 {
		return nil
	}
	r.bytes(2) // address_size, segment_selector_size
	if dwarf64 {
		r.u64() // header_length
	} else {
		r.u32()
	}
	r.bytes(5) // minimum_instruction_length to line_range
	if base := r.u8(); base > 0 {
		r.bytes(base - 1) // standard_opcode_lengths
	}
	for _, what := range []string{"directory", "file name"} {
		forms := make([]uint64, r.u8())
		for i := range forms {
			r.uleb() // DW_LNCT_*
			forms[i] = r.uleb()
		}
		count := r.uleb()
		if r.short {
			return nil
		}
		if count > uint64(len(r.b)) {
			return fmt.Errorf("DWARF line table at %#x: %d %s entries in the %d bytes left of its header", off, count, what, len(r.b))
		}
		for range count {
			for _, form := range forms {
				r.skipForm(form, dwarf64)
			}
			if r.short {
				return nil
			}
		}
	}
	return nil
}
