package synth

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestThreadsFixture(t *testing.T) {
	ts, err := Threads("testdata/proc", 4242)
	if err != nil {
		t.Fatal(err)
	}
	// A fixture directory lists in its file system's order, not /proc's.
	slices.SortFunc(ts, func(a, b Thread) int { return a.TID - b.TID })
	want := []Thread{
		{PID: 4242, TID: 4242, PPID: 4000, Comm: "server"},
		{PID: 4242, TID: 4243, PPID: 4000, Comm: `worker\\one`}, // status escapes a backslash
		// 4244 exited between the listing and the read of its status.
		{PID: 4242, TID: 4245, PPID: 4000, Comm: `x\ny`}, // and a newline
		{PID: 4242, TID: 4247, PPID: 4000, Comm: "a-very-long-nam"},
	}
	if !slices.Equal(ts, want) {
		t.Errorf("got  %+v\nwant %+v", ts, want)
	}
}

func TestParseStatus(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		want    Thread
		wantErr bool
	}{
		{"usual", "Name:\tbash\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t4405\nNgid:\t0\nPid:\t4405\nPPid:\t4400\n",
			Thread{PID: 4405, PPID: 4400, Comm: "bash"}, false},
		{"name with spaces kept, leading white space dropped", "Name:\t  my prog \nTgid:\t7\nPPid:\t1\n",
			Thread{PID: 7, PPID: 1, Comm: "my prog "}, false},
		{"empty name", "Name:\t\nTgid:\t7\nPPid:\t0\n", Thread{PID: 7}, false},
		{"name looking like a key", "Name:\tTgid: 9\nTgid:\t7\nPPid:\t1\n", Thread{PID: 7, PPID: 1, Comm: "Tgid: 9"}, false},
		{"no final newline", "Name:\tx\nTgid:\t7\nPPid:\t1", Thread{PID: 7, PPID: 1, Comm: "x"}, false},
		{"no Tgid", "Name:\tx\nPPid:\t1\n", Thread{}, true},
		{"Tgid not a number", "Name:\tx\nTgid:\tseven\n", Thread{}, true},
		{"Tgid zero", "Name:\tx\nTgid:\t0\n", Thread{}, true},
		{"PPid negative", "Name:\tx\nTgid:\t7\nPPid:\t-1\n", Thread{}, true},
		{"empty", "", Thread{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStatus([]byte(tt.text))
			if tt.wantErr {
				if !errors.Is(err, ErrStatusSyntax) {
					t.Errorf("got %+v, %v; want an ErrStatusSyntax", got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func FuzzParseStatus(f *testing.F) {
	f.Add("Name:\tbash\nTgid:\t4405\nPPid:\t4400\n")
	f.Add("Name:\nTgid:\n")
	f.Fuzz(func(t *testing.T, text string) {
		th, err := parseStatus([]byte(text))
		if err == nil && th.PID <= 0 {
			t.Fatalf("%q: accepted pid %d", text, th.PID)
		}
	})
}

// TestThreadsSelf lists this test process's threads (the Go runtime runs
// several) from the real /proc.
func TestThreadsSelf(t *testing.T) {
	pid := os.Getpid()
	ts, err := Threads("/proc", pid)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) == 0 || ts[0].TID != pid {
		t.Fatalf("threads %+v: want the leader %d first", ts, pid)
	}
	comm, err := os.ReadFile(filepath.Join("/proc", "self", "comm"))
	if err != nil {
		t.Fatal(err)
	}
	for _, th := range ts {
		if th.PID != pid || th.PPID != os.Getppid() {
			t.Errorf("thread %+v: want pid %d, ppid %d", th, pid, os.Getppid())
		}
	}
	if want := strings.TrimSuffix(string(comm), "\n"); ts[0].Comm != want {
		t.Errorf("leader comm %q, want %q", ts[0].Comm, want)
	}
}

// exitedPID runs and reaps a child, so its pid is (for a while) unused.
func exitedPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("/bin/true")
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot run /bin/true: %v", err)
	}
	return cmd.Process.Pid
}

func TestThreadsGone(t *testing.T) {
	pid := exitedPID(t)
	_, err := Threads("/proc", pid)
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Threads of exited pid %d: %v, want os.ErrNotExist", pid, err)
	}
	if err != nil && !strings.Contains(err.Error(), "pid "+itoa(pid)) {
		t.Errorf("error %q does not name pid %d", err, pid)
	}
	// All tasks gone between the listing and their status files.
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "77", "task", "77"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Threads(dir, 77); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Threads with every task gone: %v, want os.ErrNotExist", err)
	}
}

// TestProcErrESRCH: a task that exits while its files are read gives
// ESRCH, which must read as "gone" too.
func TestProcErrESRCH(t *testing.T) {
	err := procErr("read maps", 12, &os.PathError{Op: "read", Path: "/proc/12/maps", Err: unix.ESRCH})
	if !errors.Is(err, os.ErrNotExist) || !errors.Is(err, unix.ESRCH) || !strings.Contains(err.Error(), "pid 12") {
		t.Errorf("procErr(ESRCH) = %v, want os.ErrNotExist and ESRCH, naming pid 12", err)
	}
	if !gone(unix.ESRCH) || !gone(os.ErrNotExist) || gone(unix.EACCES) {
		t.Error("gone: want true for ESRCH and ENOENT only")
	}
}
