package perfdata

import (
	"bytes"
	"testing"
)

// TestReaderIncomplete: Incomplete tells the warnings that lose records
// from mere notes. A clean stream and one with a few stray bytes after
// its last record (no record can be that short) lose nothing; a
// COMPRESSED record that is not zstd, a partial record at the end of a
// COMPRESSED record and a stream cut inside a record do.
func TestReaderIncomplete(t *testing.T) {
	attr := attrRecord(orderAttr(), 7)
	sample := timedSample(5, 0)
	for _, tc := range []struct {
		name       string
		stream     []byte
		incomplete bool
		warnings   bool
	}{
		{"clean", newStream().add(attr, sample).b, false, false},
		{"stray bytes", append(newStream().add(attr, sample).b, 0, 0, 0), false, true},
		{"not zstd", newStream().add(attr, compressedRecord([]byte("not zstd at all")), sample).b, true, true},
		{"partial record in COMPRESSED", newStream().add(attr, compressedRecord(zstdFrame(t, sample[:len(sample)-8]))).b, true, true},
		{"cut inside a record", newStream().add(attr, sample).b[:len(newStream().add(attr, sample).b)-8], true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewPipeReader(bytes.NewReader(tc.stream))
			must(t, err)
			defer r.Close()
			for r.Next() {
			}
			if r.Incomplete() != tc.incomplete || (len(r.Warnings()) > 0) != tc.warnings {
				t.Errorf("Incomplete %v (want %v), warnings %q, err %v", r.Incomplete(), tc.incomplete, r.Warnings(), r.Err())
			}
		})
	}
}
