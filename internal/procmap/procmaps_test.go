package procmap

import (
	"os"
	"strings"
	"testing"
)

// Rows as a 6.1 kernel prints them (Debian 12, cat(1) and a JIT process).
const procMapsText = `560aa5059000-560aa505b000 r--p 00000000 fe:00 247026                     /usr/bin/cat
560aa505b000-560aa5060000 r-xp 00002000 fe:00 247026                     /usr/bin/cat
560ae2181000-560ae21a2000 rw-p 00000000 00:00 0                          [heap]
7f94a0129000-7f94a014b000 rw-p 00000000 00:00 0 
7f94a01d3000-7f94a0329000 r-xp 00026000 fe:00 326269                     /usr/lib/x86_64-linux-gnu/libc.so.6
7f94a0391000-7f94a0398000 r--s 00000000 fe:00 325737                     /usr/lib/x86_64-linux-gnu/gconv/gconv-modules.cache
7f0000001000-7f0000002000 r-xp 00001000 fe:00 4242                       /opt/my app/lib/libfoo.so.1 (deleted)
7ffd1e9e1000-7ffd1e9e3000 r-xp 00000000 00:00 0                          [vdso]
ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]
`

func TestParseProcMaps(t *testing.T) {
	got, err := ParseProcMaps(strings.NewReader(procMapsText))
	if err != nil {
		t.Fatal(err)
	}
	want := []ProcMapsEntry{
		{Start: 0x560aa5059000, End: 0x560aa505b000, Perms: "r--p", Maj: 0xfe, Inode: 247026, Path: "/usr/bin/cat"},
		{Start: 0x560aa505b000, End: 0x560aa5060000, Perms: "r-xp", Offset: 0x2000, Maj: 0xfe, Inode: 247026, Path: "/usr/bin/cat"},
		{Start: 0x560ae2181000, End: 0x560ae21a2000, Perms: "rw-p", Path: "[heap]"},
		{Start: 0x7f94a0129000, End: 0x7f94a014b000, Perms: "rw-p"},
		{Start: 0x7f94a01d3000, End: 0x7f94a0329000, Perms: "r-xp", Offset: 0x26000, Maj: 0xfe, Inode: 326269, Path: "/usr/lib/x86_64-linux-gnu/libc.so.6"},
		{Start: 0x7f94a0391000, End: 0x7f94a0398000, Perms: "r--s", Maj: 0xfe, Inode: 325737, Path: "/usr/lib/x86_64-linux-gnu/gconv/gconv-modules.cache"},
		{Start: 0x7f0000001000, End: 0x7f0000002000, Perms: "r-xp", Offset: 0x1000, Maj: 0xfe, Inode: 4242, Path: "/opt/my app/lib/libfoo.so.1", Deleted: true},
		{Start: 0x7ffd1e9e1000, End: 0x7ffd1e9e3000, Perms: "r-xp", Path: "[vdso]"},
		{Start: 0xffffffffff600000, End: 0xffffffffff601000, Perms: "--xp", Path: "[vsyscall]"},
	}
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d: %+v\nwant %+v", i+1, got[i], want[i])
		}
	}
	if !got[1].Exec() || got[0].Exec() || !got[4].IsFile() || got[2].IsFile() || got[3].IsFile() {
		t.Errorf("Exec/IsFile wrong: %+v", got[:5])
	}
}

func TestParseProcMapsBad(t *testing.T) {
	for _, line := range []string{
		"560aa5059000 r--p 00000000 fe:00 247026 /usr/bin/cat",
		"560aa505b000-560aa5059000 r--p 00000000 fe:00 247026 /usr/bin/cat",
		"560aa5059000-560aa505b000 r-p 00000000 fe:00 247026 /usr/bin/cat",
		"560aa5059000-560aa505b000 r--p zz fe:00 247026 /usr/bin/cat",
		"560aa5059000-560aa505b000 r--p 00000000 fe00 247026 /usr/bin/cat",
		"560aa5059000-560aa505b000 r--p 00000000 fe:00 x /usr/bin/cat",
	} {
		if _, err := ParseProcMaps(strings.NewReader("7f94a0129000-7f94a014b000 rw-p 00000000 00:00 0\n" + line + "\n")); err == nil || !strings.Contains(err.Error(), "line 2") {
			t.Errorf("%q: error %v, want one naming line 2", line, err)
		}
	}
}

// This process's own maps parse, and hold its executable.
func TestReadProcMapsSelf(t *testing.T) {
	es, err := ReadProcMaps(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if e.Path == exe && e.Exec() {
			return
		}
	}
	t.Errorf("no executable mapping of %s in %d entries", exe, len(es))
}
