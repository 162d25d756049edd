package perf

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestNeededParanoid(t *testing.T) {
	user := Attr{Type: TypeSoftware, Flags: FlagExcludeKernel | FlagExcludeHV}
	withBranches := func(a Attr, b BranchSampleType) *Attr {
		a.SampleType |= SampleBranchStack
		a.BranchSampleType = b
		return &a
	}
	tp := Attr{Type: TypeTracepoint, Flags: FlagExcludeKernel}
	tpRaw := tp
	tpRaw.SampleType = SampleRaw
	for _, tc := range []struct {
		name string
		attr *Attr
		pid  int
		want int
	}{
		{"cpu-clock of a process", &Attr{Type: TypeSoftware}, 42, ParanoidKernel},
		{"cpu-clock:u of a process", &user, 42, ParanoidUser},
		{"cpu-clock:u of a whole CPU", &user, -1, ParanoidCPUWide},
		{"user branch stack", withBranches(user, BranchAnyCall|BranchUser), 42, ParanoidUser},
		{"branch stack without a level (the event's)", withBranches(user, BranchAnyCall), 42, ParanoidUser},
		{"kernel branch stack on a user event", withBranches(user, BranchAnyCall|BranchKernel), 42, ParanoidKernel},
		{"uprobe tracepoint, user only", &tp, 42, ParanoidUser},
		{"tracepoint with raw data", &tpRaw, 42, ParanoidRawTracepoints},
	} {
		if got := NeededParanoid(tc.attr, tc.pid); got != tc.want {
			t.Errorf("%s: NeededParanoid = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestUserOnlyFallback(t *testing.T) {
	kernel := Attr{Type: TypeSoftware, Flags: FlagDisabled | FlagInherit}
	u, ok := UserOnly(kernel)
	if !ok || !u.Flags.Has(FlagExcludeKernel) || !u.Flags.Has(FlagExcludeHV) || !u.Flags.Has(FlagInherit|FlagDisabled) {
		t.Errorf("UserOnly(%#x) = %#x, %v", kernel.Flags, u.Flags, ok)
	}
	if _, ok := UserOnly(u); ok {
		t.Error("UserOnly of a user-only attr offers a fallback")
	}
	kernelOnly := Attr{Flags: FlagExcludeUser}
	if _, ok := UserOnly(kernelOnly); ok {
		t.Error("UserOnly of a kernel-only attr (perf: no fallback) offers one")
	}
	eacces := &OpenError{Errno: unix.EACCES}
	for _, tc := range []struct {
		name     string
		attr     Attr
		err      error
		paranoid int
		want     bool
	}{
		{"paranoid 2, EACCES", kernel, eacces, 2, true},
		{"paranoid 2, EPERM", kernel, &OpenError{Errno: unix.EPERM}, 2, true},
		{"paranoid 3 (user space refused too: the retry fails with its own error)", kernel, eacces, 3, true},
		{"paranoid 1: not paranoia", kernel, eacces, 1, false},
		{"paranoid -1", kernel, eacces, -1, false},
		{"user only already", u, eacces, 2, false},
		{"not a permission error", kernel, &OpenError{Errno: unix.ENOENT}, 2, false},
		{"wrapped", kernel, fmt.Errorf("record: %w", eacces), 2, true},
	} {
		if got := FallBackToUser(&tc.attr, tc.err, tc.paranoid); got != tc.want {
			t.Errorf("%s: FallBackToUser = %v, want %v", tc.name, got, tc.want)
		}
	}
	for in, want := range map[string]string{
		"cpu-clock": "cpu-clock:u", "cycles:p": "cycles:pu", "cpu/event=0xc4,umask=0x20/": "cpu/event=0xc4,umask=0x20/u",
	} {
		if got := UserOnlyName(in); got != want {
			t.Errorf("UserOnlyName(%q) = %q, want %q", in, got, want)
		}
	}
	if n := UserOnlyNote(2); !strings.Contains(n, "kernel.perf_event_paranoid=2") || !strings.Contains(n, "user space only") ||
		!strings.Contains(n, "kernel.perf_event_paranoid=1") || !strings.Contains(n, "CAP_PERFMON") {
		t.Errorf("note %q", n)
	}
}

// Every permission error names the sysctl value or the capability that
// would allow the open.
func TestPermissionHint(t *testing.T) {
	kernel := &Attr{Type: TypeSoftware}
	user := &Attr{Type: TypeSoftware, Flags: FlagExcludeKernel}
	userKernelBranches := &Attr{Type: TypeRaw, Flags: FlagExcludeKernel, SampleType: SampleBranchStack, BranchSampleType: BranchAnyCall | BranchKernel}
	rawTP := &Attr{Type: TypeTracepoint, Flags: FlagExcludeKernel, SampleType: SampleRaw}
	for _, tc := range []struct {
		name     string
		attr     *Attr
		pid      int
		errno    unix.Errno
		paranoid int
		pErr     error
		want     []string
	}{
		{"kernel at 2", kernel, 42, unix.EACCES, 2, nil,
			[]string{"sysctl kernel.perf_event_paranoid=1", "it is 2", "CAP_PERFMON", "a :u event"}},
		{"user at 3", user, 42, unix.EACCES, 3, nil, []string{"sysctl kernel.perf_event_paranoid=2", "it is 3", "CAP_PERFMON"}},
		{"cpu-wide at 2", user, -1, unix.EACCES, 2, nil, []string{"sysctl kernel.perf_event_paranoid=0", "CAP_PERFMON"}},
		{"kernel branches at 2", userKernelBranches, 42, unix.EACCES, 2, nil, []string{"sysctl kernel.perf_event_paranoid=1", "branch filter without k"}},
		{"raw tracepoint at 0", rawTP, 42, unix.EACCES, 0, nil, []string{"sysctl kernel.perf_event_paranoid=-1", "CAP_PERFMON"}},
		{"another user's process", user, 42, unix.EACCES, 2, nil, []string{"which allows it", "another user", "CAP_SYS_PTRACE"}},
		{"EPERM by policy", user, 0, unix.EPERM, 1, nil, []string{"security policy", "CAP_PERFMON"}},
		{"no paranoid file", user, 42, unix.EACCES, 0, errors.New("no such file"), []string{"unreadable", "CAP_PERFMON"}},
	} {
		h := permissionHint(tc.attr, tc.pid, tc.errno, tc.paranoid, tc.pErr)
		for _, w := range tc.want {
			if !strings.Contains(h, w) {
				t.Errorf("%s: hint %q lacks %q", tc.name, h, w)
			}
		}
	}
}
