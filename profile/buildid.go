package profile

import (
	"encoding/hex"
	"fmt"
	"strings"
)

// BuildID is an object's build-id: lower-case hex of the bytes of its ELF
// NT_GNU_BUILD_ID note (20 bytes for SHA-1, 8 or 16 for xxHash, MD5 and
// UUID). The zero value, "", is an unknown build-id: a recording that
// gives one of all zero bytes (perf writes zeros for an object whose
// build-id it did not know) gives none.
type BuildID string

// BuildIDFromBytes returns the build-id of the note's bytes b: "" when b
// is empty or all zeros.
func BuildIDFromBytes(b []byte) BuildID {
	for _, c := range b {
		if c != 0 {
			return BuildID(hex.EncodeToString(b))
		}
	}
	return ""
}

// ParseBuildID reads a build-id in hex (either case): "" for an empty or
// all-zero one, an error for a string that is not whole bytes of hex.
func ParseBuildID(s string) (BuildID, error) {
	b, err := hex.DecodeString(s)
	if err != nil {
		return "", fmt.Errorf("parse build-id %q: %w", s, err)
	}
	return BuildIDFromBytes(b), nil
}

// String is the build-id in lower-case hex ("" when unknown).
func (id BuildID) String() string { return string(id) }

// Known says whether the build-id is known (not "").
func (id BuildID) Known() bool { return id != "" }

// Matches reports whether a build-id a recording gives (id) is that of a
// file (file). perf before 5.x wrote every build-id padded with zero bytes
// to 20 bytes and without its length, so a shorter build-id of the file
// followed by zeros matches too. Unknown build-ids match nothing.
func (id BuildID) Matches(file BuildID) bool {
	r, f := string(id), string(file)
	if r == "" || f == "" || len(r) < len(f) {
		return false
	}
	return r[:len(f)] == f && strings.Trim(r[len(f):], "0") == ""
}
