package perf

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
)

// What perf_event_paranoid allows a process without CAP_PERFMON (the
// checks of perf_event_open in kernel/events/core.c): -1 raw tracepoint
// data, 0 CPU-wide events, 1 kernel profiling of one's own processes, 2
// user-space profiling of one's own processes; Debian and Android kernels
// add 3, nothing at all.
const (
	ParanoidRawTracepoints = -1
	ParanoidCPUWide        = 0
	ParanoidKernel         = 1
	ParanoidUser           = 2
)

// NeededParanoid is the highest perf_event_paranoid at which a process
// without CAP_PERFMON may open a on pid (-1: every process of a CPU): the
// kernel asks perf_allow_tracepoint for raw tracepoint samples,
// perf_allow_cpu for CPU-wide events and perf_allow_kernel for events,
// branch stacks and physical addresses that see the kernel.
func NeededParanoid(a *Attr, pid int) int {
	switch {
	case a.Type == TypeTracepoint && a.SampleType&SampleRaw != 0:
		return ParanoidRawTracepoints
	case pid == -1:
		return ParanoidCPUWide
	case !a.Flags.Has(FlagExcludeKernel),
		a.SampleType&SampleBranchStack != 0 && a.BranchSampleType&(BranchKernel|BranchHV) != 0,
		a.SampleType&SamplePhysAddr != 0:
		return ParanoidKernel
	}
	return ParanoidUser
}

// UserOnly returns a without the kernel and the hypervisor (exclude_kernel
// and exclude_hv set), the attr perf record falls back to when the kernel
// refuses one that counts the kernel (evsel__fallback in
// tools/perf/util/evsel.c). ok is false when a excludes the kernel already,
// or excludes user space (what would be left is nothing).
func UserOnly(a Attr) (Attr, bool) {
	if a.Flags.Has(FlagExcludeKernel) || a.Flags.Has(FlagExcludeUser) {
		return a, false
	}
	a.Flags |= FlagExcludeKernel | FlagExcludeHV
	return a, true
}

// UserOnlyName is the name perf gives an event after the user-only
// fallback: the :u modifier added ("cpu-clock:u", "cycles:pu",
// "cpu/event=0xc4/u").
func UserOnlyName(name string) string {
	if strings.ContainsAny(name, ":/") {
		return name + "u"
	}
	return name + ":u"
}

// FallBackToUser reports whether an open that failed with err should be
// retried with UserOnly, as perf record does: the kernel refused it for
// want of permission (EACCES, EPERM), it counts the kernel, and
// perf_event_paranoid (paranoid) forbids kernel profiling without
// CAP_PERFMON.
func FallBackToUser(a *Attr, err error, paranoid int) bool {
	_, ok := UserOnly(*a)
	return ok && errors.Is(err, ErrPermission) && paranoid > ParanoidKernel
}

// UserOnlyNote is the notice for a recording that fell back to user space
// at perf_event_paranoid level paranoid, naming what would add the kernel.
func UserOnlyNote(paranoid int) string {
	return fmt.Sprintf("kernel.perf_event_paranoid=%d: recording user space only "+
		"(to include the kernel: sysctl kernel.perf_event_paranoid=%d, or CAP_PERFMON)", paranoid, ParanoidKernel)
}

// permissionHint explains an EACCES or EPERM of perf_event_open for a on
// pid at perf_event_paranoid level paranoid (paranoidErr: unreadable):
// which setting or capability would allow it.
func permissionHint(a *Attr, pid int, errno unix.Errno, paranoid int, paranoidErr error) string {
	need := NeededParanoid(a, pid)
	what := map[int]string{
		ParanoidRawTracepoints: "raw tracepoint samples need",
		ParanoidCPUWide:        "events on every process of a CPU need",
		ParanoidKernel:         "events that see the kernel need",
		ParanoidUser:           "profiling your own processes needs",
	}[need]
	if paranoidErr != nil {
		return fmt.Sprintf("%s kernel.perf_event_paranoid <= %d, or CAP_PERFMON (or root); "+
			"%s is unreadable (%v): this kernel may lack perf events", what, need, ParanoidPath, paranoidErr)
	}
	if paranoid > need {
		h := fmt.Sprintf("%s kernel.perf_event_paranoid <= %d and it is %d: "+
			"sysctl kernel.perf_event_paranoid=%d, or CAP_PERFMON (CAP_SYS_ADMIN before Linux 5.8), or root", what, need, paranoid, need)
		if need == ParanoidKernel && a.Flags.Has(FlagExcludeKernel) {
			h += "; or record user space only (a branch filter without k)"
		} else if need == ParanoidKernel {
			h += "; or record user space only (a :u event)"
		}
		return h
	}
	// The paranoid level allows it: the target or a security policy does not.
	h := fmt.Sprintf("kernel.perf_event_paranoid is %d, which allows it; ", paranoid)
	if pid > 0 {
		h += fmt.Sprintf("pid %d may belong to another user (attaching to it needs CAP_SYS_PTRACE, or root), or ", pid)
	}
	h += "a security policy (SELinux, kernel lockdown) refuses it"
	if errno == unix.EPERM {
		h += "; CAP_PERFMON or root may be needed"
	}
	return h
}
