package symbolize

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/hwprof/hwprof/buildid"
	"github.com/hwprof/hwprof/internal/safefile"
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

// savedKallsyms returns a kallsyms file saved for the kernel with build-id
// id in one of dirs (build-id caches, in order), or "". perf record saves
// /proc/kallsyms as <cache>/[kernel.kallsyms]/<id>/kallsyms, linked from
// <cache>/.build-id/xx/rest/kallsyms: the kernel's symbols as they were
// when it was saved, for a recording from another machine whose cache
// came with it too (a kernel that a reboot moved since, KASLR, is named
// after Kallsyms.Relocate by the recording's reference symbol). Reading
// it is also much faster than /proc/kallsyms, which the kernel formats
// line by line. It tells o.Refused of the files refused. Each directory
// is a root of its own: the path returned has no symbolic link in it.
func (o Options) savedKallsyms(id buildid.ID, dirs []string) string {
	if id.IsZero() {
		return ""
	}
	for _, dir := range dirs {
		if dir == "" {
			continue
		}
		r := safefile.NewRoot(dir)
		for _, form := range id.Forms() {
			if len(form) < 3 {
				continue
			}
			for _, c := range []string{
				path.Join("/", KernelPath, form, "kallsyms"),
				path.Join("/.build-id", form[:2], form[2:], "kallsyms"),
			} {
				if f, err := o.openIn(r, c); err == nil {
					f.Close()
					return f.Name()
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
	// The running release and host as uname(2) gives them, where a
	// recording's header takes them from (perf's and hwprof's alike).
	var uts unix.Utsname
	if err := unix.Uname(&uts); err != nil {
		return false, fmt.Sprintf("the running kernel's release and host are unknown (%v)", err)
	}
	if here := unix.ByteSliceToString(uts.Release[:]); osRelease != "" && here != osRelease {
		return false, fmt.Sprintf("the recording was made on kernel %s, this is %s", osRelease, here)
	}
	if host := unix.ByteSliceToString(uts.Nodename[:]); hostname != "" && host != hostname {
		return false, fmt.Sprintf("the recording was made on host %s, this is %s", hostname, host)
	}
	return true, ""
}

// FindKallsyms returns the kallsyms file that names the kernel of a
// recording (its [kernel.kallsyms] build-id, OS release and host name, as
// recorded; any may be ""): o.Kallsyms when set; else a kallsyms saved for
// that build-id under o.DebugDirs or perf's build-id cache
// (savedKallsyms); else /proc/kallsyms (under o.SymFS) when the recording
// was made on the running kernel (KernelIsLocal). Otherwise it returns ""
// and why: also when the file in SymFS is refused (a FIFO, a link out of
// SymFS), the refusal, which names it. The path of a file found in a root
// has no symbolic link in it.
func FindKallsyms(o Options, buildID buildid.ID, osRelease, hostname string) (string, string) {
	if o.Kallsyms != "" {
		return o.Kallsyms, ""
	}
	if p := o.savedKallsyms(buildID, append(append([]string(nil), o.DebugDirs...), PerfBuildIDDir())); p != "" {
		return p, ""
	}
	if ok, why := KernelIsLocal(buildID, osRelease, hostname); !ok {
		return "", why
	}
	return o.localKallsyms()
}

// localKallsyms is the running kernel's kallsyms: /proc/kallsyms, in SymFS
// when set. A file there that is refused gives "" and the refusal; one
// that is missing is returned, for reading it to say so.
func (o Options) localKallsyms() (string, string) {
	const proc = "/proc/kallsyms"
	if o.SymFS == "" {
		return proc, "" // the kernel's own file, not a recording's
	}
	r := o.root()
	f, err := r.Open(proc)
	switch {
	case err == nil:
		f.Close()
		return f.Name(), ""
	case errors.Is(err, ErrRefused):
		return "", err.Error()
	}
	return r.Path(proc), ""
}
