package uprobe

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hwprof/hwprof/perf/synth"
)

func TestMatchLibrary(t *testing.T) {
	for _, c := range []struct {
		name, file string
		want       bool
	}{
		{"libm", "libm.so.6", true},
		{"libm", "libmount.so.1", false}, // the bug a prefix match had
		{"libm", "libmvec.so.1", false},
		{"libm", "libm.so", true},
		{"libm.so", "libm.so.6", true},
		{"libm.so.6", "libm.so.6", true},
		{"libm.so.6", "libm.so.60", false},
		{"libc", "libcap.so.2", false},
		{"libc", "libc.so.6", true},
		{"libc.so.6", "libc-2.31.so", false}, // by soname, not file name
		{"libc-2.31", "libc-2.31.so", true},
		{"libstdc++", "libstdc++.so.6.0.30", true},
		{"libstdc++.so.6", "libstdc++.so.6.0.30", true},
		{"libpython3.11", "libpython3.11.so.1.0", true},
		{"libpython3", "libpython3.11.so.1.0", false},
		{"libz", "libzstd.so.1", false},
		{"libz", "libz.so.1.2.13", true},
		{"libfoo.so.1", "libfoo.so.1.2.3", true},
		{"libfoo.so.1", "libfoo.so.1.x", false},
		{"libfoo", "libfoo.so.", false},
		{"libfoo", "libfoo.a", false},
	} {
		if got := MatchLibrary(c.name, c.file); got != c.want {
			t.Errorf("MatchLibrary(%q, %q) = %v, want %v", c.name, c.file, got, c.want)
		}
	}
}

// Rows of a Debian 12 process that maps libmount before libm.
const mapsRows = `55d0c8a4e000-55d0c8a52000 r-xp 00002000 fe:00 262350                     /usr/bin/app
7f3a10000000-7f3a10021000 r-xp 00004000 fe:00 326351                     /usr/lib/x86_64-linux-gnu/libmount.so.1.1.0
7f3a10100000-7f3a1017c000 r-xp 0000e000 fe:00 326281                     /usr/lib/x86_64-linux-gnu/libm.so.6
7f3a10200000-7f3a10356000 r-xp 00026000 fe:00 326269                     /usr/lib/x86_64-linux-gnu/libc.so.6
7f3a10400000-7f3a10401000 r-xp 00001000 fe:00 4242                       /opt/app/lib/libold.so.2 (deleted)
7ffd1e9e1000-7ffd1e9e3000 r-xp 00000000 00:00 0                          [vdso]
`

func TestMappedLibrary(t *testing.T) {
	maps, err := synth.ParseMaps([]byte(mapsRows))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, want, err string }{
		{"libm", "/usr/lib/x86_64-linux-gnu/libm.so.6", ""},
		{"libm.so.6", "/usr/lib/x86_64-linux-gnu/libm.so.6", ""},
		{"libmount", "/usr/lib/x86_64-linux-gnu/libmount.so.1.1.0", ""},
		{"libmount.so.1", "/usr/lib/x86_64-linux-gnu/libmount.so.1.1.0", ""},
		{"libc", "/usr/lib/x86_64-linux-gnu/libc.so.6", ""},
		{"libold", "", "was deleted"},
		{"libvdso", "", ""},
		{"vdso", "", ""},
	} {
		got, err := mappedLibrary(c.name, maps)
		if got != c.want || (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("mappedLibrary(%q) = %q, %v; want %q, error %q", c.name, got, err, c.want, c.err)
		}
	}
}

// In a directory, only ELF files count (libm.so is a linker script on
// Debian), the shortest matching name wins, and libmount never stands in
// for libm.
func TestDirLibrary(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, n := range []string{"libm.so.6", "libm.so.6.0", "libmount.so.1", "libfoo.so.2"} {
		if err := os.Symlink(exe, filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "libm.so"), []byte("GROUP ( libm.so.6 )\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, want string }{
		{"libm", "libm.so.6"},
		{"libm.so", "libm.so.6"},
		{"libm.so.6", "libm.so.6"},
		{"libmount", "libmount.so.1"},
		{"libfoo", "libfoo.so.2"},
		{"libmo", ""},
		{"libbar", ""},
	} {
		want := ""
		if c.want != "" {
			want = filepath.Join(dir, c.want)
		}
		if got := dirLibrary(c.name, dir); got != want {
			t.Errorf("dirLibrary(%q) = %q, want %q", c.name, got, want)
		}
	}
}

// A live process: sleep(1) maps libc; FindLibrary finds the file it maps
// by its short name and by its soname.
func TestFindLibraryLive(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep program on this machine")
	}
	cmd := exec.Command(sleep, "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	pid := cmd.Process.Pid
	// The loader maps libc soon after exec; read the maps as they are
	// then, without hwprof's parser.
	var libc string
	for deadline := time.Now().Add(10 * time.Second); libc == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
		for _, f := range strings.Fields(string(b)) {
			if strings.HasPrefix(filepath.Base(f), "libc.so.") || strings.HasPrefix(filepath.Base(f), "libc-") {
				libc = f
			}
		}
	}
	if libc == "" {
		t.Skip(sleep + " maps no libc (linked statically)")
	}
	for _, name := range []string{"libc", "libc.so.6"} {
		got, err := FindLibrary(name, sleep, []int{pid})
		if err != nil || got != libc {
			t.Errorf("FindLibrary(%q) = %q, %v; want %q", name, got, err, libc)
		}
	}
	if _, err := FindLibrary("libnothing.so.9", sleep, []int{pid}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("FindLibrary(libnothing.so.9): %v, want not found", err)
	}
}
