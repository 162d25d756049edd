package perfdata

import (
	"bufio"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// CollectFeatures gathers the host facts perf record writes: uname
// (hostname, release, machine), /proc/cpuinfo (cpudesc and, on x86, the
// cpuid string), /proc/meminfo MemTotal, the online and present CPUs from
// /sys/devices/system/cpu, this process's command line (its executable's
// path, then os.Args[1:]) and hwprof's version. Facts it cannot read are
// left zero, so their sections are left out. Sample times and build-ids
// are for the caller to fill.
func CollectFeatures() Features {
	var f Features
	var uts unix.Utsname
	if unix.Uname(&uts) == nil {
		f.Hostname = unix.ByteSliceToString(uts.Nodename[:])
		f.OSRelease = unix.ByteSliceToString(uts.Release[:])
		f.Arch = unix.ByteSliceToString(uts.Machine[:])
	}
	f.Version = hwprofVersion()
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		f.CPUDesc, f.CPUID = parseCPUInfo(string(b))
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		f.TotalMemKB = parseMemTotal(string(b))
	}
	if b, err := os.ReadFile("/sys/devices/system/cpu/online"); err == nil {
		if cpus, ok := parseCPUList(string(b)); ok {
			f.NrCPUsOnline = uint32(len(cpus))
		}
	}
	if b, err := os.ReadFile("/sys/devices/system/cpu/present"); err == nil {
		if cpus, ok := parseCPUList(string(b)); ok && len(cpus) > 0 {
			f.NrCPUsAvail = uint32(cpus[len(cpus)-1] + 1)
		}
	}
	f.Cmdline = cmdline()
	return f
}

// hwprofVersion is "hwprof " and the main module's version from the build
// info ("(devel)" for a build from a work tree). perf only prints it.
func hwprofVersion() string {
	v := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		v = bi.Main.Version
	}
	return "hwprof " + v
}

// cmdline is argv with the executable's resolved path first, as perf
// writes its own.
func cmdline() []string {
	argv := append([]string(nil), os.Args...)
	if exe, err := os.Executable(); err == nil && len(argv) > 0 {
		argv[0] = exe
	}
	return argv
}

// parseCPUInfo returns the first "model name" with runs of white space
// squashed to one space (as __write_cpudesc does), and on x86 the cpuid
// string perf's get_cpuid writes: "vendor,family,model,stepping" with
// decimal numbers, e.g. "GenuineIntel,6,85,7". /proc/cpuinfo already shows
// family and model with their extended bits folded in.
func parseCPUInfo(s string) (desc, cpuid string) {
	vals := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		line := sc.Text()
		if line == "" && len(vals) > 0 {
			break // first processor only
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k = strings.TrimSpace(k)
		if _, seen := vals[k]; !seen {
			vals[k] = strings.TrimSpace(v)
		}
	}
	desc = strings.Join(strings.Fields(vals["model name"]), " ")
	vendor, fam, model, step := vals["vendor_id"], vals["cpu family"], vals["model"], vals["stepping"]
	if vendor != "" && isUint(fam) && isUint(model) && isUint(step) {
		cpuid = vendor + "," + fam + "," + model + "," + step
	}
	return desc, cpuid
}

func isUint(s string) bool {
	_, err := strconv.ParseUint(s, 10, 32)
	return err == nil
}

// parseMemTotal returns MemTotal from /proc/meminfo text, in kB, or 0.
func parseMemTotal(s string) uint64 {
	for line := range strings.Lines(s) {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			fields := strings.Fields(rest)
			if len(fields) == 0 {
				return 0
			}
			n, err := strconv.ParseUint(fields[0], 10, 64)
			if err != nil {
				return 0
			}
			return n
		}
	}
	return 0
}

// parseCPUList parses a kernel CPU list ("0-3,8,10-11\n") into ascending
// CPU numbers. An empty list is valid.
func parseCPUList(s string) ([]int, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, true
	}
	var cpus []int
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, false
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a || b-a > 1<<16 {
				return nil, false
			}
		}
		if len(cpus) > 0 && a <= cpus[len(cpus)-1] {
			return nil, false
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus, true
}
