package diag

import (
	"fmt"
	"io"

	"github.com/hwprof/hwprof/perf/perfdata"
)

// Incomplete is the exit status of a command whose recording lost data
// while it was read: what could be read was still printed.
const Incomplete = 1

// A Log collects the warnings of one reading, each once. The zero value
// is ready to use.
type Log struct {
	warnings   []string
	seen       map[string]bool
	incomplete bool
}

// Note adds a warning that loses no data.
func (l *Log) Note(msg string) { l.add(msg) }

// Lost adds a warning that says data was lost: the reading is incomplete.
func (l *Log) Lost(msg string) {
	l.incomplete = true
	l.add(msg)
}

func (l *Log) add(msg string) {
	if l.seen[msg] {
		return
	}
	if l.seen == nil {
		l.seen = map[string]bool{}
	}
	l.seen[msg] = true
	l.warnings = append(l.warnings, msg)
}

// Reader adds what r found once it stopped: its warnings (notes, or the
// reading is incomplete when r.Incomplete says so) and the error that
// stopped it, as a warning that data was lost.
func (l *Log) Reader(r *perfdata.Reader) {
	for _, w := range r.Warnings() {
		l.add(w)
	}
	if r.Incomplete() {
		l.incomplete = true
	}
	if err := r.Err(); err != nil {
		l.Lost(StoppedAt(err))
	}
}

// StoppedAt is the warning for the error that stopped reading.
func StoppedAt(err error) string {
	return fmt.Sprintf("%v: reading stopped there; what was read before it is shown", err)
}

// Skipped adds the warnings for records that the command's analysis
// reads but that did not decode, and were skipped: data lost.
func (l *Log) Skipped(s Skips) {
	if s.Samples > 0 {
		l.Lost(fmt.Sprintf("%d sample records could not be decoded: skipped (counted as lost)", s.Samples))
	}
	if s.Records > 0 {
		l.Lost(fmt.Sprintf("%d MMAP, MMAP2, COMM, FORK, EXIT, LOST or LOST_SAMPLES records could not be decoded: skipped", s.Records))
	}
}

// Skips counts records that did not decode and were skipped: sample
// records, and the other records whose contents the analysis reads.
type Skips struct {
	Samples uint64
	Records uint64
}

// Warnings returns every warning, once each, in the order added.
func (l *Log) Warnings() []string { return l.warnings }

// Incomplete reports whether a warning said that data was lost.
func (l *Log) Incomplete() bool { return l.incomplete }

// Print writes every warning to w, one line each, and returns the exit
// status: Incomplete when data was lost, else 0.
func (l *Log) Print(w io.Writer) int { return Print(w, l.warnings, l.incomplete) }

// Print writes warnings to w as "hwprof: warning: ...", one line each, and
// returns the exit status for them: Incomplete when incomplete, else 0.
// It is Log.Print for warnings already collected (a profile's).
func Print(w io.Writer, warnings []string, incomplete bool) int {
	for _, s := range warnings {
		fmt.Fprintf(w, "hwprof: warning: %s\n", s)
	}
	if incomplete {
		return Incomplete
	}
	return 0
}
