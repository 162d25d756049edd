package perfdata

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"github.com/hwprof/hwprof/buildid"
	"os"
	"syscall"
	"testing"

	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/synth"
)

// This file builds kernel records the way the kernel lays them out
// (<linux/perf_event.h>), for synthetic recordings, and parses the header
// and feature sections of a written file, to check the writer's output.

var le = binary.LittleEndian

// record returns a record of type t with the body appended to a
// perf_event_header whose size covers it.
func record(t perf.RecordType, misc uint16, body []byte) []byte {
	b := make([]byte, 8, 8+len(body))
	le.PutUint32(b, uint32(t))
	le.PutUint16(b[4:], misc)
	b = append(b, body...)
	le.PutUint16(b[6:], uint16(len(b)))
	return b
}

// sampleID holds the values of a sample_id trailer or of the matching
// fields of a sample.
type sampleID struct {
	pid, tid uint32
	time     uint64
	id       uint64
	cpu      uint32
}

// appendSampleID appends the sample_id trailer of non-sample records when
// sample_id_all is set, with the encoder the recorder uses (perf/synth);
// id fills the ID, STREAM_ID and IDENTIFIER fields.
func appendSampleID(b []byte, st perf.SampleType, s sampleID) []byte {
	return synth.AppendSampleID(b, st, synth.SampleID{
		PID: s.pid, TID: s.tid, Time: s.time, ID: s.id, StreamID: s.id, CPU: s.cpu, Identifier: s.id,
	})
}

// appendString appends s NUL-terminated and padded to 8 bytes.
func appendString(b []byte, s string) []byte {
	b = append(b, s...)
	for n := 8 - len(s)%8; n > 0; n-- {
		b = append(b, 0)
	}
	return b
}

// commRecord is a PERF_RECORD_COMM.
func commRecord(st perf.SampleType, s sampleID, comm string) []byte {
	var b []byte
	b = le.AppendUint32(b, s.pid)
	b = le.AppendUint32(b, s.tid)
	b = appendString(b, comm)
	return record(perf.RecordComm, 0, appendSampleID(b, st, s))
}

// mapping is one executable mapping of an object.
type mapping struct {
	addr, len, pgoff uint64
	path             string
}

// mmap2Record is a PERF_RECORD_MMAP2 with device and inode numbers from
// stat(2), r-xp.
func mmap2Record(t *testing.T, st perf.SampleType, s sampleID, m mapping) []byte {
	t.Helper()
	var stat syscall.Stat_t
	if err := syscall.Stat(m.path, &stat); err != nil {
		t.Fatal(err)
	}
	var b []byte
	b = le.AppendUint32(b, s.pid)
	b = le.AppendUint32(b, s.tid)
	b = le.AppendUint64(b, m.addr)
	b = le.AppendUint64(b, m.len)
	b = le.AppendUint64(b, m.pgoff)
	b = le.AppendUint32(b, uint32(stat.Dev>>8&0xfff)) // maj
	b = le.AppendUint32(b, uint32(stat.Dev&0xff))     // min
	b = le.AppendUint64(b, stat.Ino)
	b = le.AppendUint64(b, 0)                                   // ino_generation
	b = le.AppendUint32(b, syscall.PROT_READ|syscall.PROT_EXEC) // prot
	b = le.AppendUint32(b, syscall.MAP_PRIVATE)                 // flags
	b = appendString(b, m.path)
	return record(perf.RecordMmap2, perf.MiscUser, appendSampleID(b, st, s))
}

// sampleRecord is a PERF_RECORD_SAMPLE for the fixed-size sample_type bits
// IDENTIFIER, IP, TID, TIME, ID, CPU, PERIOD.
func sampleRecord(st perf.SampleType, s sampleID, ip, period uint64) []byte {
	var b []byte
	if st&perf.SampleIdentifier != 0 {
		b = le.AppendUint64(b, s.id)
	}
	if st&perf.SampleIP != 0 {
		b = le.AppendUint64(b, ip)
	}
	if st&perf.SampleTID != 0 {
		b = le.AppendUint32(b, s.pid)
		b = le.AppendUint32(b, s.tid)
	}
	if st&perf.SampleTime != 0 {
		b = le.AppendUint64(b, s.time)
	}
	if st&perf.SampleID != 0 {
		b = le.AppendUint64(b, s.id)
	}
	if st&perf.SampleCPU != 0 {
		b = le.AppendUint32(b, s.cpu)
		b = le.AppendUint32(b, 0)
	}
	if st&perf.SamplePeriod != 0 {
		b = le.AppendUint64(b, period)
	}
	return record(perf.RecordSample, perf.MiscUser, b)
}

// textMapping returns the executable PT_LOAD of the ELF file at path
// mapped at base, and the range of addresses inside it.
func textMapping(t *testing.T, path string, base uint64) mapping {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Skipf("no ELF %s: %v", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 {
			start := p.Vaddr &^ 0xfff
			return mapping{
				addr:  base + start,
				len:   (p.Vaddr + p.Filesz - start + 0xfff) &^ 0xfff,
				pgoff: p.Off &^ 0xfff,
				path:  path,
			}
		}
	}
	t.Skipf("%s has no executable segment", path)
	return mapping{}
}

// parsedFile is what the minimal test parser reads back.
type parsedFile struct {
	hdr      fileHeader
	attrs    []perf.Attr
	ids      [][]uint64
	features map[Feature][]byte
}

// parseFile reads the header, attrs, ids and feature sections of a
// perf.data file. It is a checker for the writer, not a reader.
func parseFile(t *testing.T, path string) parsedFile {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := parseBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func parseBytes(b []byte) (parsedFile, error) {
	var p parsedFile
	if len(b) < fileHeaderSize || string(b[:8]) != magic {
		return p, fmt.Errorf("not a PERFILE2 file")
	}
	h := &p.hdr
	h.Size = le.Uint64(b[8:])
	h.AttrSize = le.Uint64(b[16:])
	h.Attrs = fileSection{le.Uint64(b[24:]), le.Uint64(b[32:])}
	h.Data = fileSection{le.Uint64(b[40:]), le.Uint64(b[48:])}
	h.EventTypes = fileSection{le.Uint64(b[56:]), le.Uint64(b[64:])}
	for i := range h.Features {
		h.Features[i] = le.Uint64(b[72+8*i:])
	}
	in := func(s fileSection) bool { return s.Offset <= uint64(len(b)) && s.Size <= uint64(len(b))-s.Offset }
	if h.AttrSize < perf.AttrSizeVer0+fileSectionSize || !in(h.Attrs) || !in(h.Data) {
		return p, fmt.Errorf("bad sections %+v", h)
	}
	for off := h.Attrs.Offset; off+h.AttrSize <= h.Attrs.Offset+h.Attrs.Size; off += h.AttrSize {
		e := b[off : off+h.AttrSize]
		a, err := perf.UnmarshalAttr(e[:len(e)-fileSectionSize])
		if err != nil {
			return p, err
		}
		ids := fileSection{le.Uint64(e[len(e)-16:]), le.Uint64(e[len(e)-8:])}
		if !in(ids) {
			return p, fmt.Errorf("bad ids section %+v", ids)
		}
		var list []uint64
		for i := ids.Offset; i < ids.Offset+ids.Size; i += 8 {
			list = append(list, le.Uint64(b[i:]))
		}
		p.attrs = append(p.attrs, a)
		p.ids = append(p.ids, list)
	}
	p.features = map[Feature][]byte{}
	off := h.Data.Offset + h.Data.Size
	for f := Feature(0); f < FeatBits; f++ {
		if h.Features[f/64]>>(f%64)&1 == 0 {
			continue
		}
		if off+16 > uint64(len(b)) {
			return p, fmt.Errorf("feature table past the end")
		}
		s := fileSection{le.Uint64(b[off:]), le.Uint64(b[off+8:])}
		if !in(s) {
			return p, fmt.Errorf("feature %v: bad section %+v", f, s)
		}
		p.features[f] = b[s.Offset : s.Offset+s.Size]
		off += 16
	}
	return p, nil
}

// readString decodes a feature string (u32 padded length, NUL-padded
// bytes) and returns it and the rest.
func readString(b []byte) (string, []byte, error) {
	if len(b) < 4 {
		return "", nil, fmt.Errorf("short string")
	}
	n := int(le.Uint32(b))
	if n > len(b)-4 {
		return "", nil, fmt.Errorf("string of %d bytes past the end", n)
	}
	s := b[4 : 4+n]
	for i, c := range s {
		if c == 0 {
			s = s[:i]
			break
		}
	}
	return string(s), b[4+n:], nil
}

// kernelMmapRecord is the PERF_RECORD_MMAP perf record synthesizes for the
// kernel (perf_event__synthesize_kernel_mmap): pid -1, "[kernel.kallsyms]_text"
// mapped at its own address. perf report builds its kernel map from it and
// warns about restricted kernel maps when an event that samples the kernel
// has none.
func kernelMmapRecord(st perf.SampleType) []byte {
	const text = 0xffffffff81000000
	var b []byte
	b = le.AppendUint32(b, ^uint32(0)) // pid -1
	b = le.AppendUint32(b, 0)
	b = le.AppendUint64(b, text)
	b = le.AppendUint64(b, 0x2000000)
	b = le.AppendUint64(b, text)
	b = appendString(b, "[kernel.kallsyms]_text")
	return record(perf.RecordMmap, perf.MiscKernel, appendSampleID(b, st, sampleID{}))
}

// branch is one perf_branch_entry: from, to, flags (zero: no
// mispredict/predict info, cycles or type).
type branch struct{ from, to uint64 }

// branchSampleRecord is a PERF_RECORD_SAMPLE with IP|TID|TIME|PERIOD and a
// BRANCH_STACK (u64 nr, then nr perf_branch_entry; no hw_idx).
func branchSampleRecord(s sampleID, ip, period uint64, br []branch) []byte {
	var b []byte
	b = le.AppendUint64(b, ip)
	b = le.AppendUint32(b, s.pid)
	b = le.AppendUint32(b, s.tid)
	b = le.AppendUint64(b, s.time)
	b = le.AppendUint64(b, period)
	b = le.AppendUint64(b, uint64(len(br)))
	for _, e := range br {
		b = le.AppendUint64(b, e.from)
		b = le.AppendUint64(b, e.to)
		b = le.AppendUint64(b, 0)
	}
	return record(perf.RecordSample, perf.MiscUser, b)
}

// testID makes a build-id of at most 20 bytes.
func testID(b []byte) buildid.ID {
	id, err := buildid.New(b)
	if err != nil {
		panic(err)
	}
	return id
}
