package procmap

import (
	"debug/elf"
	"slices"
	"testing"

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/perf"
)

func mmap2(pid, tid uint32, start, length, pgoff uint64, name string, prot uint32, t uint64) *perf.Mmap2 {
	return &perf.Mmap2{
		RecordHeader: perf.RecordHeader{Type: perf.RecordMmap2, Misc: perf.MiscUser},
		PID:          pid, TID: tid, Addr: start, Len: length, PgOff: pgoff,
		Prot: prot, Filename: name,
		Trailer: perf.Trailer{Present: perf.SampleTime | perf.SampleTID, PID: pid, TID: tid, Time: t},
	}
}

func comm(pid, tid uint32, name string, exec bool, t uint64) *perf.Comm {
	c := &perf.Comm{RecordHeader: perf.RecordHeader{Type: perf.RecordComm}, PID: pid, TID: tid, Comm: name,
		Trailer: perf.Trailer{Present: perf.SampleTime, Time: t}}
	if exec {
		c.Misc |= perf.MiscCommExec
	}
	return c
}

func fork(pid, ppid, tid, ptid uint32, t uint64) *perf.Fork {
	return &perf.Fork{RecordHeader: perf.RecordHeader{Type: perf.RecordFork}, PID: pid, PPID: ppid, TID: tid, PTID: ptid, Time: t}
}

const (
	rx = 0x5 // PROT_READ|PROT_EXEC
	r  = 0x1
	rw = 0x3
)

// world is a small recording: a PIE and a non-PIE program, a shared library
// whose text segment's vaddr differs from its offset, the vdso, the kernel
// and a module, a JIT region, a range replaced by a later mmap, a thread,
// and a fork followed by an exec.
func world(t testing.TB) *Map {
	segs := NewSegments("")
	segs.Set("/usr/bin/pie", []addrspace.Segment{
		{Offset: 0, Vaddr: 0, Filesz: 0x600, Memsz: 0x600, Flags: elf.PF_R},
		{Offset: 0x1000, Vaddr: 0x1000, Filesz: 0x2000, Memsz: 0x2000, Flags: elf.PF_R | elf.PF_X},
		{Offset: 0x3000, Vaddr: 0x4df0, Filesz: 0x300, Memsz: 0x400, Flags: elf.PF_R | elf.PF_W},
	})
	segs.Set("/usr/bin/nopie", []addrspace.Segment{
		{Offset: 0, Vaddr: 0x400000, Filesz: 0x500, Memsz: 0x500, Flags: elf.PF_R},
		{Offset: 0x1000, Vaddr: 0x401000, Filesz: 0x3000, Memsz: 0x3000, Flags: elf.PF_R | elf.PF_X},
	})
	segs.Set("/usr/lib/libfoo.so", []addrspace.Segment{
		{Offset: 0, Vaddr: 0, Filesz: 0x1000, Memsz: 0x1000, Flags: elf.PF_R},
		{Offset: 0x1000, Vaddr: 0x2000, Filesz: 0x5000, Memsz: 0x5000, Flags: elf.PF_R | elf.PF_X},
	})
	segs.Set("/bin/sh", []addrspace.Segment{{Offset: 0, Vaddr: 0, Filesz: 0x10000, Memsz: 0x10000, Flags: elf.PF_R | elf.PF_X}})
	segs.Set("/usr/bin/prog", []addrspace.Segment{{Offset: 0, Vaddr: 0x400000, Filesz: 0x10000, Memsz: 0x10000, Flags: elf.PF_R | elf.PF_X}})
	m := New(segs)
	recs := []perf.Record{
		&perf.Mmap{RecordHeader: perf.RecordHeader{Type: perf.RecordMmap, Misc: perf.MiscKernel},
			PID: KernelPID, Addr: 0xffffffff81000000, Len: 0x7effffff, PgOff: 0xffffffff81000000, Filename: "[kernel.kallsyms]_text"},
		&perf.Mmap{RecordHeader: perf.RecordHeader{Type: perf.RecordMmap, Misc: perf.MiscKernel},
			PID: KernelPID, Addr: 0xffffffffc0000000, Len: 0x10000, Filename: "/lib/modules/6.18.0/kernel/fs/ext4/ext4.ko"},
		comm(100, 100, "pie", false, 10),
		mmap2(100, 100, 0x555555554000, 0x1000, 0, "/usr/bin/pie", r, 11),
		mmap2(100, 100, 0x555555555000, 0x2000, 0x1000, "/usr/bin/pie", rx, 12),
		mmap2(100, 100, 0x7f0000002000, 0x5000, 0x1000, "/usr/lib/libfoo.so", rx, 13),
		mmap2(100, 100, 0x7ffff7fc1000, 0x2000, 0, "[vdso]", rx, 14),
		mmap2(100, 100, 0x7f1000000000, 0x10000, 0, "//anon", rx|0x2, 15),
		mmap2(100, 100, 0x7ffffffde000, 0x21000, 0, "[stack]", rw, 16),
		fork(100, 100, 101, 100, 20), // a thread
		mmap2(100, 101, 0x7f2000000000, 0x4000, 0x1000, "/usr/lib/libfoo.so", rx, 100),
		mmap2(100, 101, 0x7f2000001000, 0x1000, 0, "//anon", rx, 500), // replaces the middle page
		comm(200, 200, "nopie", false, 30),
		mmap2(200, 200, 0x401000, 0x3000, 0x1000, "/usr/bin/nopie", rx, 31),
		comm(300, 300, "sh", false, 40),
		mmap2(300, 300, 0x555555560000, 0x10000, 0, "/bin/sh", rx, 41),
		fork(301, 300, 301, 300, 1000),
		comm(301, 301, "prog", true, 2000),
		mmap2(301, 301, 0x400000, 0x10000, 0, "/usr/bin/prog", rx, 2001),
		&perf.Fork{RecordHeader: perf.RecordHeader{Type: perf.RecordExit}, PID: 301, PPID: 300, TID: 301, PTID: 300, Time: 3000},
	}
	for _, rec := range recs {
		if err := m.Apply(rec); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

func TestLookup(t *testing.T) {
	m := world(t)
	tests := []struct {
		name      string
		pid, tid  uint32
		time      uint64
		addr      addrspace.Addr
		wantOK    bool
		wantPath  string
		wantKind  addrspace.Kind
		wantObj   addrspace.ObjAddr
		wantStart addrspace.Addr
	}{
		{"PIE executable text", 100, 100, 50, 0x555555555123, true, "/usr/bin/pie", addrspace.KindFile, 0x1123, 0x555555555000},
		{"PIE executable first page", 100, 100, 50, 0x555555554010, true, "/usr/bin/pie", addrspace.KindFile, 0x10, 0x555555554000},
		{"non-PIE executable", 200, 200, 50, 0x401234, true, "/usr/bin/nopie", addrspace.KindFile, 0x401234, 0x401000},
		{"shared library with non-zero pgoff", 100, 100, 50, 0x7f0000002345, true, "/usr/lib/libfoo.so", addrspace.KindFile, 0x2345, 0x7f0000002000},
		{"vdso", 100, 100, 50, 0x7ffff7fc1a10, true, "[vdso]", addrspace.KindVDSO, 0xa10, 0x7ffff7fc1000},
		{"kernel", 100, 100, 50, 0xffffffff81334585, true, "[kernel.kallsyms]_text", addrspace.KindKernel, 0xffffffff81334585, 0xffffffff81000000},
		{"kernel from an unknown process", 999, 999, 50, 0xffffffff81000010, true, "[kernel.kallsyms]_text", addrspace.KindKernel, 0xffffffff81000010, 0xffffffff81000000},
		{"module", 100, 100, 50, 0xffffffffc0001234, true, "/lib/modules/6.18.0/kernel/fs/ext4/ext4.ko", addrspace.KindModule, 0xffffffffc0001234, 0xffffffffc0000000},
		{"anonymous executable (JIT)", 100, 100, 50, 0x7f1000000040, true, "//anon", addrspace.KindJIT, 0x7f1000000040, 0x7f1000000000},
		{"stack", 100, 100, 50, 0x7fffffffe000, true, "[stack]", addrspace.KindStack, 0x7fffffffe000, 0x7ffffffde000},
		{"thread shares its process's mappings", 100, 101, 50, 0x555555555123, true, "/usr/bin/pie", addrspace.KindFile, 0x1123, 0x555555555000},
		{"thread found by tid alone", 0xdead, 101, 50, 0x555555555123, true, "/usr/bin/pie", addrspace.KindFile, 0x1123, 0x555555555000},
		{"range before its replacement, looked up at an earlier time", 100, 101, 300, 0x7f2000001200, true, "/usr/lib/libfoo.so", addrspace.KindFile, 0x3200, 0x7f2000000000},
		{"range after its replacement", 100, 101, 600, 0x7f2000001200, true, "//anon", addrspace.KindJIT, 0x7f2000001200, 0x7f2000001000},
		{"part of a replaced range that stays mapped", 100, 101, 600, 0x7f2000002200, true, "/usr/lib/libfoo.so", addrspace.KindFile, 0x4200, 0x7f2000002000},
		{"forked child has its parent's mappings", 301, 301, 1500, 0x555555560100, true, "/bin/sh", addrspace.KindFile, 0x100, 0x555555560000},
		{"child before its exec, looked up after it", 301, 301, 1500, 0x555555560100, true, "/bin/sh", addrspace.KindFile, 0x100, 0x555555560000},
		{"child after exec: new image", 301, 301, 2500, 0x400100, true, "/usr/bin/prog", addrspace.KindFile, 0x400100, 0x400000},
		{"child after exec: old image gone", 301, 301, 2500, 0x555555560100, false, "", 0, 0, 0},
		{"parent unaffected by the child's exec", 300, 300, 2500, 0x555555560100, true, "/bin/sh", addrspace.KindFile, 0x100, 0x555555560000},
		{"after exit, samples still resolve", 301, 301, 3001, 0x400100, true, "/usr/bin/prog", addrspace.KindFile, 0x400100, 0x400000},
		{"unmapped address", 100, 100, 50, 0x1000, false, "", 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mp, obj, ok := m.Lookup(tt.pid, tt.tid, tt.time, tt.addr)
			if ok != tt.wantOK {
				t.Fatalf("Lookup(%d, %d, %d, %#x): ok = %v, want %v (mapping %+v)", tt.pid, tt.tid, tt.time, uint64(tt.addr), ok, tt.wantOK, mp)
			}
			if !ok {
				return
			}
			if mp.Object.Path != tt.wantPath || mp.Object.Kind != tt.wantKind || obj != tt.wantObj || mp.Start != tt.wantStart {
				t.Errorf("Lookup(%#x) = %s (%v) start %#x obj %#x, want %s (%v) start %#x obj %#x",
					uint64(tt.addr), mp.Object.Path, mp.Object.Kind, uint64(mp.Start), uint64(obj),
					tt.wantPath, tt.wantKind, uint64(tt.wantStart), uint64(tt.wantObj))
			}
		})
	}
}

func TestObjectsShared(t *testing.T) {
	m := world(t)
	a, _, _ := m.Lookup(100, 100, 50, 0x7f0000002345)
	b, _, _ := m.Lookup(100, 101, 200, 0x7f2000000010)
	if a.Object != b.Object {
		t.Errorf("two mappings of /usr/lib/libfoo.so have different objects: %p %p", a.Object, b.Object)
	}
	c, _, _ := m.Lookup(301, 301, 1500, 0x555555560100)
	d, _, _ := m.Lookup(300, 300, 1500, 0x555555560100)
	if c.Object != d.Object {
		t.Errorf("a forked child's mapping has its own object")
	}
}

func TestProcessAndMappings(t *testing.T) {
	m := world(t)
	p, ok := m.Process(301)
	if !ok || p.Comm != "prog" || !p.Exited || p.ExitAt != 3000 {
		t.Errorf("Process(301) = %+v, %v", p, ok)
	}
	if got := m.Mappings(301, 1500); len(got) != 1 || got[0].Object.Path != "/bin/sh" {
		t.Errorf("Mappings(301, 1500) = %+v", got)
	}
	if got := m.Mappings(301, 2500); len(got) != 1 || got[0].Object.Path != "/usr/bin/prog" {
		t.Errorf("Mappings(301, 2500) = %+v", got)
	}
	// The module sits inside the kernel's range: the kernel mapping is
	// split around it, not retired.
	got := m.Mappings(KernelPID, 0)
	var names []string
	for _, mp := range got {
		names = append(names, mp.Object.Path)
	}
	if want := []string{"[kernel.kallsyms]_text", "/lib/modules/6.18.0/kernel/fs/ext4/ext4.ko", "[kernel.kallsyms]_text"}; !slices.Equal(names, want) {
		t.Errorf("Mappings(kernel) = %q, want %q", names, want)
	}
}

func TestBadMmap(t *testing.T) {
	m := New(nil)
	if err := m.Apply(mmap2(1, 1, 0xfffffffffffff000, 0x2000, 0, "/x", rx, 1)); err == nil {
		t.Error("an mmap that wraps around the address space was accepted")
	}
	if err := m.Apply(mmap2(1, 1, 0x1000, 0, 0, "/x", rx, 1)); err == nil {
		t.Error("an empty mmap was accepted")
	}
}

// TestConcurrentLookup applies records while other goroutines look up
// (run with -race).
func TestConcurrentLookup(t *testing.T) {
	m := world(t)
	done := make(chan struct{})
	for range 2 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 2000 {
				m.Lookup(100, 100, uint64(i), 0x555555555123)
				m.Lookup(400, 400, uint64(i), 0x400100+addrspace.Addr(i))
			}
		}()
	}
	for i := range 2000 {
		if err := m.Apply(mmap2(400, 400, 0x400000+uint64(i)*0x1000, 0x1000, 0, "/usr/bin/prog", rx, uint64(i))); err != nil {
			t.Error(err)
		}
	}
	<-done
	<-done
	if _, _, ok := m.Lookup(400, 400, 5000, 0x400100); !ok {
		t.Error("a mapping applied concurrently with lookups is missing")
	}
}

func BenchmarkLookup(b *testing.B) {
	m := world(b)
	addrs := []addrspace.Addr{0x555555555123, 0x7f0000002345, 0x7ffff7fc1a10, 0xffffffff81334585, 0x7f2000001200}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		m.Lookup(100, 101, 600, addrs[i%len(addrs)])
	}
}

// lookupObject is the object and object address of a Lookup, a nil
// object and false when nothing held the address.
func lookupObject(mp addrspace.Mapping, oa addrspace.ObjAddr, ok bool) (*addrspace.Object, addrspace.ObjAddr, bool) {
	if !ok || mp.Object == nil {
		return nil, 0, false
	}
	return mp.Object, oa, true
}

// TestLookupObjectRange checks that every address of the range
// LookupObjectRange gives (its ends, its middle and steps through it)
// looks up to the same object at the object address moved by as much, on
// the lookups of TestLookup, and that a live file mapping's range is its
// segment's part of the mapping.
func TestLookupObjectRange(t *testing.T) {
	m := world(t)
	type at struct {
		pid, tid uint32
		time     uint64
		addr     addrspace.Addr
	}
	cases := []at{
		{100, 100, 50, 0x555555555123}, {100, 100, 50, 0x555555554010}, {200, 200, 50, 0x401234},
		{100, 100, 50, 0x7f0000002345}, {100, 100, 50, 0x7ffff7fc1a10}, {100, 100, 50, 0xffffffff81334585},
		{999, 999, 50, 0xffffffff81000010}, {100, 100, 50, 0xffffffffc0001234}, {100, 100, 50, 0x7f1000000040},
		{100, 100, 50, 0x7fffffffe000}, {100, 101, 50, 0x555555555123}, {0xdead, 101, 50, 0x555555555123},
		{100, 101, 300, 0x7f2000001200}, {100, 101, 600, 0x7f2000001200}, {100, 101, 600, 0x7f2000002200},
		{100, 101, 300, 0x7f2000000200}, {301, 301, 1500, 0x555555560100}, {301, 301, 2500, 0x400100},
		{300, 300, 2500, 0x555555560100}, {301, 301, 3001, 0x400100}, {100, 100, 50, 0x1000},
	}
	for _, c := range cases {
		obj, oa, lo, hi, ok := m.LookupObjectRange(c.pid, c.tid, c.time, c.addr)
		wobj, woa, wok := lookupObject(m.Lookup(c.pid, c.tid, c.time, c.addr))
		if ok != wok || obj != wobj || oa != woa {
			t.Errorf("%+v: LookupObjectRange gives %v %#x %v, LookupObject %v %#x %v", c, obj, oa, ok, wobj, woa, wok)
			continue
		}
		if !ok {
			continue
		}
		if lo > c.addr || c.addr >= hi {
			t.Errorf("%+v: range [%#x, %#x) does not hold the address", c, lo, hi)
			continue
		}
		probes := []addrspace.Addr{lo, hi - 1, lo + (hi-lo)/2}
		for step := (hi - lo) / 64; step > 0 && len(probes) < 70; {
			probes = append(probes, lo+addrspace.Addr(len(probes))*step)
			if probes[len(probes)-1] >= hi {
				probes = probes[:len(probes)-1]
				break
			}
		}
		for _, a := range probes {
			gobj, goa, gok := lookupObject(m.Lookup(c.pid, c.tid, c.time, a))
			if !gok || gobj != obj || goa != oa.Moved(c.addr, a) {
				t.Errorf("%+v: %#x in the range [%#x, %#x) looks up to %v %#x %v, want %v %#x", c, a, lo, hi, gobj, goa, gok, obj, oa.Moved(c.addr, a))
			}
		}
	}
	// the PIE's text: the whole mapping, its one segment
	if _, _, lo, hi, _ := m.LookupObjectRange(100, 100, 50, 0x555555555123); lo != 0x555555555000 || hi != 0x555555557000 {
		t.Errorf("PIE text range [%#x, %#x), want [0x555555555000, 0x555555557000)", lo, hi)
	}
	// a range replaced later, looked up before: the address alone
	if _, _, lo, hi, _ := m.LookupObjectRange(100, 101, 300, 0x7f2000001200); hi-lo != 1 {
		t.Errorf("replaced range looked up before its replacement: [%#x, %#x), want the address alone", lo, hi)
	}
}
