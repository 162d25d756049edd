// Package output opens the file a recording is written to, by the rules
// every hwprof writer follows (record, compare, and any later one), so
// that nothing but a regular file is ever renamed or replaced:
//
//   - "-" is standard output, written as a stream;
//   - a path that does not exist is created;
//   - a regular file is first renamed to PATH.old (replacing an earlier
//     PATH.old only when that is a regular file too), then PATH is created
//     anew; a rename that fails is an error and leaves the file where it was;
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
// Check applies the same rules without touching anything, so that a
// recorder can refuse a bad path before it starts a program, and open it
// (Open) only once everything else succeeded: a recording that fails to
// start leaves the previous one where it was.
//
// SharesStdout tells a recorder whose recording goes to standard output
// to send the recorded program's output elsewhere.
//
// What it does not do: it writes no records (package perfdata does, into
// the file opened here) and does not choose file or pipe mode itself: a
// Stream output needs perfdata's pipe writer. The package touches the file
// system and nothing else; it does not log and starts no goroutines.
//
// The caller provides the path as the user gave it, and closes (Close) or
// removes (Discard) what Open returned.
package output
