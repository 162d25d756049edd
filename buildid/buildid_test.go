package buildid

import (
	"bytes"
	"encoding/binary"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

func mustParse(t *testing.T, s string) ID {
	t.Helper()
	id, err := Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// Rows from real recordings: a SHA-1 id (gcc's default), an xxHash id
// (lld's --build-id=fast) as perf 5.x records it and as perf 4.x padded
// it, an MD5 id, and the all-zero id perf writes for an unknown object.
func TestEqual(t *testing.T) {
	const (
		sha1     = "b8ee6ed0a7d4cd1d0f1d9cd1a7a5c4cc19f3ae55"
		xxhash   = "9d3f6c1a2b4e8f70"
		xxPadded = "9d3f6c1a2b4e8f70000000000000000000000000"
		md5      = "0f5e0c8a9b1d2e3f4a5b6c7d8e9fa0b1"
		zero     = "0000000000000000000000000000000000000000"
	)
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{sha1, sha1, true},
		{sha1, strings.ToUpper(sha1), true},
		{xxhash, xxPadded, true},
		{xxPadded, xxhash, true},
		{md5, md5 + "00000000", true},
		{md5, md5[:30], false}, // a prefix is another id
		{sha1, sha1[:38] + "00", false},
		{zero, zero, false}, // no id is nobody's id
		{"", "", false},
		{xxhash, zero, false},
		{xxPadded[:38] + "01", xxhash, false}, // padding must be zeros
		{"572ac72487ae19", "572ac72487ae1966", false},
	} {
		a, b := mustParse(t, c.a), mustParse(t, c.b)
		if got := a.Equal(b); got != c.want {
			t.Errorf("%s Equal %s = %v, want %v", c.a, c.b, got, c.want)
		}
	}
	if !mustParse(t, zero).IsZero() || !(ID{}).IsZero() || mustParse(t, xxPadded).IsZero() {
		t.Error("IsZero: all zeros and empty only")
	}
	if got := mustParse(t, strings.ToUpper(sha1)).String(); got != sha1 {
		t.Errorf("String = %q, want lower case %q", got, sha1)
	}
	if mustParse(t, xxhash) == mustParse(t, xxPadded) {
		t.Error("== must see the padding (Equal forgives it)")
	}
}

func TestForms(t *testing.T) {
	got := mustParse(t, "9d3f6c1a2b4e8f70000000000000000000000000").Forms()
	if len(got) != 13 || got[0] != "9d3f6c1a2b4e8f70000000000000000000000000" || got[12] != "9d3f6c1a2b4e8f70" {
		t.Errorf("Forms = %q", got)
	}
	if got := mustParse(t, "abcd").Forms(); len(got) != 1 || got[0] != "abcd" {
		t.Errorf("Forms of an unpadded id = %q", got)
	}
}

func TestNewAndParseErrors(t *testing.T) {
	if _, err := New(make([]byte, 21)); err == nil {
		t.Error("New accepted 21 bytes")
	}
	if _, err := Parse("xyz"); err == nil {
		t.Error("Parse accepted non-hex")
	}
	id, err := New([]byte{1, 2, 3})
	if err != nil || id.Len() != 3 || string(id.Bytes()) != "\x01\x02\x03" {
		t.Errorf("New: %v %v", id, err)
	}
}

// Read agrees with binutils' readelf on a system program.
func TestReadAgreesWithReadelf(t *testing.T) {
	readelf, err := exec.LookPath("readelf")
	if err != nil {
		t.Skip("no readelf on this machine")
	}
	path, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true program on this machine")
	}
	out, err := exec.Command(readelf, "-n", path).Output()
	if err != nil {
		t.Fatalf("readelf -n %s: %v", path, err)
	}
	m := regexp.MustCompile(`Build ID: ([0-9a-f]+)`).FindSubmatch(out)
	if m == nil {
		t.Skipf("%s has no build-id (readelf -n)", path)
	}
	id, err := Read(path)
	if err != nil || id.String() != string(m[1]) {
		t.Errorf("Read(%s) = %s, %v; readelf says %s", path, id, err, m[1])
	}
}

// /sys/kernel/notes holds a Xen note before the GNU build-id on some
// kernels; a truncated sequence yields none.
func TestFromNotes(t *testing.T) {
	note := func(name string, typ uint32, desc []byte) []byte {
		b := binary.LittleEndian.AppendUint32(nil, uint32(len(name)))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(desc)))
		b = binary.LittleEndian.AppendUint32(b, typ)
		b = append(b, name...)
		for len(b)%4 != 0 {
			b = append(b, 0)
		}
		b = append(b, desc...)
		for len(b)%4 != 0 {
			b = append(b, 0)
		}
		return b
	}
	want := []byte{0xe4, 0xf1, 0x8d, 0x9d, 0xc1}
	data := append(note("Xen\x00", 6, []byte{1, 2, 3}), note("GNU\x00", 3, want)...)
	if got, ok := FromNotes(data, binary.LittleEndian); !ok || !bytes.Equal(got.Bytes(), want) {
		t.Errorf("FromNotes = %x %v, want %x", got, ok, want)
	}
	for n := range len(data) {
		if got, ok := FromNotes(data[:n], binary.LittleEndian); ok {
			t.Errorf("truncated at %d: %x", n, got)
		}
	}
	if _, ok := FromNotes(note("GNU\x00", 3, make([]byte, 32)), binary.LittleEndian); ok {
		t.Error("a 32-byte build-id taken: perf cannot record it")
	}
	// The running kernel's, when readable, is a build-id.
	if kid, err := Kernel(); err == nil && !kid.IsZero() && kid.Len() < 8 {
		t.Errorf("kernel build-id %s", kid)
	}
}
