package perf

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// Each errno of perf_event_open gets a hint that says what to do.
func TestOpenHints(t *testing.T) {
	hw := &Attr{Type: TypeHardware, Config: HWCPUCycles}
	user := &Attr{Type: TypeSoftware, Flags: FlagExcludeKernel}
	branches := &Attr{Type: TypeRaw, SampleType: SampleBranchStack}
	precise := &Attr{Type: TypeSoftware, PreciseIP: 2}
	for _, tc := range []struct {
		name  string
		attr  *Attr
		errno unix.Errno
		want  []string
		is    error
	}{
		{"kernel sampling refused", hw, unix.EACCES, []string{"perf_event_paranoid", "CAP_PERFMON"}, ErrPermission},
		{"user sampling refused", user, unix.EPERM, []string{"perf_event_paranoid", "CAP_PERFMON"}, ErrPermission},
		{"no hardware PMU", hw, unix.ENOENT, []string{"no hardware PMU", "hwprof check"}, ErrNotSupported},
		{"no LBR", branches, unix.EOPNOTSUPP, []string{"branch stacks", "hwprof check"}, ErrNotSupported},
		{"no precise", precise, unix.EOPNOTSUPP, []string{"precise"}, ErrNotSupported},
		{"process gone", user, unix.ESRCH, []string{"no such process"}, nil},
		{"out of fds", user, unix.EMFILE, []string{"ulimit -n"}, nil},
		{"bad attr", user, unix.EINVAL, []string{"rejected"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := &OpenError{Name: "ev", PID: 42, CPU: 1, Errno: tc.errno, Hint: openHint(tc.attr, 42, tc.errno)}
			msg := err.Error()
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%q lacks %q", msg, w)
				}
			}
			if !errors.Is(err, tc.errno) {
				t.Errorf("errors.Is(err, %v) = false", tc.errno)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("errors.Is(err, %v) = false", tc.is)
			}
		})
	}
}

// On this machine hardware events fail with ENOENT, and the error says so.
func TestOpenWithoutPMU(t *testing.T) {
	// sysfs read directly: event.DiscoverPMUs is hwprof's
	const sysfsPMURoot = "/sys/bus/event_source/devices"
	if _, err := os.Stat(sysfsPMURoot); err != nil {
		t.Skipf("no PMUs in sysfs: %v", err)
	}
	if _, err := os.Stat(filepath.Join(sysfsPMURoot, "cpu")); err == nil {
		t.Skip("this machine has a cpu PMU")
	}
	_, err := Open("cycles", &Attr{Type: TypeHardware, Config: HWCPUCycles, Flags: FlagDisabled | FlagExcludeKernel}, 0, -1, -1, FlagFDCloexec)
	if !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "hwprof check") {
		t.Fatalf("open cycles without a PMU: %v", err)
	}
}

func TestParseCPUList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		bad  bool
	}{
		{"0", []int{0}, false},
		{"0-3", []int{0, 1, 2, 3}, false},
		{"0-1,4,6-7", []int{0, 1, 4, 6, 7}, false},
		{"", nil, false},
		{"3-1", nil, true},
		{"a", nil, true},
		{"0-", nil, true},
	} {
		got, err := ParseCPUList(tc.in)
		if (err != nil) != tc.bad || !equalInts(got, tc.want) {
			t.Errorf("ParseCPUList(%q) = %v, %v", tc.in, got, err)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestCapEff(t *testing.T) {
	status := "Name:\tx\nCapEff:\t000001ffffffffff\n"
	if !capEffHas(status, CapPerfmon) || capEffHas("CapEff:\t0000000000000000\n", CapPerfmon) {
		t.Error("CapEff parsing")
	}
}
