package procmap

import (
	"strconv"

	"golang.org/x/sys/unix"
)

// OtherRoot returns /proc/PID/root when process pid lives and sees other
// files than this process: another mount namespace (a container, unshare
// --mount) or another root directory (a chroot). Its mappings' paths are
// then names in that root, which the host may not have, or have as other
// files. It returns "" otherwise, and for the kernel's pid.
func OtherRoot(pid uint32) string {
	if pid == 0 || pid == KernelPID {
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
