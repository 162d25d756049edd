package jitdump

import (
	"bytes"
	"encoding/binary"
)

// dumpWriter writes jitdump files as perf's jitdump.h lays them out, for
// tests: little-endian, header then records.
type dumpWriter struct {
	buf bytes.Buffer
}

func newDump(pid uint32, ts uint64) *dumpWriter {
	w := &dumpWriter{}
	w.u32(Magic)
	w.u32(1)          // version
	w.u32(headerSize) // total_size
	w.u32(62)         // EM_X86_64
	w.u32(0)          // pad1
	w.u32(pid)
	w.u64(ts)
	w.u64(0) // flags
	return w
}

func (w *dumpWriter) u32(v uint32) { binary.Write(&w.buf, binary.LittleEndian, v) }
func (w *dumpWriter) u64(v uint64) { binary.Write(&w.buf, binary.LittleEndian, v) }

func (w *dumpWriter) prefix(k Kind, size int, ts uint64) {
	w.u32(uint32(k))
	w.u32(uint32(prefixSize + size))
	w.u64(ts)
}

// load writes a JIT_CODE_LOAD of size bytes of code (int3s) at addr.
func (w *dumpWriter) load(ts, addr, size, index uint64, name string) *dumpWriter {
	w.prefix(KindCodeLoad, 40+len(name)+1+int(size), ts)
	w.u32(7)
	w.u32(8)
	w.u64(addr)
	w.u64(addr)
	w.u64(size)
	w.u64(index)
	w.buf.WriteString(name)
	w.buf.WriteByte(0)
	w.buf.Write(bytes.Repeat([]byte{0xcc}, int(size)))
	return w
}

func (w *dumpWriter) move(ts, from, to, size, index uint64) *dumpWriter {
	w.prefix(KindCodeMove, 48, ts)
	w.u32(7)
	w.u32(8)
	w.u64(to)
	w.u64(from)
	w.u64(to)
	w.u64(size)
	w.u64(index)
	return w
}

func (w *dumpWriter) debug(ts, addr uint64, entries ...DebugEntry) *dumpWriter {
	var body bytes.Buffer
	for _, e := range entries {
		binary.Write(&body, binary.LittleEndian, e.Addr)
		binary.Write(&body, binary.LittleEndian, e.Line)
		binary.Write(&body, binary.LittleEndian, e.Discrim)
		body.WriteString(e.File)
		body.WriteByte(0)
	}
	w.prefix(KindDebugInfo, 16+body.Len(), ts)
	w.u64(addr)
	w.u64(uint64(len(entries)))
	w.buf.Write(body.Bytes())
	return w
}

func (w *dumpWriter) unwinding(ts uint64, data []byte) *dumpWriter {
	w.prefix(KindUnwindingInfo, 24+len(data), ts)
	w.u64(uint64(len(data)))
	w.u64(0)
	w.u64(uint64(len(data)))
	w.buf.Write(data)
	return w
}

func (w *dumpWriter) close(ts uint64) *dumpWriter {
	w.prefix(KindClose, 0, ts)
	return w
}

func (w *dumpWriter) bytes() []byte { return w.buf.Bytes() }
