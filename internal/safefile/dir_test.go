package safefile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestOpenDirHeld: a directory opened with OpenDir is read with
// OpenOwnedIn after its name is gone; a symbolic link, a name of more than
// one component and a directory are refused, a missing file is
// fs.ErrNotExist.
func TestOpenDirHeld(t *testing.T) {
	base := t.TempDir()
	tmp := filepath.Join(base, "root", "tmp")
	os.MkdirAll(tmp, 0o755)
	os.WriteFile(filepath.Join(tmp, "perf-1.map"), []byte("1000 10 f\n"), 0o644)
	os.Symlink("perf-1.map", filepath.Join(tmp, "link.map"))
	os.Mkdir(filepath.Join(tmp, "sub"), 0o755)
	if _, err := NewRoot(filepath.Join(base, "root")).OpenDir("/tmp/perf-1.map"); !errors.Is(err, ErrRefused) {
		t.Errorf("OpenDir of a file: %v, want a refusal", err)
	}
	d, err := NewRoot(filepath.Join(base, "root")).OpenDir("/tmp")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := os.Rename(filepath.Join(base, "root"), filepath.Join(base, "gone")); err != nil {
		t.Fatal(err)
	}
	f, err := OpenOwnedIn(d, "perf-1.map")
	if err != nil {
		t.Fatalf("OpenOwnedIn after the directory's name changed: %v", err)
	}
	f.Close()
	for _, name := range []string{"link.map", "sub", "sub/x", "..", ""} {
		if _, err := OpenOwnedIn(d, name); !errors.Is(err, ErrRefused) {
			t.Errorf("OpenOwnedIn(%q): %v, want a refusal", name, err)
		}
	}
	if _, err := OpenOwnedIn(d, "none.map"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("OpenOwnedIn of a missing file: %v, want not exist", err)
	}
}
