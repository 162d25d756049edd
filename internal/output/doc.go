// Package output opens the file a recording is written to, by the rules
// every hwprof writer follows (record, compare, and any later one), so
// that nothing but a regular file is ever renamed or replaced:
//
//   - "-" is standard output, written as a stream;
//   - a path that does not exist is created;
//   - a regular file is renamed to PATH.old (replacing an earlier PATH.old
//     only when that is a regular file too) and the new file takes its
//     place; a rename that fails is an error and leaves the file where it
//     was;
//   - a symbolic link to a regular file is kept: the file it names
//     (resolved through every link) is rotated to TARGET.old and created
//     anew at the same place, so the link names the new recording;
//   - a character device (/dev/null, a terminal), a FIFO or a Unix socket,
//     or a link to one, is opened for writing as it is and written as a
//     stream: never renamed, truncated or replaced. A stream cannot seek,
//     so the recording is written in perf's pipe mode;
//   - a directory, a block device, a link to a missing file, or anything
//     else is an error naming it, and is left untouched.
//
// A file is written by one writer at a time: a writer holds a lock
// (flock) on the file it writes until it closes it, and a regular file
// that another process holds locked, or a PATH.old that is, is an error
// naming that process (hwprof (pid N)) rather than rotated or replaced:
// two recordings to one path never unlink one another's file while it is
// written; the second fails at once. A writer also locks the directory
// while it rotates and creates, so two never both find the path free.
// The lock goes with the process, SIGKILL included. Where the file system
// has no locks, writers go on without them.
//
// Check applies the same rules without touching anything, so that a
// recorder can refuse a bad path before it starts a program. Prepare
// opens the output once everything else succeeded, with the new file
// still without a name (O_TMPFILE), and Commit gives it the path (a
// regular file there becomes PATH.old only then) once the recording has
// started: a recording that fails to start leaves the previous one, and
// any PATH.old, where they were. Open is Prepare and Commit at once.
// Where the file system cannot create a file without a name, Prepare
// commits at once.
//
// SharesStdout tells a recorder whose recording goes to standard output
// to send the recorded program's output elsewhere.
//
// What it does not do: it writes no records (package perfdata does, into
// the file opened here) and does not choose file or pipe mode itself: a
// Stream output needs perfdata's pipe writer. The package touches the file
// system and nothing else; it does not log and starts no goroutines.
//
// The caller provides the path as the user gave it, commits what Prepare
// returned, and closes (Close) or removes (Discard) it.
package output
