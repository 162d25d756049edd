package synth

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/perf"
)

// This file decodes synthesized records back for the tests, independently
// of the writers: it walks headers, checks sizes and padding, and prints
// each record the way `perf report -D` prints it, plus the misc bits and
// the sample_id trailer.

// splitRecords cuts b into records by their header sizes.
func splitRecords(t testing.TB, b []byte) [][]byte {
	t.Helper()
	var rs [][]byte
	for len(b) > 0 {
		if len(b) < headerSize {
			t.Fatalf("%d bytes left, short of a header", len(b))
		}
		size := int(binary.LittleEndian.Uint16(b[6:]))
		if size < headerSize || size > len(b) || size%8 != 0 {
			t.Fatalf("record size %d (left %d), want a multiple of 8 within the buffer", size, len(b))
		}
		rs = append(rs, b[:size])
		b = b[size:]
	}
	return rs
}

// recPID is the pid field every record of this package has after its header.
func recPID(r []byte) uint32 { return binary.LittleEndian.Uint32(r[8:]) }

// recTID is the second u32 after the header (tid, or ppid for FORK).
func recTID(r []byte) uint32 {
	if perf.RecordType(binary.LittleEndian.Uint32(r)) == perf.RecordFork {
		return binary.LittleEndian.Uint32(r[16:])
	}
	return binary.LittleEndian.Uint32(r[12:])
}

// describe prints one record as perf report -D does, with misc and the
// hex of the sample_id trailer; it reports bad padding as an error.
func describe(r []byte, st perf.SampleType) (string, error) {
	le := binary.LittleEndian
	typ := perf.RecordType(le.Uint32(r))
	misc := le.Uint16(r[4:])
	n := len(r) - SampleIDSize(st)
	if n < headerSize {
		return "", fmt.Errorf("%v record of %d bytes shorter than its sample_id", typ, len(r))
	}
	body, sid := r[:n], r[n:]
	var s string
	var err error
	switch typ {
	case perf.RecordComm:
		var comm string
		comm, err = cstr(body, commFixed)
		s = fmt.Sprintf("PERF_RECORD_COMM: %s:%d/%d", comm, int32(le.Uint32(body[8:])), int32(le.Uint32(body[12:])))
	case perf.RecordFork:
		if len(body) != forkSize {
			return "", fmt.Errorf("FORK body %d bytes", len(body))
		}
		s = fmt.Sprintf("PERF_RECORD_FORK(%d:%d):(%d:%d) time %d", le.Uint32(body[8:]), le.Uint32(body[16:]),
			le.Uint32(body[12:]), le.Uint32(body[20:]), le.Uint64(body[24:]))
	case perf.RecordMmap:
		var name string
		name, err = cstr(body, mmapFixed)
		s = fmt.Sprintf("PERF_RECORD_MMAP %d/%d: [%#x(%#x) @ %#x]: %s", int32(le.Uint32(body[8:])), le.Uint32(body[12:]),
			le.Uint64(body[16:]), le.Uint64(body[24:]), le.Uint64(body[32:]), name)
	case perf.RecordMmap2:
		var name string
		name, err = cstr(body, mmap2Fixed)
		m := Mapping{Prot: le.Uint32(body[64:]), Flags: le.Uint32(body[68:])}
		s = fmt.Sprintf("PERF_RECORD_MMAP2 %d/%d: [%#x(%#x) @ %#x %02x:%02x %d %d]: %s flags %#x %s",
			le.Uint32(body[8:]), le.Uint32(body[12:]), le.Uint64(body[16:]), le.Uint64(body[24:]), le.Uint64(body[32:]),
			le.Uint32(body[40:]), le.Uint32(body[44:]), le.Uint64(body[48:]), le.Uint64(body[56:]), perms(m), m.Flags, name)
	default:
		return "", fmt.Errorf("unexpected record type %v", typ)
	}
	if err != nil {
		return "", fmt.Errorf("%v: %w", typ, err)
	}
	return fmt.Sprintf("misc %#04x %s sid[% x]", misc, s, sid), nil
}

// cstr reads the NUL-terminated string at body[off:] and checks that it
// fills its 8-byte padding with NULs exactly.
func cstr(body []byte, off int) (string, error) {
	if len(body) < off+8 {
		return "", fmt.Errorf("no room for a name: %d bytes", len(body))
	}
	tail := body[off:]
	i := bytes.IndexByte(tail, 0)
	if i < 0 {
		return "", fmt.Errorf("name %q not NUL-terminated", tail)
	}
	if paddedLen(i) != len(tail) {
		return "", fmt.Errorf("name %q takes %d bytes, want %d", tail[:i], len(tail), paddedLen(i))
	}
	if strings.Trim(string(tail[i:]), "\x00") != "" {
		return "", fmt.Errorf("padding after %q not zero: % x", tail[:i], tail[i:])
	}
	return string(tail[:i]), nil
}

// describeAll prints every record of b, one a line.
func describeAll(t testing.TB, b []byte, st perf.SampleType) []string {
	t.Helper()
	var out []string
	for _, r := range splitRecords(t, b) {
		s, err := describe(r, st)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func itoa(n int) string { return fmt.Sprint(n) }
