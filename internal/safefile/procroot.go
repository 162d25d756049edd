package safefile

import (
	"strconv"

	"golang.org/x/sys/unix"
)

// ProcessRoot returns /proc/PID/root when process pid lives and sees
// other files than this process: another mount namespace (a container,
// unshare --mount) or another root directory (a chroot). The paths its
// mappings name are then names in that root (NewRoot of it), which the
// host may not have, or have as other files. It returns "" otherwise, and
// for pid 0 and the kernel's pid -1.
func ProcessRoot(pid uint32) string {
	if pid == 0 || pid == ^uint32(0) {
		return ""
	}
	dir := "/proc/" + strconv.FormatUint(uint64(pid), 10)
	var ourNS, theirNS, ourRoot, theirRoot unix.Stat_t
	if unix.Stat(dir+"/root", &theirRoot) != nil || unix.Stat("/", &ourRoot) != nil {
		return ""
	}
	if theirRoot.Dev != ourRoot.Dev || theirRoot.Ino != ourRoot.Ino {
		return dir + "/root"
	}
	if unix.Stat(dir+"/ns/mnt", &theirNS) == nil && unix.Stat("/proc/self/ns/mnt", &ourNS) == nil && theirNS.Ino != ourNS.Ino {
		return dir + "/root"
	}
	return ""
}
