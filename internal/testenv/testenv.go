package testenv

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// PerfEvents skips the test unless this process can open a cpu-clock
// software event on itself with a raw perf_event_open (the kernel's
// permission, perf_event_paranoid, or a kernel without perf events).
func PerfEvents(t testing.TB) {
	t.Helper()
	attr := unix.PerfEventAttr{
		Type:   unix.PERF_TYPE_SOFTWARE,
		Config: unix.PERF_COUNT_SW_CPU_CLOCK,
		Size:   uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
		Bits:   unix.PerfBitDisabled | unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv,
	}
	fd, err := unix.PerfEventOpen(&attr, 0, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		t.Skipf("this machine cannot open a cpu-clock perf event for this process (perf_event_open: %v; kernel.perf_event_paranoid %s)", err, paranoid())
	}
	unix.Close(fd)
}

func paranoid() string {
	b, err := os.ReadFile("/proc/sys/kernel/perf_event_paranoid")
	if err != nil {
		return "unknown: " + err.Error()
	}
	return strings.TrimSpace(string(b))
}

// UprobePMU is the kernel's uprobe PMU directory in sysfs.
const UprobePMU = "/sys/bus/event_source/devices/uprobe"

// Uprobes skips the test unless uprobes can be placed as hwprof's exact
// source places them: the kernel has the uprobe PMU (its sysfs
// directory) and tracefs, and the test runs as root (tracefs's uprobe_events and
// uprobes on other users' files need it).
func Uprobes(t testing.TB) {
	t.Helper()
	PerfEvents(t)
	if _, err := os.Stat(UprobePMU + "/type"); err != nil {
		t.Skipf("the kernel has no uprobe PMU: %v", err)
	}
	if fs, err := os.ReadFile("/proc/filesystems"); err != nil || !strings.Contains(string(fs), "\ttracefs\n") {
		t.Skipf("the kernel has no tracefs (/proc/filesystems: %v)", err)
	}
	Root(t, "uprobes through tracefs")
}

// Root skips the test unless it runs as root (effective uid 0); why
// says what needs it.
func Root(t testing.TB, why string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skipf("%s: needs root, the test runs as uid %d", why, os.Geteuid())
	}
}

// Tool returns the path of a program on PATH, or skips the test saying
// that it is not installed.
func Tool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s not installed: %v", name, err)
	}
	return p
}
