package perf

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ParanoidPath is the kernel's perf_event_paranoid setting.
const ParanoidPath = "/proc/sys/kernel/perf_event_paranoid"

// Paranoid reads kernel.perf_event_paranoid: -1 allows everything, 0
// allows CPU-wide events without raw tracepoints, 1 allows kernel
// profiling of one's own processes, 2 only user-space profiling of one's
// own processes; Debian and Android kernels add 3 (nothing without
// CAP_PERFMON). Root or CAP_PERFMON bypass it.
func Paranoid() (int, error) {
	b, err := os.ReadFile(ParanoidPath)
	if err != nil {
		return 0, fmt.Errorf("read perf_event_paranoid: %w", err)
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("read perf_event_paranoid: %w", err)
	}
	return v, nil
}

// Capabilities from <linux/capability.h>.
const (
	CapSysAdmin = 21
	CapPerfmon  = 38
	CapBPF      = 39
)

// HasCapability reports whether the effective capability set of this
// process holds cap, read from /proc/self/status (CapEff).
func HasCapability(cap int) bool {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return false
	}
	return capEffHas(string(b), cap)
}

func capEffHas(status string, cap int) bool {
	for line := range strings.Lines(status) {
		v, ok := strings.CutPrefix(line, "CapEff:")
		if !ok {
			continue
		}
		mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		return err == nil && cap < 64 && mask&(1<<cap) != 0
	}
	return false
}

// OnlineCPUs lists the online CPUs from /sys/devices/system/cpu/online
// ("0-3,6"), the CPUs per-CPU events must be opened on.
func OnlineCPUs() ([]int, error) {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return nil, fmt.Errorf("list online cpus: %w", err)
	}
	cpus, err := ParseCPUList(strings.TrimSpace(string(b)))
	if err != nil {
		return nil, fmt.Errorf("list online cpus: %w", err)
	}
	return cpus, nil
}

// ParseCPUList parses the kernel's cpu list format: "0-3,6,8-9".
func ParseCPUList(s string) ([]int, error) {
	var cpus []int
	if s == "" {
		return nil, nil
	}
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("bad cpu list %q", s)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a || b-a > 1<<16 {
				return nil, fmt.Errorf("bad cpu list %q", s)
			}
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// KernelLimits are the sysctls that bound what perf asks for.
type KernelLimits struct {
	MaxSampleRate uint64 // kernel.perf_event_max_sample_rate
	MaxStack      uint64 // kernel.perf_event_max_stack
}

// ReadKernelLimits reads /proc/sys/kernel/perf_event_max_sample_rate and
// perf_event_max_stack. A missing file leaves its field zero (no limit).
func ReadKernelLimits() (KernelLimits, error) {
	var l KernelLimits
	for _, f := range []struct {
		name string
		dst  *uint64
	}{
		{"perf_event_max_sample_rate", &l.MaxSampleRate},
		{"perf_event_max_stack", &l.MaxStack},
	} {
		b, err := os.ReadFile("/proc/sys/kernel/" + f.name)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return l, fmt.Errorf("read kernel limits: %w", err)
		}
		s := strings.TrimSpace(string(b))
		if *f.dst, err = strconv.ParseUint(s, 10, 64); err != nil {
			return l, fmt.Errorf("read kernel limits: %s: %q is not a number", f.name, s)
		}
	}
	return l, nil
}
