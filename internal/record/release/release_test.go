package release

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The test binary doubles as the releaser, as hwprof does.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == Arg {
		os.Exit(Main(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// TestStart hands the write ends of pipes to a releaser: once it and this
// process have closed them, the read ends see the end of file.
func TestStart(t *testing.T) {
	var rs, ws []*os.File
	for range 3 {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		rs, ws = append(rs, r), append(ws, w)
	}
	if !Start(ws) {
		t.Fatal("Start: the releaser did not start")
	}
	for _, w := range ws {
		w.Close()
	}
	for i, r := range rs {
		r.SetReadDeadline(time.Now().Add(30 * time.Second))
		var b [1]byte
		if n, err := r.Read(b[:]); n != 0 || err != io.EOF {
			t.Errorf("pipe %d: read %d bytes, %v; want the end of file once the releaser closed it", i, n, err)
		}
	}
}

// TestMainArgs checks the releaser's command line: the fds to close, the
// probes to remove (from a tracefs directory made here) and the mount.
func TestMainArgs(t *testing.T) {
	dir := t.TempDir()
	events := filepath.Join(dir, "uprobe_events")
	probes := "p:hwprof_1/f /bin/true:0x10\np:hwprof_1/f /bin/true:0x20\np:other/g /bin/true:0x30\n"
	if err := os.WriteFile(events, []byte(probes), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want int
	}{
		{"none", nil, 2},
		{"bad count", []string{"x"}, 2},
		{"no fds", []string{"0"}, 0},
		{"probes", []string{"0", dir, "hwprof_1"}, 0},
		{"no tracefs", []string{"0", filepath.Join(dir, "missing"), "hwprof_1"}, 1},
		{"bad mount id", []string{"0", dir, "none", dir, "x"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Main(tc.args); got != tc.want {
				t.Errorf("Main(%q) = %d, want %d", tc.args, got, tc.want)
			}
		})
	}
	b, err := os.ReadFile(events)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimPrefix(string(b), probes); got != "-:hwprof_1/f\n" {
		t.Errorf("written to uprobe_events: %q, want one removal of hwprof_1/f", got)
	}
}
