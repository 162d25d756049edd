// Package buildid is hwprof's one type for GNU build-ids (ID) and the one
// reader of them: from an ELF file's NT_GNU_BUILD_ID note (Read), from a
// sequence of ELF notes such as /sys/kernel/notes (FromNotes, Kernel), and
// from hex text (Parse).
//
// A build-id is at most 20 bytes (perf's BUILD_ID_SIZE: a SHA-1; MD5 and
// UUID ids are 16 bytes, xxHash ids 8). Two habits of perf are handled
// here and nowhere else: perf writes an all-zero build-id for an object
// whose id it did not know (IsZero: no id at all), and perf before 5.x
// padded every id with zero bytes to 20 without recording its length
// (Equal: an id equals itself followed by zero bytes; Forms lists the
// shorter forms a padded id may be filed under).
//
// ID is a comparable value: use it as a map key as it is. It does not
// choose which file belongs to a recording (package symbolize does) and
// reads nothing but the file or notes it is given. It starts no goroutines.
package buildid
