package debuginfod

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hwprof/hwprof/buildid"
)

func mustID(t *testing.T, s string) buildid.ID {
	t.Helper()
	id, err := buildid.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestFetchAndCache: a file a server has is fetched once, into the
// debuginfod-client layout, then read from the cache, offline too; a
// build-id it lacks is remembered as a miss and not asked again.
func TestFetchAndCache(t *testing.T) {
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		if r.URL.Path == "/buildid/0123abcd/debuginfo" {
			w.Write([]byte("debug bytes"))
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	cache := t.TempDir()
	c := &Client{URLs: []string{srv.URL + "/"}, Cache: cache}
	p, err := c.DebugInfo(mustID(t, "0123abcd"))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(cache, "0123abcd", "debuginfo"); p != want {
		t.Fatalf("path %s, want %s", p, want)
	}
	if b, _ := os.ReadFile(p); string(b) != "debug bytes" {
		t.Fatalf("cached %q", b)
	}
	off := &Client{URLs: []string{srv.URL}, Cache: cache, Offline: true}
	if _, err := off.DebugInfo(mustID(t, "0123abcd")); err != nil {
		t.Fatalf("offline, from the cache: %v", err)
	}
	if _, err := c.DebugInfo(mustID(t, "0123abcd")); err != nil || asked.Load() != 1 {
		t.Fatalf("second fetch: %v, server asked %d times, want once", err, asked.Load())
	}
	for range 2 {
		if _, err := c.DebugInfo(mustID(t, "ffff0000")); !errors.Is(err, ErrNotFound) {
			t.Fatalf("missing: %v", err)
		}
	}
	if asked.Load() != 2 {
		t.Fatalf("server asked %d times, want 2: a miss is remembered", asked.Load())
	}
	if len(c.Warnings()) != 0 {
		t.Fatalf("warnings %q for a server that answered", c.Warnings())
	}
	if _, err := off.DebugInfo(mustID(t, "1111")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("offline, not cached: %v", err)
	}
}

// TestServerFailing: a server that answers 500, or too slowly, is asked
// once and warned of once; the next server is still asked.
func TestServerFailing(t *testing.T) {
	var bad, slowAsked atomic.Int32
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bad.Add(1)
		http.Error(w, "boom", http.StatusInternalServerError)
	}))
	defer broken.Close()
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		slowAsked.Add(1)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(release)
	good := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("x")) }))
	defer good.Close()
	c := &Client{URLs: []string{broken.URL, slow.URL, good.URL}, Cache: t.TempDir(), Timeout: 300 * time.Millisecond}
	start := time.Now()
	for _, id := range []string{"aa01", "aa02", "aa03"} {
		if _, err := c.DebugInfo(mustID(t, id)); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("took %v with a 300 ms timeout", took)
	}
	if bad.Load() != 1 || slowAsked.Load() != 1 {
		t.Fatalf("failing servers asked %d and %d times, want once each", bad.Load(), slowAsked.Load())
	}
	w := c.Warnings()
	if len(w) != 2 || !strings.Contains(w[0], broken.URL) || !strings.Contains(w[1], "no answer within 300ms") {
		t.Fatalf("warnings %q", w)
	}
}

// TestOversized: a file larger than the client takes is refused, and
// nothing is left in the cache.
func TestOversized(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "5000000000")
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	cache := t.TempDir()
	c := &Client{URLs: []string{srv.URL}, Cache: cache}
	if _, err := c.DebugInfo(mustID(t, "abcd")); err == nil {
		t.Fatal("a 5 GB file was taken")
	}
	if ents, _ := os.ReadDir(filepath.Join(cache, "abcd")); len(ents) != 0 {
		t.Fatalf("cache holds %v", ents)
	}
}

func TestFromEnv(t *testing.T) {
	t.Setenv("DEBUGINFOD_URLS", "http://a:1 https://b")
	t.Setenv("DEBUGINFOD_CACHE_PATH", "/x/cache")
	t.Setenv("DEBUGINFOD_TIMEOUT", "7")
	c := FromEnv(true)
	if len(c.URLs) != 2 || c.Cache != "/x/cache" || c.Timeout != 7*time.Second || !c.Offline {
		t.Fatalf("%+v", c)
	}
	t.Setenv("DEBUGINFOD_CACHE_PATH", "")
	t.Setenv("XDG_CACHE_HOME", "/xdg")
	if c := FromEnv(false); c.Cache != "/xdg/debuginfod_client" {
		t.Fatalf("cache %s", c.Cache)
	}
}
