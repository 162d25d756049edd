package perfdata

import (
	"bytes"
	"encoding/binary"
	"maps"
	"math/bits"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/perf"
)

// perf.data version 1 ("PERFFILE", perf before 2012) has no fixture: these
// tests make version 1 files from version 2 recordings (hwprof's own, and
// perf record's when perf can record here), changing what version 1 files
// differ in as perf's reader sees them (perf_file_header__read,
// check_magic_endian and read_attr in tools/perf/util/header.c): the
// magic, an attr entry size among PERF_ATTR_SIZE_VER0..4 plus 16 (perf
// refuses others), attrs read one after the other by their own size, and
// the 72-byte header of the oldest files without feature bits. The Reader
// must count what it counts in the original, and what perf report --stats
// counts in the version 1 file.

// v1Shape says how toV1 writes a version 1 file.
type v1Shape struct {
	name       string
	attrLen    int    // bytes of each attr written (its size field says so, or 0 if zeroSize)
	zeroSize   bool   // write size 0 in the attrs (perf then reads PERF_ATTR_SIZE_VER0 bytes)
	entrySize  uint64 // the header's attr entry size; the attrs section is that many bytes per attr
	headerSize uint64 // 104, or 72 for the files before feature bits
}

var v1Shapes = []v1Shape{
	{name: "features", attrLen: perf.AttrSizeVer4, entrySize: perf.AttrSizeVer4 + fileSectionSize, headerSize: fileHeaderSize},
	{name: "oldest", attrLen: perf.AttrSizeVer3, entrySize: perf.AttrSizeVer3 + fileSectionSize, headerSize: fileHeaderSizeV1},
	{name: "abi0", attrLen: perf.AttrSizeVer0, zeroSize: true, entrySize: perf.AttrSizeVer0 + fileSectionSize, headerSize: fileHeaderSize},
	// Entries shorter than the header's entry size: perf reads them one
	// after the other by their own size, and only counts them by the
	// header's.
	{name: "short entries", attrLen: perf.AttrSizeVer1, entrySize: perf.AttrSizeVer4 + fileSectionSize, headerSize: fileHeaderSize},
}

// toV1 returns the version 2 file-mode recording v2 as a version 1 file
// of shape s: the attrs, rewritten, are appended at the end of the file,
// and the header changed; the data and feature sections stay where they
// are.
func toV1(t testing.TB, v2 []byte, s v1Shape) []byte {
	t.Helper()
	le := binary.LittleEndian
	if string(v2[:8]) != magic || le.Uint64(v2[8:]) != fileHeaderSize {
		t.Fatalf("not a version 2 file-mode recording: %q", v2[:16])
	}
	entry := le.Uint64(v2[16:])
	attrs := Section{le.Uint64(v2[24:]), le.Uint64(v2[32:])}
	out := bytes.Clone(v2)
	for len(out)%8 != 0 {
		out = append(out, 0)
	}
	at := uint64(len(out))
	n := attrs.Size / entry
	for i := range n {
		e := v2[attrs.Offset+i*entry : attrs.Offset+(i+1)*entry]
		a := make([]byte, s.attrLen)
		copy(a, e) // the fields past attrLen are dropped
		size := uint32(s.attrLen)
		if s.zeroSize {
			size = 0
		}
		le.PutUint32(a[4:], size)
		out = append(out, a...)
		out = append(out, e[entry-fileSectionSize:]...) // the ids section
	}
	// Pad to the size the header gives (bytes perf never reads).
	for uint64(len(out)) < at+n*s.entrySize {
		out = append(out, 0xa5)
	}
	copy(out, magicV1)
	le.PutUint64(out[8:], s.headerSize)
	le.PutUint64(out[16:], s.entrySize)
	le.PutUint64(out[24:], at)
	le.PutUint64(out[32:], n*s.entrySize)
	if s.headerSize == fileHeaderSizeV1 {
		// Past a 72-byte header perf reads no feature bits, whatever the
		// bytes are.
		for i := fileHeaderSizeV1; i < fileHeaderSize; i++ {
			out[i] = 0xff
		}
	}
	return out
}

// v1Sources returns version 2 recordings to make version 1 files of: one
// hwprof writes (two events, so that the attrs are several), and one of
// perf record when perf can record here.
func v1Sources(t *testing.T) map[string]string {
	t.Helper()
	st := perf.SampleIdentifier | perf.SampleIP | perf.SampleTID | perf.SampleTime | perf.SampleCPU | perf.SamplePeriod
	clock := cpuClockAttr(st)
	clock.Flags |= perf.FlagExcludeKernel | perf.FlagExcludeHV
	task := clock
	task.Config = perf.SWTaskClock
	task.Flags &^= perf.FlagMmap | perf.FlagComm | perf.FlagMmap2 | perf.FlagCommExec
	ids := []uint64{101, 102, 201, 202, 203}
	path, _ := writeRecording(t, synthetic{
		attrs: []EventAttr{
			{Attr: clock, IDs: ids[:2], Name: "cpu-clock:u"},
			{Attr: task, IDs: ids[2:], Name: "task-clock:u"},
		},
		samples: 700,
		idOf: func(i int) uint64 {
			if i < 0 {
				return ids[0]
			}
			return ids[i%len(ids)]
		},
	})
	src := map[string]string{"hwprof": path}
	if p, err := exec.LookPath("perf"); err != nil {
		t.Logf("perf is not installed: no perf record source")
	} else {
		perfPath := filepath.Join(t.TempDir(), "perf.data")
		cmd := exec.Command(p, "record", "-q", "-e", "cpu-clock", "-c", "50000", "-g", "-o", perfPath,
			"--", "dd", "if=/dev/zero", "of=/dev/null", "bs=4k", "count=50000")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Logf("perf record cannot record here (%v: %s): no perf record source", err, out)
		} else {
			src["perf"] = perfPath
		}
	}
	return src
}

func TestReadsVersion1(t *testing.T) {
	t.Parallel() // perf record waits about a second before it exits; nothing shared but the recordings read
	for srcName, path := range v1Sources(t) {
		v2, err := os.ReadFile(path)
		must(t, err)
		orig, origSamples, err, errs := readAll(t, path)
		if err != nil || len(errs) > 0 || origSamples == 0 {
			t.Fatalf("%s: the version 2 original: %d samples, %v %v", srcName, origSamples, err, errs)
		}
		for _, s := range v1Shapes {
			t.Run(srcName+"/"+s.name, func(t *testing.T) {
				v1 := filepath.Join(t.TempDir(), "v1.data")
				must(t, os.WriteFile(v1, toV1(t, v2, s), 0o644))
				r, n, err, errs := readAll(t, v1)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range errs {
					t.Error(e)
				}
				if r.Header().Version != 1 {
					t.Errorf("version %d, want 1", r.Header().Version)
				}
				if n != origSamples || !maps.Equal(r.Counts(), orig.Counts()) {
					t.Errorf("%d samples, counts %v; the version 2 original %d, %v", n, r.Counts(), origSamples, orig.Counts())
				}
				if len(r.Warnings()) > 0 {
					t.Errorf("warnings: %q", r.Warnings())
				}
				sameAttrs(t, r, orig, s.headerSize == fileHeaderSize)
				t.Run("perf report --stats", func(t *testing.T) {
					checkAgainstPerf(t, v1) // skips when perf is not installed
				})
			})
		}
	}
}

// sameAttrs checks that the version 1 file has the original's events,
// with its names when the feature sections were kept.
func sameAttrs(t *testing.T, r, orig *Reader, names bool) {
	t.Helper()
	got, want := r.Attrs(), orig.Attrs()
	if len(got) != len(want) {
		t.Fatalf("%d attrs, the original %d", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Attr.Type != w.Attr.Type || g.Attr.Config != w.Attr.Config || g.Attr.SampleType != w.Attr.SampleType ||
			g.Attr.Flags != w.Attr.Flags || g.Attr.SamplePeriod != w.Attr.SamplePeriod || !bytes.Equal(u64Bytes(g.IDs), u64Bytes(w.IDs)) {
			t.Errorf("attr %d: %+v, the original %+v", i, g, w)
		}
		if names && g.Name != w.Name {
			t.Errorf("attr %d: name %q, the original %q", i, g.Name, w.Name)
		}
	}
}

func u64Bytes(v []uint64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], x)
	}
	return b
}

// A version 1 file with an entry size perf does not take, or one that is
// right only byte-swapped (perf's test for a big-endian version 1 file),
// is refused with a message saying which; a version 1 pipe-mode file is
// read like a version 2 one.
func TestVersion1Refused(t *testing.T) {
	one := synthetic{
		attrs:   []EventAttr{{Attr: cpuClockAttr(perf.SampleIP | perf.SampleTID | perf.SampleTime | perf.SamplePeriod), Name: "cpu-clock"}},
		samples: 50,
		idOf:    func(int) uint64 { return 0 },
	}
	path, _ := writeRecording(t, one)
	v2, err := os.ReadFile(path)
	must(t, err)
	good := toV1(t, v2, v1Shapes[0])
	le := binary.LittleEndian
	bigEndian := bytes.Clone(good)
	for off := 8; off < fileHeaderSizeV1; off += 8 {
		le.PutUint64(bigEndian[off:], bits.ReverseBytes64(le.Uint64(bigEndian[off:])))
	}
	current := bytes.Clone(good)
	le.PutUint64(current[16:], perf.AttrSizeVer8+fileSectionSize)
	badSize := bytes.Clone(good)
	attrs := le.Uint64(good[24:])
	le.PutUint32(badSize[attrs+4:], 40)
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"big-endian", bigEndian, "big-endian perf.data version 1"},
		{"entry size of a newer perf", current, "attr entry size 152 at offset 16"},
		{"attr size below VER0", badSize, "size 40"},
		{"cut inside the attrs", good[:attrs+100], "attr"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _, err := readBytes(tc.in)
			if r != nil || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("open: %v, want %q", err, tc.want)
			}
		})
	}

	pipe := writePipe(t, one, Features{}, nil)
	copy(pipe, magicV1)
	r, err := NewPipeReader(bytes.NewReader(pipe))
	must(t, err)
	samples := 0
	for r.Next() {
		if r.Record().Type() == perf.RecordSample {
			samples++
		}
	}
	if r.Err() != nil || samples != 50 || r.Header().Version != 1 || !r.Header().Pipe {
		t.Errorf("version 1 pipe: %d samples, version %d, pipe %v, %v", samples, r.Header().Version, r.Header().Pipe, r.Err())
	}
}
