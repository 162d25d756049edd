package symbolize

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hwprof/hwprof/buildid"
)

// PerfBuildIDDir returns perf's build-id cache directory:
// $PERF_BUILDID_DIR, else ~/.debug ("" when neither is known).
func PerfBuildIDDir() string {
	if d := os.Getenv("PERF_BUILDID_DIR"); d != "" {
		return d
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		return filepath.Join(home, ".debug")
	}
	return ""
}

// SavedKallsyms returns a kallsyms file saved for the kernel with build-id
// id in one of dirs (build-id caches, in order), or "". perf record saves
// /proc/kallsyms as <cache>/[kernel.kallsyms]/<id>/kallsyms, linked from
// <cache>/.build-id/xx/rest/kallsyms: the kernel's symbols as they were
// when it was saved, for a recording from another machine whose cache
// came with it too (a kernel that a reboot moved since, KASLR, is named
// after Kallsyms.Relocate by the recording's reference symbol). Reading
// it is also much faster than /proc/kallsyms, which the kernel formats
// line by line.
func SavedKallsyms(id buildid.ID, dirs []string) string {
	if id.IsZero() {
		return ""
	}
	for _, dir := range dirs {
		if dir == "" {
			continue
		}
		for _, form := range id.Forms() {
			if len(form) < 3 {
				continue
			}
			for _, c := range []string{
				filepath.Join(dir, KernelPath, form, "kallsyms"),
				filepath.Join(dir, ".build-id", form[:2], form[2:], "kallsyms"),
			} {
				if exists(c) {
					return c
				}
			}
		}
	}
	return ""
}

// KernelIsLocal reports whether a recording was made on the running
// kernel, so that /proc/kallsyms names its kernel addresses: its
// [kernel.kallsyms] build-id is the running kernel's, or, when it
// names none, its OS release and host name are the running ones' (those it
// records: "" is not checked). A recording that names none of the three
// (old pipe-mode files) is not taken for local: naming its kernel and vdso
// addresses from this machine would be a guess. perf uses /proc/kallsyms
// on the same build-id test. When not, it says why.
func KernelIsLocal(buildID buildid.ID, osRelease, hostname string) (bool, string) {
	if !buildID.IsZero() {
		local, err := buildid.Kernel()
		if err != nil {
			return false, fmt.Sprintf("the recording's kernel has build-id %s and the running kernel's is unknown (%v)", buildID, err)
		}
		if !buildID.Equal(local) {
			return false, fmt.Sprintf("the recording's kernel has build-id %s, the running kernel %s", buildID, local)
		}
		return true, ""
	}
	if osRelease == "" && hostname == "" {
		return false, "the recording does not say which kernel it was made on (no kernel build-id, OS release or host name)"
	}
	if osRelease != "" {
		rel, err := os.ReadFile("/proc/sys/kernel/osrelease")
		if here := strings.TrimSpace(string(rel)); err != nil || here != osRelease {
			return false, fmt.Sprintf("the recording was made on kernel %s, this is %s", osRelease, here)
		}
	}
	if hostname != "" {
		if host, err := os.Hostname(); err != nil || host != hostname {
			return false, fmt.Sprintf("the recording was made on host %s, this is %s", hostname, host)
		}
	}
	return true, ""
}

// FindKallsyms returns the kallsyms file that names the kernel of a
// recording (its [kernel.kallsyms] build-id, OS release and host name, as
// recorded; any may be ""): o.Kallsyms when set; else a kallsyms saved for
// that build-id under o.DebugDirs or perf's build-id cache
// (SavedKallsyms); else /proc/kallsyms (under o.SymFS) when the recording
// was made on the running kernel (KernelIsLocal). Otherwise it returns ""
// and why.
func FindKallsyms(o Options, buildID buildid.ID, osRelease, hostname string) (string, string) {
	if o.Kallsyms != "" {
		return o.Kallsyms, ""
	}
	if p := SavedKallsyms(buildID, append(append([]string(nil), o.DebugDirs...), PerfBuildIDDir())); p != "" {
		return p, ""
	}
	if ok, why := KernelIsLocal(buildID, osRelease, hostname); !ok {
		return "", why
	}
	return o.symfs("/proc/kallsyms"), ""
}
