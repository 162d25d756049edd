// Package safefile is the one place where hwprof opens a file that a
// recording leads it to: an object an MMAP record names, its debug files,
// a perf map /tmp/perf-PID.map, a kallsyms saved in a build-id cache or
// under --symfs. A recording is untrusted input (mailed in, downloaded,
// made elsewhere, often read as root), so such a file is opened only when
// it is a regular file within its root, and never in a way that blocks.
//
// A Root is a directory the recording's names are looked up in: --symfs
// (the file system's root / without it), a --debug-dir, perf's build-id
// cache. Open resolves a name in it as a chroot would: neither a .. nor a
// symbolic link can leave it, an absolute link is read in the root (a
// sysroot's /lib64/ld-linux-x86-64.so.2 -> /lib/... stays in the
// sysroot), and a link that would have led out of it, to a file the root
// does not hold, is refused as such. It uses openat2 with
// RESOLVE_BENEATH, then RESOLVE_IN_ROOT (Linux 5.6 and later), and where
// the kernel lacks it, walks the name one component at a time from the
// root's descriptor (openat with O_PATH|O_NOFOLLOW, readlinkat), holding a
// descriptor of every directory it passes, so that a rename cannot move it
// out of the root either.
//
// A name a recording gives must be absolute (the kernel names every file
// so; what else it writes, such as "anon_inode:[perf_event]", is no file;
// perf would look a relative name up in its working directory, hwprof
// looks it up nowhere) and must have no .. component (the kernel writes
// none). The file
// it resolves to is opened with O_PATH first, which neither blocks nor
// has the side effects opening a device can have, and refused unless
// fstat says it is a regular file, on a file system that holds files (not
// procfs, sysfs, debugfs, tracefs and the like, whose regular files can be
// endless, block in read, or be another process's memory); only then is
// it opened for reading, through its descriptor (/proc/self/fd), with
// O_NONBLOCK|O_NOCTTY|O_CLOEXEC. A refusal is a *RefusedError (errors.Is
// ErrRefused) naming the file and why; a file that is not there is an
// error that matches fs.ErrNotExist, as os.Open's does.
//
// OpenOwned is for a file anyone may have put where it is looked for
// (/tmp/perf-PID.map): its last component must not be a symbolic link,
// and it must belong to root or to the effective user, as perf requires.
// OpenDir holds a directory of a root (a container's /tmp through
// /proc/PID/root) and OpenOwnedIn opens a file directly in it by
// OpenOwned's rules, after the names that led there are gone.
// OpenLocal opens a file the caller names itself (a command-line
// argument, a file a Root resolved before, the running kernel's
// /proc/kallsyms) with the same refusal of what is not a regular file.
//
// ProcessRoot names the root of a process that sees other files than
// hwprof (a container: another mount namespace, or a chroot),
// /proc/PID/root, for NewRoot: its files are read there, by the same
// rules, while it runs.
//
// It does not say anything itself: callers report a refusal once, as a
// warning. It starts no goroutines. It works on Linux only.
package safefile
