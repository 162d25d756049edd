package otlpsend

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Spool is a directory of export requests waiting to be sent, oldest
// first, at most Max bytes.
//
// Its files are named NNNNNNNNNNNNNNNNNNNN.otlp (a sequence number, the
// time it was written in Unix nanoseconds or one more than the last) and
// are written under a temporary name ending in .part, then linked to their
// name (a link never replaces a file already there) and the .part removed.
// The spool reads and removes only regular files of those two forms: it
// never renames, replaces or removes anything else in its directory.
//
// It is safe for concurrent use.
type Spool struct {
	dir string
	max int64

	mu      sync.Mutex
	files   []spoolFile // oldest first
	bytes   int64
	last    int64 // sequence number of the newest file
	dropped int   // requests dropped to make room, or that did not fit
}

type spoolFile struct {
	seq  int64
	size int64
}

const (
	spoolExt  = ".otlp"
	spoolPart = ".part"
	seqDigits = 20
)

// OpenSpool opens the spool directory dir, creating it (and its parents)
// when missing, holding at most limit bytes of requests. A dir that is not
// a directory (a symbolic link included) is an error. The requests a
// previous run left are taken up, oldest first; the .part files it left
// (a run killed while writing one) are removed.
func OpenSpool(dir string, limit int64) (*Spool, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("spool %s: size %d: it must be positive", dir, limit)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("spool %s: not a directory", dir)
	}
	s := &Spool{dir: dir, max: limit}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		if seq, ok := parseName(e.Name(), spoolExt+spoolPart); ok {
			_ = os.Remove(s.path(seq) + spoolPart) // best effort: it was never a request
			continue
		}
		seq, ok := parseName(e.Name(), spoolExt)
		if !ok {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // gone meanwhile
		}
		s.files = append(s.files, spoolFile{seq, info.Size()})
		s.bytes += info.Size()
	}
	slices.SortFunc(s.files, func(a, b spoolFile) int { return cmp.Compare(a.seq, b.seq) })
	if n := len(s.files); n > 0 {
		s.last = s.files[n-1].seq
	}
	return s, nil
}

// parseName returns the sequence number of a spool file name ending in ext.
func parseName(name, ext string) (int64, bool) {
	num, ok := strings.CutSuffix(name, ext)
	if !ok || len(num) != seqDigits {
		return 0, false
	}
	seq, err := strconv.ParseInt(num, 10, 64)
	return seq, err == nil && seq >= 0
}

func (s *Spool) path(seq int64) string {
	return filepath.Join(s.dir, fmt.Sprintf("%0*d%s", seqDigits, seq, spoolExt))
}

// Dir is the spool's directory.
func (s *Spool) Dir() string { return s.dir }

// ErrTooLarge says a request is larger than the whole spool.
var ErrTooLarge = errors.New("larger than the spool")

// Put adds a request as the newest. When the spool would grow past its
// size, the oldest requests are dropped first (Dropped counts them); a
// request larger than the whole spool is dropped itself (ErrTooLarge). A
// request that cannot be written (a full disk) is an error and counted as
// dropped; the spool stays as it was.
func (s *Spool) Put(req []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	size := int64(len(req))
	if size > s.max {
		s.dropped++
		return fmt.Errorf("spool: a request of %d bytes: %w (%d bytes)", size, ErrTooLarge, s.max)
	}
	for len(s.files) > 0 && s.bytes+size > s.max {
		s.removeOldest()
		s.dropped++
	}
	seq := max(time.Now().UnixNano(), s.last+1)
	if err := s.write(seq, req); err != nil {
		s.dropped++
		return fmt.Errorf("spool: %w", err)
	}
	s.last = seq
	s.files = append(s.files, spoolFile{seq, size})
	s.bytes += size
	return nil
}

// write writes req as file seq: under its .part name, then linked to its
// own.
func (s *Spool) write(seq int64, req []byte) error {
	name := s.path(seq)
	part := name + spoolPart
	f, err := os.OpenFile(part, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(req)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Link(part, name)
	}
	if rerr := os.Remove(part); err == nil && rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
		err = rerr
	}
	if err != nil {
		return err
	}
	return nil
}

// removeOldest removes the oldest file; the caller holds mu.
func (s *Spool) removeOldest() {
	f := s.files[0]
	s.files = s.files[1:]
	s.bytes -= f.size
	s.removeFile(f.seq)
}

// removeFile removes file seq if it is still a regular file.
func (s *Spool) removeFile(seq int64) {
	p := s.path(seq)
	if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
		_ = os.Remove(p) // best effort: a file removed by hand is gone already
	}
}

// Oldest returns the oldest request and its sequence number, ok false
// when the spool is empty. A file that can no longer be read is dropped.
func (s *Spool) Oldest() (seq int64, req []byte, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.files) > 0 {
		f := s.files[0]
		req, err := s.read(f.seq)
		if err == nil {
			return f.seq, req, true
		}
		s.removeOldest()
		s.dropped++
	}
	return 0, nil, false
}

// read reads file seq, refusing anything but a regular file.
func (s *Spool) read(seq int64) ([]byte, error) {
	p := s.path(seq)
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", p)
	}
	return os.ReadFile(p)
}

// Remove removes request seq (sent).
func (s *Spool) Remove(seq int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.files, func(f spoolFile) bool { return f.seq == seq })
	if i < 0 {
		return
	}
	s.bytes -= s.files[i].size
	s.files = slices.Delete(s.files, i, i+1)
	s.removeFile(seq)
}

// Len is the number of requests waiting.
func (s *Spool) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.files)
}

// Bytes is the size of the requests waiting.
func (s *Spool) Bytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bytes
}

// Dropped is the number of requests dropped since the spool was opened.
func (s *Spool) Dropped() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped
}
