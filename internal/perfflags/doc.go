// Package perfflags binds perf record's event options (-e, -c, -F, -g,
// --call-graph, -j, -b, --no-inherit) to a flag.FlagSet, writing an
// event.RecordConfig (Register), and reads the values of its -p
// (ParsePIDs) and -m (ParseRingSize). Values are checked as they are
// parsed, with perf's own parsers; what depends on the kernel or on the
// other options (-c with -F, whether an event exists) is left to
// event.BuildAttrs.
//
// It keeps the command line out of packages perf (the kernel ABI) and
// perf/event (event specifications and the attrs built from them). The
// caller provides the FlagSet and registers the options perf's record
// takes beside these (-p, -m, -a, -o).
package perfflags
