package objcache

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/hwprof/hwprof/buildid"
)

// DefaultMaxBytes bounds a cache when its user does not.
const DefaultMaxBytes = 2 << 30

// MaxFile is the largest object kept: a larger one is not copied.
const MaxFile = 512 << 20

// Cache is a build-id cache directory.
type Cache struct {
	Dir      string
	MaxBytes int64 // 0: DefaultMaxBytes
}

// DefaultDir is the cache's directory unless the user names another:
// $HWPROF_BUILDID_DIR, else $XDG_CACHE_HOME/hwprof/buildid, else
// ~/.cache/hwprof/buildid; "" when none of them is known.
func DefaultDir() string {
	if d := os.Getenv("HWPROF_BUILDID_DIR"); d != "" {
		return d
	}
	if x := os.Getenv("XDG_CACHE_HOME"); x != "" {
		return filepath.Join(x, "hwprof", "buildid")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".cache", "hwprof", "buildid")
	}
	return ""
}

// Path is where the file of build-id id is kept.
func (c *Cache) Path(id buildid.ID) string {
	hx := id.Trim().String()
	return filepath.Join(c.Dir, ".build-id", hx[:2], hx[2:])
}

// Has says whether the cache holds the file of build-id id.
func (c *Cache) Has(id buildid.ID) bool {
	fi, err := os.Lstat(c.Path(id))
	return err == nil && fi.Mode().IsRegular()
}

// Add keeps a copy of the object f holds, whose build-id is id, unless
// the cache has it already, and then trims the cache to its limit. It
// reports whether it copied the file.
func (c *Cache) Add(f *os.File, id buildid.ID) (bool, error) {
	if id.IsZero() || len(id.Trim().String()) < 3 {
		return false, errors.New("build-id cache: an object without a build-id")
	}
	if c.Has(id) {
		return false, nil
	}
	fi, err := f.Stat()
	if err != nil {
		return false, fmt.Errorf("build-id cache: %w", err)
	}
	if fi.Size() > MaxFile {
		return false, fmt.Errorf("build-id cache: %s: %d bytes, more than %d kept", f.Name(), fi.Size(), MaxFile)
	}
	dst := c.Path(id)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return false, fmt.Errorf("build-id cache: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".tmp-*")
	if err != nil {
		return false, fmt.Errorf("build-id cache: %w", err)
	}
	_, err = io.Copy(tmp, io.NewSectionReader(f, 0, fi.Size()))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), dst)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return false, fmt.Errorf("build-id cache: %s: %w", f.Name(), err)
	}
	return true, c.trim()
}

// entry is a file of the cache.
type entry struct {
	path string
	size int64
	mod  int64
}

// trim removes the files added longest ago until the cache holds at
// most MaxBytes.
func (c *Cache) trim() error {
	limit := c.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	var files []entry
	var total int64
	err := filepath.WalkDir(filepath.Join(c.Dir, ".build-id"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		files = append(files, entry{p, fi.Size(), fi.ModTime().UnixNano()})
		total += fi.Size()
		return nil
	})
	if err != nil {
		return fmt.Errorf("build-id cache: %w", err)
	}
	slices.SortFunc(files, func(a, b entry) int { return cmp.Compare(a.mod, b.mod) })
	for _, f := range files {
		if total <= limit {
			break
		}
		if err := os.Remove(f.path); err == nil {
			total -= f.size
		}
	}
	return nil
}
