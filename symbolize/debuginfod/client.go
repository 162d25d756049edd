package debuginfod

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hwprof/hwprof/buildid"
	"github.com/hwprof/hwprof/internal/safefile"
)

// MaxSize is the largest debug file fetched: a larger one is refused.
const MaxSize = 4 << 30

// DefaultTimeout bounds each request when DEBUGINFOD_TIMEOUT does not:
// shorter than debuginfod-client's 90 s, as a report waits for it.
const DefaultTimeout = 10 * time.Second

// missFor is how long a 404 is remembered in the cache (debuginfod-client's
// cache_miss_s default).
const missFor = 600 * time.Second

// ErrNotFound is the error of a build-id that neither the cache nor any
// server has.
var ErrNotFound = errors.New("debuginfod: no server has it")

// Client fetches debug files. The zero Client has no servers and no cache.
type Client struct {
	// URLs are the servers, asked in order.
	URLs []string
	// Cache is the cache directory (CACHE/HEX/debuginfo); "" for none.
	Cache string
	// Timeout bounds each request (connecting, and every read of the
	// answer); 0 means DefaultTimeout.
	Timeout time.Duration
	// Offline: no server is asked; the cache alone is read.
	Offline bool
	// HTTP is the client requests go through; nil means one of its own.
	HTTP *http.Client

	mu       sync.Mutex
	down     map[string]bool // servers that failed: not asked again
	warnings []string
}

// FromEnv returns the client debuginfod-client's environment describes:
// DEBUGINFOD_URLS, DEBUGINFOD_CACHE_PATH (default
// $XDG_CACHE_HOME/debuginfod_client, or ~/.cache/debuginfod_client) and
// DEBUGINFOD_TIMEOUT (seconds). offline keeps it from asking servers.
func FromEnv(offline bool) *Client {
	c := &Client{URLs: strings.Fields(os.Getenv("DEBUGINFOD_URLS")), Offline: offline}
	c.Cache = os.Getenv("DEBUGINFOD_CACHE_PATH")
	if c.Cache == "" {
		if x := os.Getenv("XDG_CACHE_HOME"); x != "" {
			c.Cache = filepath.Join(x, "debuginfod_client")
		} else if h, err := os.UserHomeDir(); err == nil {
			c.Cache = filepath.Join(h, ".cache", "debuginfod_client")
		}
	}
	if s, err := strconv.Atoi(os.Getenv("DEBUGINFOD_TIMEOUT")); err == nil && s > 0 {
		c.Timeout = time.Duration(s) * time.Second
	}
	return c
}

// Enabled says whether the client has anything to read: a server to ask
// or a cache.
func (c *Client) Enabled() bool {
	return c != nil && (len(c.URLs) > 0 && !c.Offline || c.Cache != "")
}

// Warnings returns, once per server, why it was asked nothing more.
func (c *Client) Warnings() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.warnings...)
}

// DebugInfo returns the path of a local copy of the debug file of
// build-id id: the cache's, or one a server sends (then kept in the
// cache). It fails with an error matching ErrNotFound when none has it.
func (c *Client) DebugInfo(id buildid.ID) (string, error) {
	return c.fetch(id, "debuginfo")
}

func (c *Client) fetch(id buildid.ID, kind string) (string, error) {
	if id.IsZero() {
		return "", fmt.Errorf("debuginfod: no build-id: %w", ErrNotFound)
	}
	hx := id.Trim().String()
	var cached string
	if c.Cache != "" {
		cached = filepath.Join(c.Cache, hx, kind)
		switch fi, err := os.Lstat(cached); {
		case err == nil && fi.Mode().IsRegular() && fi.Size() > 0:
			return cached, nil
		case err == nil && fi.Mode().IsRegular() && fi.Mode().Perm() == 0 && time.Since(fi.ModTime()) < missFor:
			return "", fmt.Errorf("debuginfod: %s: %w (remembered)", hx, ErrNotFound)
		}
	}
	if c.Offline {
		return "", fmt.Errorf("debuginfod: %s: not in the cache (offline): %w", hx, ErrNotFound)
	}
	missed := false
	for _, u := range c.URLs {
		if c.isDown(u) {
			continue
		}
		p, err := c.get(u, hx, kind, cached)
		if err == nil {
			return p, nil
		}
		if errors.Is(err, ErrNotFound) {
			missed = true
			continue
		}
		c.setDown(u, err)
	}
	if missed && cached != "" {
		c.rememberMiss(cached)
	}
	return "", fmt.Errorf("debuginfod: %s: %w", hx, ErrNotFound)
}

func (c *Client) isDown(u string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.down[u]
}

func (c *Client) setDown(u string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.down[u] {
		return
	}
	if c.down == nil {
		c.down = map[string]bool{}
	}
	c.down[u] = true
	c.warnings = append(c.warnings, fmt.Sprintf("debuginfod server %s not asked again: %v", u, err))
}

func (c *Client) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return DefaultTimeout
}

func (c *Client) http() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return &http.Client{Timeout: 0} // bounded per read below
}

// get asks server u for the file, writing it to cached (or a temporary
// file when there is no cache) and returning its path.
func (c *Client) get(u, hx, kind, cached string) (string, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url := strings.TrimRight(u, "/") + "/buildid/" + hx + "/" + kind
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	// every wait (the answer, each read of its body) is bounded: a slow
	// server is cut at the timeout, not when the file is whole
	timer := time.AfterFunc(c.timeout(), cancel)
	defer timer.Stop()
	resp, err := c.http().Do(req)
	if err != nil {
		return "", fmt.Errorf("%s: %w", url, cutErr(ctx, err, c.timeout()))
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return "", ErrNotFound
	case resp.StatusCode != http.StatusOK:
		return "", fmt.Errorf("%s: %s", url, resp.Status)
	case resp.ContentLength > MaxSize:
		return "", fmt.Errorf("%s: %d bytes, more than %d", url, resp.ContentLength, int64(MaxSize))
	}
	body := &resetReader{r: resp.Body, timer: timer, d: c.timeout()}
	p, err := c.save(body, cached)
	if err != nil {
		return "", fmt.Errorf("%s: %w", url, cutErr(ctx, err, c.timeout()))
	}
	return p, nil
}

// cutErr says that the timeout cut a request.
func cutErr(ctx context.Context, err error, d time.Duration) error {
	if ctx.Err() != nil {
		return fmt.Errorf("no answer within %v", d)
	}
	return err
}

// resetReader restarts the timer at each read that gives bytes: the
// timeout bounds each wait, not the whole transfer.
type resetReader struct {
	r     io.Reader
	timer *time.Timer
	d     time.Duration
}

func (r *resetReader) Read(b []byte) (int, error) {
	n, err := r.r.Read(b)
	if n > 0 {
		r.timer.Reset(r.d)
	}
	return n, err
}

// save writes what r gives (at most MaxSize bytes) to a temporary file
// beside dst and renames it to dst; without dst, to a temporary file of
// its own, whose path it returns.
func (c *Client) save(r io.Reader, dst string) (string, error) {
	dir := os.TempDir()
	if dst != "" {
		dir = filepath.Dir(dst)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", err
		}
	}
	f, err := os.CreateTemp(dir, ".hwprof-debuginfod-*")
	if err != nil {
		return "", err
	}
	n, err := io.Copy(f, io.LimitReader(r, MaxSize+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > MaxSize {
		err = fmt.Errorf("more than %d bytes", int64(MaxSize))
	}
	if err == nil && n == 0 {
		err = errors.New("an empty file")
	}
	if err == nil && dst != "" {
		err = os.Rename(f.Name(), dst)
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	if dst == "" {
		return f.Name(), nil
	}
	return dst, nil
}

// rememberMiss writes the empty, unreadable file debuginfod-client
// writes for a build-id no server has.
func (c *Client) rememberMiss(cached string) {
	if err := os.MkdirAll(filepath.Dir(cached), 0o755); err != nil {
		return
	}
	f, err := os.OpenFile(cached, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0)
	if err != nil {
		if errors.Is(err, fs.ErrExist) { // an old miss: renew it
			now := time.Now()
			os.Chtimes(cached, now, now)
		}
		return
	}
	f.Close()
}

// Open opens the debug file of build-id id (DebugInfo) as a regular file
// (package internal/safefile).
func (c *Client) Open(id buildid.ID) (*os.File, error) {
	p, err := c.DebugInfo(id)
	if err != nil {
		return nil, err
	}
	return safefile.OpenLocal(p)
}
