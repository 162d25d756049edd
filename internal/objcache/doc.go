// Package objcache is hwprof's build-id cache: a directory of the object
// files that had samples in a recording (record finds them), each named
// by its GNU build-id (DIR/.build-id/xx/rest, xx the id's first byte in
// hex), so that a report
// made later, or on another machine, or after a container's files are
// gone, reads the very files the recording ran (as perf's ~/.debug cache
// does). The layout is one symbolize.Options.DebugDirs reads.
//
// Record fills it at the end of a recording (Add, per object, with the
// file open: for a process in another mount namespace, opened through
// /proc/PID/root while it lived); report reads it as a --debug-dir. It is
// bounded in size: after each Add, the files least recently added are
// removed until the directory holds at most its limit. A file is written
// to a temporary file beside its place and renamed there whole, so a
// full disk or a crash never leaves half a file under a build-id.
//
// It starts no goroutines and says nothing itself: errors are returned.
package objcache
