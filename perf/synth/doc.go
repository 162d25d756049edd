// Package synth writes the side-band records perf synthesizes at the start
// of a recording of processes that are already running (`perf record -p`):
// a PERF_RECORD_COMM for every thread, a PERF_RECORD_MMAP2 for every
// executable mapping of the process (every readable one with data
// mappings on, as `perf record -d`), optionally a PERF_RECORD_FORK per
// thread (as `perf record -a` writes), and the PERF_RECORD_MMAP of the
// kernel text ("[kernel.kallsyms]_text", pid -1).
//
// The kernel reports only the mmaps and comms that happen after an event
// is opened, so without these records the samples of an attached process
// could not be tied to its objects. The records follow perf 6.1's
// tools/perf/util/synthetic-events.c byte for byte, which the tests check
// against `perf record -p` and `perf report -D`:
//
//   - COMM: misc 0 (the exec bit is not set), pid = tgid, tid = thread,
//     comm taken from the "Name:" line of /proc/PID/task/TID/status, so a
//     newline or backslash in a thread name appears escaped ("\n", "\\")
//     as perf writes it, at most 15 bytes.
//   - MMAP2: misc PERF_RECORD_MISC_USER, plus PERF_RECORD_MISC_MMAP_DATA
//     for non-executable mappings; pid = tid = tgid; maj, min and ino from
//     the maps line, ino_generation 0; prot only PROT_READ|WRITE|EXEC and
//     flags only MAP_SHARED or MAP_PRIVATE (all a maps line tells);
//     anonymous mappings are named "//anon", pseudo-paths ([vdso],
//     [vsyscall], [heap], [stack]) and " (deleted)" suffixes are kept
//     verbatim, and mappings of files on the hugetlbfs mount become
//     "//anon" with MAP_HUGETLB, as perf does.
//   - FORK (only when asked): misc PERF_RECORD_MISC_FORK_EXEC; the leader's
//     parent is its PPid, any other thread's parent is its leader.
//   - Every record is padded to 8 bytes and ends with the sample_id
//     trailer of the attr's sample_type (pass 0 when the attr has no
//     sample_id_all). perf writes that trailer as zeros (time 0 sorts the
//     records before every sample), and so does Options.Synthesize; the
//     Append functions write whatever SampleID they are given.
//
// What it does not do: it does not read build-ids (perf's --buildid-mmap),
// namespaces or cgroups records, kernel module mmaps, BPF program records,
// and it has no time limit for reading a huge maps file (perf's
// --proc-map-timeout). It starts no goroutines.
//
// The caller provides the /proc root ("/proc" on a live system, a fixture
// directory in tests) and enough privilege to read other users'
// /proc/PID/maps (same user, or CAP_SYS_PTRACE) and the addresses in
// /proc/kallsyms (kptr_restrict).
package synth
