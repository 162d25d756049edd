package objcache

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hwprof/hwprof/buildid"
)

func file(t *testing.T, dir, name string, size int) *os.File {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, make([]byte, size), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestAddOnceAndTrim: a file is copied once per build-id, under
// .build-id/xx/rest; past the limit the oldest are removed.
func TestAddOnceAndTrim(t *testing.T) {
	src := t.TempDir()
	c := &Cache{Dir: t.TempDir(), MaxBytes: 250}
	id := func(s string) buildid.ID { b, _ := buildid.Parse(s); return b }
	added, err := c.Add(file(t, src, "a", 100), id("aa0001"))
	if err != nil || !added {
		t.Fatalf("first add: %v %v", added, err)
	}
	if _, err := os.Stat(filepath.Join(c.Dir, ".build-id", "aa", "0001")); err != nil {
		t.Fatal(err)
	}
	if added, err := c.Add(file(t, src, "a2", 100), id("aa0001")); err != nil || added {
		t.Fatalf("second add of one build-id: %v %v", added, err)
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(c.Path(id("aa0001")), old, old)
	c.Add(file(t, src, "b", 100), id("bb0002"))
	c.Add(file(t, src, "c", 100), id("cc0003")) // 300 bytes: the oldest goes
	if c.Has(id("aa0001")) || !c.Has(id("bb0002")) || !c.Has(id("cc0003")) {
		t.Fatalf("after trimming to 250 bytes: a %v b %v c %v, want the oldest (a) gone", c.Has(id("aa0001")), c.Has(id("bb0002")), c.Has(id("cc0003")))
	}
	if _, err := c.Add(file(t, src, "z", 10), buildid.ID{}); err == nil {
		t.Fatal("an object without a build-id was added")
	}
}
