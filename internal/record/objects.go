package record

import (
	"fmt"
	"os"

	"github.com/hwprof/hwprof/buildid"
	"github.com/hwprof/hwprof/internal/safefile"
	"golang.org/x/sys/unix"
)

// maxHeld bounds the files of other mount namespaces held open.
const maxHeld = 512

// containerFiles are the object files of recorded processes whose root
// is not hwprof's (a container, another mount namespace, a chroot),
// opened through /proc/PID/root when their mapping was recorded, while
// the process lived: the recording's paths are theirs, which the host
// may not have, or have as other files.
type containerFiles struct {
	foreign map[uint32]bool     // pid -> its root is not ours
	held    map[string]*os.File // recorded path -> the file
}

// hold opens the file name a process pid mapped, when the process's root
// is not ours, and keeps it (at most maxHeld files; the first process
// to map a path decides).
func (c *containerFiles) hold(pid uint32, name string) {
	if _, ok := c.held[name]; ok || len(c.held) >= maxHeld || !c.isForeign(pid) {
		return
	}
	f, err := safefile.NewRoot(safefile.ProcessRoot(pid)).Open(name)
	if err != nil {
		return // gone already, or refused: the host's path is read, as for any process
	}
	if c.held == nil {
		c.held = map[string]*os.File{}
	}
	c.held[name] = f
}

// isForeign says whether process pid sees other files than hwprof
// (safefile.ProcessRoot), once per process.
func (c *containerFiles) isForeign(pid uint32) bool {
	if v, ok := c.foreign[pid]; ok {
		return v
	}
	v := safefile.ProcessRoot(pid) != ""
	if c.foreign == nil {
		c.foreign = map[uint32]bool{}
	}
	c.foreign[pid] = v
	return v
}

// open returns the file of a recorded path: the one held, or the host's
// (which the caller closes: close says so).
func (c *containerFiles) open(path string) (f *os.File, close bool, err error) {
	if f := c.held[path]; f != nil {
		return f, false, nil
	}
	f, err = safefile.Root{}.Open(path)
	return f, true, err
}

// closeAll closes the files held.
func (c *containerFiles) closeAll() {
	for _, f := range c.held {
		f.Close()
	}
	c.held = nil
}

// objectBuildID reads the build-id of a recorded path's file: the held
// one for a process of another mount namespace, else the host's.
func (r *recorder) objectBuildID(path string) (buildid.ID, error) {
	f := r.files.held[path]
	if f == nil {
		return buildid.Read(path) // the host's file, as for every process of ours
	}
	fd, err := unix.Dup(int(f.Fd())) // the ELF reader closes its file; f stays held
	if err != nil {
		return buildid.ID{}, err
	}
	ef, err := safefile.NewELF(os.NewFile(uintptr(fd), f.Name()))
	if err != nil {
		return buildid.ID{}, err
	}
	defer ef.Close()
	return buildid.FromELF(ef.File)
}

// sampled returns the object paths that had samples (see hits): read
// back from the file, or noted as they were read for a stream; nil, for
// every object, when the file cannot be read back (which Notice hears).
func (r *recorder) sampled() map[string]bool {
	if r.hits == nil {
		return nil
	}
	if r.liveHits != nil {
		r.hits.done()
		return r.hits.hit
	}
	err := r.w.Checkpoint() // the records buffered reach the file
	var fi os.FileInfo
	if err == nil {
		fi, err = r.out.File.Stat()
	}
	if err == nil {
		err = r.hits.readSamples(r.out.File, fi.Size())
	}
	if err != nil {
		if r.o.Notice != nil {
			r.o.Notice(fmt.Sprintf("build-id cache: keeping every object mapped: %v", err))
		}
		return nil
	}
	return r.hits.hit
}

// fillCache copies the objects of the build-id table ids that had
// samples (every one for a nil sampled) into the build-id cache
// (Options.BuildIDCache), once per build-id, and tells Notice of the
// first failure.
func (r *recorder) fillCache(ids map[string]buildid.ID, sampled map[string]bool) {
	c := r.o.BuildIDCache
	if c == nil {
		return
	}
	var errs []error
	for path, id := range ids {
		if id.IsZero() || (sampled != nil && !sampled[path]) || c.Has(id) {
			continue
		}
		f, closeIt, err := r.files.open(path)
		if err != nil {
			continue // the host has no such file: nothing to keep
		}
		if _, err := c.Add(f, id); err != nil {
			errs = append(errs, err)
		}
		if closeIt {
			f.Close()
		}
	}
	if len(errs) > 0 && r.o.Notice != nil {
		r.o.Notice(fmt.Sprintf("%d objects not kept in the build-id cache %s: %v (--no-buildid-cache leaves it)", len(errs), c.Dir, errs[0]))
	}
}
