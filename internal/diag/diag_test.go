package diag

import (
	"bytes"
	"slices"
	"testing"
)

// TestLog: warnings are kept once each in the order added, and printed
// once each; the exit status is Incomplete after Lost or Skipped, 0 after
// notes alone.
func TestLog(t *testing.T) {
	var l Log
	l.Note("cannot symbolize /bin/a")
	l.Note("cannot symbolize /bin/a")
	var b bytes.Buffer
	if code := l.Print(&b); code != 0 || b.String() != "hwprof: warning: cannot symbolize /bin/a\n" {
		t.Errorf("notes: exit %d, printed %q", code, b.String())
	}
	l.Lost("COMPRESSED record at offset 0x10: its records are lost")
	l.Skipped(Skips{Samples: 2})
	l.Skipped(Skips{Samples: 2}) // the same warning again
	want := []string{"cannot symbolize /bin/a", "COMPRESSED record at offset 0x10: its records are lost",
		"2 sample records could not be decoded: skipped (counted as lost)"}
	if !slices.Equal(l.Warnings(), want) || !l.Incomplete() {
		t.Errorf("warnings %q, incomplete %v; want %q, true", l.Warnings(), l.Incomplete(), want)
	}
	b.Reset()
	if code := l.Print(&b); code != Incomplete || bytes.Count(b.Bytes(), []byte("\n")) != 3 {
		t.Errorf("exit %d, printed %q", code, b.String())
	}
	var s Log
	s.Skipped(Skips{})
	if s.Incomplete() || len(s.Warnings()) != 0 {
		t.Errorf("nothing skipped: %q, incomplete %v", s.Warnings(), s.Incomplete())
	}
}
