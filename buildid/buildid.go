package buildid

import (
	"encoding/hex"
	"fmt"
	"strings"
)

// MaxSize is the longest build-id perf records: BUILD_ID_SIZE in perf's
// <util/build-id.h>, a SHA-1.
const MaxSize = 20

// ID is a build-id of up to MaxSize bytes; the zero ID is no build-id.
// It is comparable: two IDs are == when their bytes and lengths are;
// Equal also accepts perf's zero padding.
type ID struct {
	b [MaxSize]byte
	n uint8
}

// New returns the build-id made of b (copied). More than MaxSize bytes is
// an error: perf cannot record such an id.
func New(b []byte) (ID, error) {
	var id ID
	if len(b) > MaxSize {
		return id, fmt.Errorf("build-id: %d bytes, longer than perf's %d", len(b), MaxSize)
	}
	id.n = uint8(copy(id.b[:], b))
	return id, nil
}

// Parse reads a build-id written in hex, in either case. "" is the zero ID.
func Parse(s string) (ID, error) {
	b, err := hex.DecodeString(s)
	if err != nil {
		return ID{}, fmt.Errorf("build-id %q: %w", s, err)
	}
	return New(b)
}

// Bytes returns the id's bytes (a copy), nil for the zero ID.
func (id ID) Bytes() []byte {
	if id.n == 0 {
		return nil
	}
	return append([]byte(nil), id.b[:id.n]...)
}

// Len is the number of bytes of the id as recorded (padding included).
func (id ID) Len() int { return int(id.n) }

// String returns the id in lower-case hex, "" for the zero ID.
func (id ID) String() string { return hex.EncodeToString(id.b[:id.n]) }

// IsZero reports whether id names no object: empty, or all zero bytes, as
// perf writes for an object whose build-id it did not know.
func (id ID) IsZero() bool {
	for _, c := range id.b[:id.n] {
		if c != 0 {
			return false
		}
	}
	return true
}

// Trim returns id without trailing zero bytes: the form an id padded by
// perf before 5.x had in its file.
func (id ID) Trim() ID {
	for id.n > 0 && id.b[id.n-1] == 0 {
		id.n--
	}
	return id
}

// Equal reports whether id and other are the same object's build-id: both
// not zero, and equal once perf's zero padding is removed (an 8-byte or
// 16-byte id followed by zeros to 20 bytes is the id itself). An id that
// really ends in zero bytes equals its padded form too, as in perf.
func (id ID) Equal(other ID) bool {
	if id.IsZero() || other.IsZero() {
		return false
	}
	return id.Trim() == other.Trim()
}

// Forms returns the names a recorded id may be filed under in a debug
// directory, longest first: the id as recorded, then, when it ends in zero
// bytes (perf's padding), each shorter form down to the last non-zero byte.
func (id ID) Forms() []string {
	forms := []string{id.String()}
	for id.n > 1 && id.b[id.n-1] == 0 {
		id.n--
		forms = append(forms, id.String())
	}
	return forms
}

// Format makes %x, %X and %s print the id's hex, as for a byte slice.
func (id ID) Format(f fmt.State, verb rune) {
	s := id.String()
	if verb == 'X' {
		s = strings.ToUpper(s)
	}
	fmt.Fprint(f, s)
}
