package synth

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/perf"
)

// unhex reads bytes written as a hex dump: "03 00 00 00 ...", any spacing.
func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Sample types of the recordings the real bytes below come from
// (`perf evlist -v`).
const (
	stPerfP = perf.SampleIP | perf.SampleTID | perf.SampleTime | perf.SamplePeriod // perf record -p
	stPerfA = stPerfP | perf.SampleCPU | perf.SampleIdentifier                     // perf record -a
)

// TestRecordBytes checks whole records byte by byte. Rows marked "perf"
// are the raw bytes `perf report -D` (perf 6.1) dumped from `perf record -p`
// or `-a` recordings of a bash and the kernel on a Linux 6.18 x86-64 host;
// the others are computed by hand from the structs in <linux/perf_event.h>.
func TestRecordBytes(t *testing.T) {
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{
			"perf: COMM bash 4405/4405, zero sample_id TID|TIME",
			AppendComm(nil, Thread{PID: 4405, TID: 4405, Comm: "bash"}, stPerfP, SampleID{}),
			`03 00 00 00 00 00 28 00 35 11 00 00 35 11 00 00
			 62 61 73 68 00 00 00 00 00 00 00 00 00 00 00 00
			 00 00 00 00 00 00 00 00`,
		},
		{
			"COMM with a filled sample_id TID|TIME|CPU|IDENTIFIER",
			AppendComm(nil, Thread{PID: 0x1234, TID: 0x1235, Comm: "sleep"}, stPerfA,
				SampleID{PID: 0x1234, TID: 0x1235, Time: 0x0102030405060708, CPU: 1, ID: 0xbad, Identifier: 0x99}),
			`03 00 00 00 00 00 38 00 34 12 00 00 35 12 00 00
			 73 6c 65 65 70 00 00 00
			 34 12 00 00 35 12 00 00  08 07 06 05 04 03 02 01
			 01 00 00 00 00 00 00 00  99 00 00 00 00 00 00 00`,
		},
		{
			"COMM of 16 bytes cut to 15 and a NUL, no sample_id_all",
			AppendComm(nil, Thread{PID: 1, TID: 2, Comm: "a-very-long-name"}, 0, SampleID{}),
			`03 00 00 00 00 00 20 00 01 00 00 00 02 00 00 00
			 61 2d 76 65 72 79 2d 6c 6f 6e 67 2d 6e 61 6d 00`,
		},
		{
			"perf: MMAP2 PIE executable text /usr/bin/bash",
			AppendMmap2(nil, 4405, 4405, Mapping{Start: 0x5624f501f000, End: 0x5624f50e0000, Pgoff: 0x2f000,
				Maj: 0xfe, Min: 0, Ino: 246999, Prot: 5, Flags: 2, Path: "/usr/bin/bash"}, stPerfP, SampleID{}),
			`0a 00 00 00 02 00 68 00 35 11 00 00 35 11 00 00
			 00 f0 01 f5 24 56 00 00 00 10 0c 00 00 00 00 00
			 00 f0 02 00 00 00 00 00 fe 00 00 00 00 00 00 00
			 d7 c4 03 00 00 00 00 00 00 00 00 00 00 00 00 00
			 05 00 00 00 02 00 00 00 2f 75 73 72 2f 62 69 6e
			 2f 62 61 73 68 00 00 00 00 00 00 00 00 00 00 00
			 00 00 00 00 00 00 00 00`,
		},
		{
			"perf: MMAP2 [vsyscall] --xp",
			AppendMmap2(nil, 4405, 4405, Mapping{Start: 0xffffffffff600000, End: 0xffffffffff601000,
				Prot: 4, Flags: 2, Path: "[vsyscall]"}, stPerfP, SampleID{}),
			`0a 00 00 00 02 00 68 00 35 11 00 00 35 11 00 00
			 00 00 60 ff ff ff ff ff 00 10 00 00 00 00 00 00
			 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
			 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
			 04 00 00 00 02 00 00 00 5b 76 73 79 73 63 61 6c
			 6c 5d 00 00 00 00 00 00 00 00 00 00 00 00 00 00
			 00 00 00 00 00 00 00 00`,
		},
		{
			"MMAP2 data mapping [heap]: misc USER|MMAP_DATA",
			AppendMmap2(nil, 4242, 4242, Mapping{Start: 0x55d4c4c10000, End: 0x55d4c4c51000,
				Prot: 3, Flags: 2, Path: "[heap]"}, 0, SampleID{}),
			`0a 00 00 00 02 20 50 00 92 10 00 00 92 10 00 00
			 00 00 c1 c4 d4 55 00 00 00 10 04 00 00 00 00 00
			 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
			 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
			 03 00 00 00 02 00 00 00 5b 68 65 61 70 5d 00 00`,
		},
		{
			"MMAP2 shared exec, path with a space, ino_generation and sample_id placed",
			AppendMmap2(nil, 4242, 4242, Mapping{Start: 0x7f11b3392000, End: 0x7f11b3393000, Pgoff: 0x1000,
				Maj: 0xfe, Min: 1, Ino: 9978799, InoGeneration: 7, Prot: 5, Flags: 1, Path: "/tmp/my lib.so"},
				perf.SampleTID|perf.SampleTime, SampleID{PID: 4242, TID: 4243, Time: 0x10}),
			`0a 00 00 00 02 00 68 00 92 10 00 00 92 10 00 00
			 00 20 39 b3 11 7f 00 00 00 10 00 00 00 00 00 00
			 00 10 00 00 00 00 00 00 fe 00 00 00 01 00 00 00
			 af 43 98 00 00 00 00 00 07 00 00 00 00 00 00 00
			 05 00 00 00 01 00 00 00 2f 74 6d 70 2f 6d 79 20
			 6c 69 62 2e 73 6f 00 00 92 10 00 00 93 10 00 00
			 10 00 00 00 00 00 00 00`,
		},
		{
			"MMAP2 anonymous exec mapping named //anon",
			AppendMmap2(nil, 1, 1, Mapping{Start: 0x1000, End: 0x3000, Prot: 7, Flags: 2}, 0, SampleID{}),
			`0a 00 00 00 02 00 50 00 01 00 00 00 01 00 00 00
			 00 10 00 00 00 00 00 00 00 20 00 00 00 00 00 00
			 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
			 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
			 07 00 00 00 02 00 00 00 2f 2f 61 6e 6f 6e 00 00`,
		},
		{
			"perf -a: FORK of a leader, parent from PPid",
			AppendFork(nil, Thread{PID: 3, TID: 3, PPID: 2, Comm: "pool_workqueue_"}, stPerfA, SampleID{}),
			`07 00 00 00 00 20 40 00 03 00 00 00 02 00 00 00
			 03 00 00 00 02 00 00 00 00 00 00 00 00 00 00 00
			 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
			 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00`,
		},
		{
			"FORK of a non-leader thread: parent is the leader",
			AppendFork(nil, Thread{PID: 5651, TID: 5654, PPID: 1}, 0, SampleID{}),
			`07 00 00 00 00 20 20 00 13 16 00 00 13 16 00 00
			 16 16 00 00 13 16 00 00 00 00 00 00 00 00 00 00`,
		},
		{
			"perf: kernel MMAP [kernel.kallsyms]_text, pid -1",
			AppendKernelMmap(nil, KernelText{Start: 0xffffffff81000000, End: 0xffffffff822090c8,
				RefSym: "_text", RefAddr: 0xffffffff81000000}, stPerfP, SampleID{}),
			`01 00 00 00 01 00 50 00 ff ff ff ff 00 00 00 00
			 00 00 00 81 ff ff ff ff c8 90 20 01 00 00 00 00
			 00 00 00 81 ff ff ff ff 5b 6b 65 72 6e 65 6c 2e
			 6b 61 6c 6c 73 79 6d 73 5d 5f 74 65 78 74 00 00
			 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := unhex(t, tt.want)
			if !bytes.Equal(tt.got, want) {
				t.Errorf("got\n% x\nwant\n% x", tt.got, want)
			}
		})
	}
}

// TestRecordSizes checks the padding of names around multiples of 8 and
// that every Size function agrees with what its Append writes.
func TestRecordSizes(t *testing.T) {
	tests := []struct {
		name string
		path string
		st   perf.SampleType
		want int
	}{
		{"7-byte name takes 8", "/bin/sh", 0, 72 + 8},
		{"8-byte name takes 16", "/bin/zsh", 0, 72 + 16},
		{"empty name is //anon in 8", "", 0, 72 + 8},
		{"15-byte name takes 16, with TID|TIME", "/usr/lib/x.so.1", perf.SampleTID | perf.SampleTime, 72 + 16 + 16},
		{"name longer than PATH_MAX cut to 4095", "/" + strings.Repeat("a", 5000), 0, 72 + 4096},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := Mapping{Start: 0x1000, End: 0x2000, Prot: 5, Flags: 2, Path: tt.path}
			b := AppendMmap2(nil, 1, 1, m, tt.st, SampleID{})
			if len(b) != tt.want {
				t.Errorf("AppendMmap2 wrote %d bytes, want %d", len(b), tt.want)
			}
			if _, err := describe(b, tt.st); err != nil {
				t.Error(err)
			}
		})
	}
	for _, comm := range []string{"", "a", "1234567", "12345678", "123456789012345", "with\x00nul"} {
		b := AppendComm(nil, Thread{PID: 1, TID: 1, Comm: comm}, stPerfA, SampleID{})
		if len(b) != CommSize(comm, stPerfA) {
			t.Errorf("AppendComm(%q) wrote %d bytes, CommSize %d", comm, len(b), CommSize(comm, stPerfA))
		}
		if _, err := describe(b, stPerfA); err != nil {
			t.Errorf("AppendComm(%q): %v", comm, err)
		}
	}
	if b := AppendFork(nil, Thread{}, stPerfA, SampleID{}); len(b) != ForkSize(stPerfA) {
		t.Errorf("AppendFork wrote %d bytes, ForkSize %d", len(b), ForkSize(stPerfA))
	}
	k := KernelText{Start: 1, End: 2, RefSym: "_stext", RefAddr: 1}
	if b := AppendKernelMmap(nil, k, stPerfP, SampleID{}); len(b) != mmapFixed+24+SampleIDSize(stPerfP) { // the name "[kernel.kallsyms]_stext" and its NUL: 24 bytes
		t.Errorf("AppendKernelMmap wrote %d bytes, want %d", len(b), mmapFixed+24+SampleIDSize(stPerfP))
	}
}

func TestAppendMmap2NoAllocs(t *testing.T) {
	m := Mapping{Start: 0x7f11b31cb000, End: 0x7f11b3321000, Pgoff: 0x26000, Maj: 0xfe, Ino: 326269,
		Prot: 5, Flags: 2, Path: "/usr/lib/x86_64-linux-gnu/libc.so.6"}
	buf := make([]byte, 0, 4096)
	allocs := testing.AllocsPerRun(100, func() {
		buf = AppendMmap2(buf[:0], 1, 1, m, stPerfA, SampleID{})
		buf = AppendComm(buf, Thread{PID: 1, TID: 1, Comm: "bash"}, stPerfA, SampleID{})
	})
	if allocs != 0 {
		t.Errorf("AppendMmap2+AppendComm into a large enough buffer: %v allocations, want 0", allocs)
	}
}

func BenchmarkAppendMmap2(b *testing.B) {
	m := Mapping{Start: 0x7f11b31cb000, End: 0x7f11b3321000, Pgoff: 0x26000, Maj: 0xfe, Ino: 326269,
		Prot: 5, Flags: 2, Path: "/usr/lib/x86_64-linux-gnu/libc.so.6"}
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendMmap2(buf[:0], 1, 1, m, stPerfA, SampleID{})
	}
}
