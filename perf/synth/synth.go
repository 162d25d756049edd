package synth

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"

	"github.com/hwprof/hwprof/perf"
	"golang.org/x/sys/unix"
)

// Options choose what Synthesize writes beyond what `perf record -p`
// writes by default.
type Options struct {
	// Data adds the readable non-executable mappings, with
	// PERF_RECORD_MISC_MMAP_DATA, as `perf record -d` (attr mmap_data) does.
	Data bool
	// Fork puts a PERF_RECORD_FORK before each thread's COMM, as perf's
	// whole-system synthesis (`perf record -a`) does.
	Fork bool
}

// Synthesize appends the records `perf record -p pid` synthesizes for a
// running process, with what o asks for beyond them: for each of its
// threads in /proc order a COMM, and after the leader's COMM an MMAP2 for
// each executable mapping. Every record ends with a zero sample_id
// trailer for sample_type st (pass 0 if the attr has no sample_id_all),
// as perf writes it.
//
// Threads that exit meanwhile are left out. If the process is gone the
// error wraps os.ErrNotExist. On error b is returned as it was given.
func (o Options) Synthesize(b []byte, procRoot string, pid int, st perf.SampleType) ([]byte, error) {
	threads, err := Threads(procRoot, pid)
	if err != nil {
		return b, err
	}
	n := len(b)
	huge := hugetlbfsMount(procRoot)
	for _, t := range threads {
		if o.Fork {
			b = AppendFork(b, t, st, SampleID{})
		}
		b = AppendComm(b, t, st, SampleID{})
		if t.TID != t.PID {
			continue
		}
		maps, err := Mappings(procRoot, t.PID)
		if err != nil {
			return b[:n], err
		}
		for _, m := range maps {
			if !m.Exec() && (!o.Data || m.Prot&unix.PROT_READ == 0) {
				continue
			}
			if huge != "" && strings.HasPrefix(m.Path, huge) {
				m.Path = AnonName
				m.Flags |= unix.MAP_HUGETLB
			}
			b = AppendMmap2(b, t.PID, t.PID, m, st, SampleID{})
		}
	}
	return b, nil
}

// hugetlbfsMount is the mount point of the first hugetlbfs in
// procRoot/mounts, as perf's hugetlbfs__mountpoint finds it, or "". Like
// perf it does not undo the octal escapes of the mounts file.
func hugetlbfsMount(procRoot string) string {
	f, err := os.Open(filepath.Join(procRoot, "mounts"))
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "hugetlbfs /dev/hugepages hugetlbfs rw,relatime,pagesize=2M 0 0"
		f := bytes.Fields(sc.Bytes())
		if len(f) >= 3 && string(f[2]) == "hugetlbfs" {
			return string(f[1])
		}
	}
	return ""
}
