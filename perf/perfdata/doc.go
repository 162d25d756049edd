// Package perfdata writes perf.data files in the PERFILE2 format of Linux
// perf (tools/perf/Documentation/perf.data-file-format.txt), so that
// `perf report`, `perf script` and `perf buildid-list` read hwprof's
// recordings, and reads perf.data files of any perf version, file or pipe
// mode (Reader, in reader*.go): records in time order round by round,
// COMPRESSED records expanded (zstd), feature sections decoded. The
// version 1 format of perf before 2012 ("PERFFILE") is read as perf reads
// it; big-endian files (which perf byte-swaps) are refused with that said.
// A file is untrusted input: what its header can make the Reader read or
// allocate is budgeted (reader_budget.go). Every section it names is read
// once at most, and one that overlaps another is refused with a warning,
// so the sections read total at most the file's size; feature sections
// are capped by kind, and decoding one allocates a few times its size at
// most.
// The Reader runs one goroutine while a recording has COMPRESSED records
// (the streaming zstd decoder pulls its input); Close ends it.
//
// A Writer lays a file out as perf record does: the header, the sample ids
// of every event, the attrs, then the records exactly as the kernel
// produced them, and at Close the feature sections (build-ids, host facts,
// command line, event names and ids, sample times, the branch-stack
// marker). The header is rewritten whenever buffered records reach the
// file, so a recording whose process is killed is still readable by perf
// up to its last flush; Checkpoint forces one. Create makes the file;
// NewWriter takes one already opened. NewPipeWriter writes pipe mode to a
// stream that cannot seek (`perf record -o -`): the attrs and features as
// records up front, build-ids as records at Close.
//
// CollectFeatures gathers the host facts perf writes (uname, /proc/cpuinfo,
// /proc/meminfo, /sys/devices/system/cpu). The HEADER_BUILD_ID table holds
// buildid.IDs (package buildid reads them from ELF files and handles
// perf's padding and all-zero ids).
//
// What it does not do: it does not synthesize records (the COMM, MMAP2 and
// kernel MMAP records of processes that existed before recording started
// are the recorder's to write; an event that samples the kernel needs perf's
// "[kernel.kallsyms]_text" MMAP record or perf report warns), it does not
// write compressed records or the topology, cache and PMU feature
// sections. The attrs are written as given; perf 6.1 rejects attrs larger than 128 bytes (PERF_ATTR_SIZE_VER7).
//
// Writers and Readers are not safe for concurrent use. Only Create, the
// Writer's methods, Open, OpenFile and CollectFeatures touch the file
// system.
package perfdata
