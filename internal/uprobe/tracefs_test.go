package uprobe

import (
	"testing"

	"golang.org/x/sys/unix"
)

// Unmount leaves alone a mount it did not make: one whose id differs from
// the one it was given (someone else's tracefs at the same place), or an
// unknown id; UnmountOwn does nothing when this process mounted nothing.
func TestUnmountOnlyOwn(t *testing.T) {
	if err := UnmountOwn(); err != nil {
		t.Fatalf("UnmountOwn without a mount: %v", err)
	}
	for _, dir := range tracefsDirs {
		var st unix.Statfs_t
		if unix.Statfs(dir, &st) != nil || st.Type != unix.TRACEFS_MAGIC {
			continue
		}
		id := mountID(dir)
		if id == 0 {
			t.Skipf("statx gives no mount id for %s (kernel before 5.8)", dir)
		}
		for _, other := range []uint64{0, id + 1} {
			if err := Unmount(dir, other); err != nil {
				t.Errorf("Unmount(%s, %d): %v", dir, other, err)
			}
			if mountID(dir) != id || unix.Statfs(dir, &st) != nil || st.Type != unix.TRACEFS_MAGIC {
				t.Fatalf("Unmount(%s, %d) of a mount with id %d unmounted it", dir, other, id)
			}
		}
		return
	}
	t.Skip("no tracefs mounted here to leave alone")
}
