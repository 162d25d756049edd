// Package diag is the one rule every command that reads a recording
// (dump, report, script, flamegraph, and any later one) follows for what
// went wrong while reading it:
//
//   - every warning (the reader's, the analysis engine's, symbolization's)
//     is collected once, in the order found, and reaches standard error
//     once, as "hwprof: warning: ...";
//   - a warning either says that data was lost (records lost, skipped or
//     cut off: a COMPRESSED record that could not be decompressed, a record
//     that did not decode, a file that ends early or was cut short, an
//     error that stopped reading) or is a mere note (an object that could
//     not be symbolized, a feature section that could not be read);
//   - the command prints what could be read, then exits with status 1
//     (Incomplete) when data was lost, else 0.
//
// Log collects the warnings; Print prints them and gives the exit status.
// The package prints only in Print, to the writer it is given.
package diag
