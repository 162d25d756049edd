package record

import (
	"runtime"
	"testing"
)

// TestOneP checks that loops running at once keep the process on one P
// until the last ends, which restores what it was.
func TestOneP(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	a := oneP()
	b := oneP()
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Fatalf("GOMAXPROCS %d during two loops, want 1", n)
	}
	a()
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Fatalf("GOMAXPROCS %d after the first loop ended, want 1", n)
	}
	b()
	if n := runtime.GOMAXPROCS(0); n != 3 {
		t.Fatalf("GOMAXPROCS %d after both ended, want 3", n)
	}
}
