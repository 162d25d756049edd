package main

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// asVersion1 returns the version 2 file-mode recording v2 as perf.data
// version 1 ("PERFFILE") as perf's reader takes it: the attrs, cut to
// PERF_ATTR_SIZE_VER4 (104 bytes; perf refuses a version 1 file whose attr
// entries are not VER0 to VER4 plus their 16-byte ids section), are
// appended at the end of the file and the header points at them.
func asVersion1(t *testing.T, v2 []byte) []byte {
	t.Helper()
	const attrLen, entryLen = 104, 104 + 16
	le := binary.LittleEndian
	if string(v2[:8]) != "PERFILE2" || le.Uint64(v2[8:]) != 104 {
		t.Fatalf("not a version 2 file-mode recording: %q", v2[:16])
	}
	entry, off, size := le.Uint64(v2[16:]), le.Uint64(v2[24:]), le.Uint64(v2[32:])
	out := append([]byte(nil), v2...)
	for len(out)%8 != 0 {
		out = append(out, 0)
	}
	at := uint64(len(out))
	n := size / entry
	for i := range n {
		e := v2[off+i*entry : off+(i+1)*entry]
		a := make([]byte, attrLen)
		copy(a, e)
		le.PutUint32(a[4:], attrLen)
		out = append(append(out, a...), e[entry-16:]...)
	}
	copy(out, "PERFFILE")
	le.PutUint64(out[16:], entryLen)
	le.PutUint64(out[24:], at)
	le.PutUint64(out[32:], n*entryLen)
	return out
}

var reportSamplesRE = regexp.MustCompile(`(?m)^samples:\s+(\d+)`)

// dump and report read a version 1 file made from hwprof's own recording
// with the sample count of the original.
func TestReadsVersion1Recording(t *testing.T) {
	needPerfEvents(t)
	dir := t.TempDir()
	v2, _ := workloadRecording(t)
	b, err := os.ReadFile(v2)
	if err != nil {
		t.Fatal(err)
	}
	v1 := filepath.Join(dir, "v1.data")
	if err := os.WriteFile(v1, asVersion1(t, b), 0o644); err != nil {
		t.Fatal(err)
	}
	var dumped, reported [2]int // the original, the version 1 file
	var warnings [2]string
	for i, path := range []string{v2, v1} {
		d := hwprof(t, "dump", "--stats", "-i", path)
		if d.code != 0 || d.stderr != "" {
			t.Fatalf("dump --stats -i %s: exit %d: %s", filepath.Base(path), d.code, d.stderr)
		}
		rep := hwprof(t, "report", "-i", path)
		m := reportSamplesRE.FindStringSubmatch(rep.stdout)
		if rep.code != 0 || m == nil {
			t.Fatalf("report -i %s: exit %d: %s\n%s", filepath.Base(path), rep.code, rep.stderr, rep.stdout)
		}
		// The report's notes (a broken stack or two of the Go runtime)
		// are the recording's: the same for both files.
		warnings[i] = rep.stderr
		dumped[i] = statsSamples(t, d.stdout)
		reported[i], _ = strconv.Atoi(m[1])
	}
	if warnings[0] != warnings[1] {
		t.Errorf("report warns differently on the version 1 file:\n%s\nthe original:\n%s", warnings[1], warnings[0])
	}
	if dumped[0] == 0 || dumped != reported || dumped[0] != dumped[1] {
		t.Errorf("samples in the original and the version 1 file: dump --stats %v, report %v", dumped, reported)
	}
}
