package synth

import (
	"encoding/binary"
	"strings"

	"github.com/hwprof/hwprof/perf"
	"golang.org/x/sys/unix"
)

// Sizes from <linux/perf_event.h> and perf's tools/perf/util/event.h.
const (
	headerSize = 8  // struct perf_event_header: u32 type, u16 misc, u16 size
	commFixed  = 16 // header, u32 pid, u32 tid
	commMax    = 16 // TASK_COMM_LEN: perf's comm[16], NUL included
	forkSize   = 32 // header, u32 pid, ppid, tid, ptid, u64 time
	mmapFixed  = 40 // header, u32 pid, tid, u64 addr, len, pgoff
	mmap2Fixed = 72 // mmapFixed, u32 maj, min, u64 ino, ino_generation, u32 prot, flags
	pathMax    = 4096
)

// AnonName is the file name perf gives anonymous mappings in synthesized
// MMAP2 records.
const AnonName = "//anon"

// KernelMmapPID is the pid of the kernel's MMAP record: HOST_KERNEL_ID (-1)
// in perf.
const KernelMmapPID = ^uint32(0)

// appendHeader appends struct perf_event_header.
func appendHeader(b []byte, t perf.RecordType, misc uint16, size int) []byte {
	le := binary.LittleEndian
	b = le.AppendUint32(b, uint32(t))
	b = le.AppendUint16(b, misc)
	return le.AppendUint16(b, uint16(size))
}

// cString cuts s at its first NUL and to at most max-1 bytes, as perf's
// strlen and bounded copies do.
func cString(s string, max int) string {
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	if len(s) > max-1 {
		s = s[:max-1]
	}
	return s
}

// paddedLen is the bytes a NUL-terminated string of length n takes when
// padded to a multiple of 8 (PERF_ALIGN(n+1, sizeof(u64))).
func paddedLen(n int) int { return (n + 1 + 7) &^ 7 }

// appendPadded appends s, then NULs up to paddedLen(len(s)).
func appendPadded(b []byte, s string) []byte {
	b = append(b, s...)
	for range paddedLen(len(s)) - len(s) {
		b = append(b, 0)
	}
	return b
}

// CommSize is the size of the record AppendComm writes.
func CommSize(comm string, st perf.SampleType) int {
	return commFixed + paddedLen(len(cString(comm, commMax))) + SampleIDSize(st)
}

// AppendComm appends a PERF_RECORD_COMM for thread t, mirroring struct
// perf_record_comm in perf's event.h (the kernel's layout: header, u32 pid,
// u32 tid, char comm[], sample_id). misc is 0: a synthesized COMM is not an
// exec. The comm is cut at 15 bytes and NUL-padded to 8 bytes.
func AppendComm(b []byte, t Thread, st perf.SampleType, sid SampleID) []byte {
	comm := cString(t.Comm, commMax)
	b = appendHeader(b, perf.RecordComm, 0, CommSize(comm, st))
	b = binary.LittleEndian.AppendUint32(b, uint32(t.PID))
	b = binary.LittleEndian.AppendUint32(b, uint32(t.TID))
	b = appendPadded(b, comm)
	return AppendSampleID(b, st, sid)
}

// ForkSize is the size of the record AppendFork writes.
func ForkSize(st perf.SampleType) int { return forkSize + SampleIDSize(st) }

// AppendFork appends the PERF_RECORD_FORK perf synthesizes for thread t
// when it synthesizes whole systems (perf record -a; perf record -p writes
// none). It mirrors struct perf_record_fork (header, u32 pid, ppid, tid,
// ptid, u64 time, sample_id) with misc PERF_RECORD_MISC_FORK_EXEC and time
// 0. Like perf, it says the leader was forked by its parent (t.PPID) and
// every other thread by its leader.
func AppendFork(b []byte, t Thread, st perf.SampleType, sid SampleID) []byte {
	parent := t.PID
	if t.TID == t.PID {
		parent = t.PPID
	}
	le := binary.LittleEndian
	b = appendHeader(b, perf.RecordFork, perf.MiscForkExec, ForkSize(st))
	b = le.AppendUint32(b, uint32(t.PID))
	b = le.AppendUint32(b, uint32(parent)) // ppid
	b = le.AppendUint32(b, uint32(t.TID))
	b = le.AppendUint32(b, uint32(parent)) // ptid
	b = le.AppendUint64(b, 0)              // time
	return AppendSampleID(b, st, sid)
}

// mmapName is the file name a synthesized MMAP2 carries for m.
func mmapName(m *Mapping) string {
	if m.Path == "" {
		return AnonName
	}
	return cString(m.Path, pathMax)
}

// Mmap2Misc is the header misc perf gives the synthesized MMAP2 of m:
// PERF_RECORD_MISC_USER, with PERF_RECORD_MISC_MMAP_DATA if m is not
// executable.
func Mmap2Misc(m Mapping) uint16 {
	if m.Prot&unix.PROT_EXEC == 0 {
		return perf.MiscUser | perf.MiscMmapData
	}
	return perf.MiscUser
}

// AppendMmap2 appends a PERF_RECORD_MMAP2 for mapping m of process pid,
// thread tid, mirroring struct perf_record_mmap2 (header, u32 pid, tid,
// u64 addr, len, pgoff, u32 maj, min, u64 ino, ino_generation, u32 prot,
// flags, char filename[], sample_id). An empty m.Path is written as
// "//anon"; the name is NUL-padded to 8 bytes.
func AppendMmap2(b []byte, pid, tid int, m Mapping, st perf.SampleType, sid SampleID) []byte {
	name := mmapName(&m)
	le := binary.LittleEndian
	b = appendHeader(b, perf.RecordMmap2, Mmap2Misc(m), mmap2Fixed+paddedLen(len(name))+SampleIDSize(st))
	b = le.AppendUint32(b, uint32(pid))
	b = le.AppendUint32(b, uint32(tid))
	b = le.AppendUint64(b, m.Start)
	b = le.AppendUint64(b, m.End-m.Start)
	b = le.AppendUint64(b, m.Pgoff)
	b = le.AppendUint32(b, m.Maj)
	b = le.AppendUint32(b, m.Min)
	b = le.AppendUint64(b, m.Ino)
	b = le.AppendUint64(b, m.InoGeneration)
	b = le.AppendUint32(b, m.Prot)
	b = le.AppendUint32(b, m.Flags)
	b = appendPadded(b, name)
	return AppendSampleID(b, st, sid)
}

// AppendKernelMmap appends the PERF_RECORD_MMAP perf synthesizes for the
// kernel text, mirroring struct perf_record_mmap (header, u32 pid, tid,
// u64 addr, len, pgoff, char filename[], sample_id): misc
// PERF_RECORD_MISC_KERNEL, pid -1, tid 0, start and length of the text,
// pgoff the address of the reference symbol, filename
// "[kernel.kallsyms]" + the symbol's name.
func AppendKernelMmap(b []byte, k KernelText, st perf.SampleType, sid SampleID) []byte {
	name := cString(k.Name(), pathMax)
	le := binary.LittleEndian
	b = appendHeader(b, perf.RecordMmap, perf.MiscKernel, mmapFixed+paddedLen(len(name))+SampleIDSize(st))
	b = le.AppendUint32(b, KernelMmapPID)
	b = le.AppendUint32(b, 0)
	b = le.AppendUint64(b, k.Start)
	b = le.AppendUint64(b, k.End-k.Start)
	b = le.AppendUint64(b, k.RefAddr)
	b = appendPadded(b, name)
	return AppendSampleID(b, st, sid)
}
