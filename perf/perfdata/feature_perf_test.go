package perfdata

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/buildid"
	"github.com/hwprof/hwprof/perf"
)

// These tests take perf record itself as the reference: they record a
// short run with perf, decode its header and feature sections with the
// minimal decoders below, encode the same facts with this package and
// compare the bytes.

// perfRecord records `sh -c <loop>` with perf record -e cpu-clock:u and
// returns the file, or skips when perf record cannot run here.
func perfRecord(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "perf.data")
	cmd := exec.Command(perfTool(t), "record", "-o", path, "-e", "cpu-clock:u", "-c", "100000", "--",
		"/bin/sh", "-c", "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("perf record cannot run here: %v\n%s", err, out)
	}
	return path
}

// decodeStrings decodes n feature strings.
func decodeStrings(b []byte, n int) ([]string, []byte, error) {
	var out []string
	for range n {
		s, rest, err := readString(b)
		if err != nil {
			return nil, nil, err
		}
		out, b = append(out, s), rest
	}
	return out, b, nil
}

// decodeBuildIDs decodes a HEADER_BUILD_ID section.
func decodeBuildIDs(b []byte) ([]BuildID, error) {
	var out []BuildID
	for len(b) > 0 {
		if len(b) < 36 {
			return nil, fmt.Errorf("short build-id record")
		}
		size := int(le.Uint16(b[6:]))
		if size < 36 || size > len(b) {
			return nil, fmt.Errorf("build-id record of %d bytes", size)
		}
		misc := le.Uint16(b[4:])
		n := buildIDSize
		if misc&miscBuildIDSize != 0 {
			n = int(b[12+buildIDSize])
		}
		path, _, _ := bytes.Cut(b[36:size], []byte{0})
		out = append(out, BuildID{
			PID:  int32(le.Uint32(b[8:])),
			Misc: misc &^ miscBuildIDSize,
			ID:   testID(b[12 : 12+n]),
			Path: string(path),
		})
		b = b[size:]
	}
	return out, nil
}

// decodeEventDesc decodes a HEADER_EVENT_DESC section.
func decodeEventDesc(b []byte) ([]eventDesc, error) {
	if len(b) < 8 {
		return nil, fmt.Errorf("short event desc")
	}
	n, sz := int(le.Uint32(b)), int(le.Uint32(b[4:]))
	b = b[8:]
	var out []eventDesc
	for range n {
		if len(b) < sz+4 {
			return nil, fmt.Errorf("short event")
		}
		e := eventDesc{attr: b[:sz]}
		nids := int(le.Uint32(b[sz:]))
		name, rest, err := readString(b[sz+4:])
		if err != nil {
			return nil, err
		}
		e.name = name
		if len(rest) < 8*nids {
			return nil, fmt.Errorf("short ids")
		}
		for i := range nids {
			e.ids = append(e.ids, le.Uint64(rest[8*i:]))
		}
		out, b = append(out, e), rest[8*nids:]
	}
	return out, nil
}

// decodeFeatures decodes the sections this package writes.
func decodeFeatures(t *testing.T, secs map[Feature][]byte) (Features, []eventDesc) {
	t.Helper()
	var f Features
	str := func(feat Feature) string {
		b, ok := secs[feat]
		if !ok {
			return ""
		}
		s, _, err := readString(b)
		must(t, err)
		return s
	}
	f.Hostname, f.OSRelease, f.Version = str(FeatHostname), str(FeatOSRelease), str(FeatVersion)
	f.Arch, f.CPUDesc, f.CPUID = str(FeatArch), str(FeatCPUDesc), str(FeatCPUID)
	if b := secs[FeatNrCPUs]; len(b) == 8 {
		f.NrCPUsAvail, f.NrCPUsOnline = le.Uint32(b), le.Uint32(b[4:])
	}
	if b := secs[FeatTotalMem]; len(b) == 8 {
		f.TotalMemKB = le.Uint64(b)
	}
	if b := secs[FeatSampleTime]; len(b) == 16 {
		f.SampleTimeFirst, f.SampleTimeLast = le.Uint64(b), le.Uint64(b[8:])
	}
	if b, ok := secs[FeatCmdline]; ok && len(b) >= 4 {
		argv, _, err := decodeStrings(b[4:], int(le.Uint32(b)))
		must(t, err)
		f.Cmdline = argv
	}
	bids, err := decodeBuildIDs(secs[FeatBuildID])
	must(t, err)
	f.BuildIDs = bids
	events, err := decodeEventDesc(secs[FeatEventDesc])
	must(t, err)
	return f, events
}

// TestAgainstPerfRecord records once with perf and checks this package's
// encodings and host facts against what perf wrote.
func TestAgainstPerfRecord(t *testing.T) {
	t.Parallel() // perf record waits about a second before it exits; nothing shared but the recordings read
	p := parseFile(t, perfRecord(t))
	t.Run("feature encoding", func(t *testing.T) { testFeatureEncoding(t, p) })
	t.Run("layout", func(t *testing.T) { testLayout(t, p) })
	t.Run("collect features", func(t *testing.T) { testCollectFeatures(t, p) })
	t.Run("build-ids", func(t *testing.T) { testReadBuildID(t, p) })
}

// testFeatureEncoding decodes perf's feature sections and encodes the
// same facts again: the bytes must be identical.
func testFeatureEncoding(t *testing.T, p parsedFile) {
	f, events := decodeFeatures(t, p.features)
	if len(f.BuildIDs) == 0 || len(events) != 1 || f.Hostname == "" || len(f.Cmdline) == 0 {
		t.Fatalf("perf's file decoded to %+v, %d events", f, len(events))
	}
	secs, err := encodeFeatures(&f, events, false)
	must(t, err)
	for _, s := range secs {
		if want := p.features[s.feat]; !bytes.Equal(s.data, want) {
			t.Errorf("%v: encoded\n%s\nperf record wrote\n%s", s.feat, hex.Dump(s.data), hex.Dump(want))
		}
	}
	if len(secs) != 12 {
		t.Errorf("encoded %d sections, want the 12 this package writes", len(secs))
	}
}

// testLayout lays out perf's attrs and ids: the header and the attrs
// section must be perf's.
func testLayout(t *testing.T, p parsedFile) {
	var attrs []EventAttr
	for i, a := range p.attrs {
		attrs = append(attrs, EventAttr{Attr: a, IDs: p.ids[i], Name: "cpu-clock:u"})
	}
	_, hdr, head, err := layout(attrs)
	must(t, err)
	if hdr.Size != p.hdr.Size || hdr.AttrSize != p.hdr.AttrSize || hdr.Attrs != p.hdr.Attrs || hdr.Data.Offset != p.hdr.Data.Offset {
		t.Errorf("layout %+v, perf record wrote %+v", hdr, p.hdr)
	}
	back, err := parseBytes(append(head, make([]byte, 64)...))
	must(t, err)
	if !slices.EqualFunc(back.attrs, p.attrs, func(a, b perf.Attr) bool { return a == b }) {
		t.Errorf("attrs differ: %+v vs %+v", back.attrs, p.attrs)
	}
}

// testCollectFeatures compares the host facts with perf's.
func testCollectFeatures(t *testing.T, p parsedFile) {
	perfs, _ := decodeFeatures(t, p.features)
	ours := CollectFeatures()
	for _, c := range []struct {
		what      string
		got, want any
	}{
		{"hostname", ours.Hostname, perfs.Hostname},
		{"os release", ours.OSRelease, perfs.OSRelease},
		{"arch", ours.Arch, perfs.Arch},
		{"cpudesc", ours.CPUDesc, perfs.CPUDesc},
		{"cpuid", ours.CPUID, perfs.CPUID},
		{"nrcpus online", ours.NrCPUsOnline, perfs.NrCPUsOnline},
		{"nrcpus avail", ours.NrCPUsAvail, perfs.NrCPUsAvail},
		{"total memory", ours.TotalMemKB, perfs.TotalMemKB},
	} {
		if c.got != c.want {
			t.Errorf("%s: CollectFeatures %v, perf record %v", c.what, c.got, c.want)
		}
	}
	if !strings.HasPrefix(ours.Version, "hwprof ") || len(ours.Cmdline) == 0 {
		t.Errorf("version %q, cmdline %q", ours.Version, ours.Cmdline)
	}
}

// testReadBuildID: buildid.Read must agree with the build-ids perf record
// found for the objects it sampled.
func testReadBuildID(t *testing.T, p parsedFile) {
	perfs, _ := decodeFeatures(t, p.features)
	checked := 0
	for _, b := range perfs.BuildIDs {
		if strings.HasPrefix(b.Path, "[") {
			continue // kernel, vdso: not files
		}
		id, err := buildid.Read(b.Path)
		if err != nil {
			t.Errorf("buildid.Read(%s): %v", b.Path, err)
			continue
		}
		if id != b.ID {
			t.Errorf("buildid.Read(%s) = %x, perf: %x", b.Path, id, b.ID)
		}
		checked++
	}
	if checked == 0 {
		t.Errorf("perf recorded no user build-ids to compare: %+v", perfs.BuildIDs)
	}
}
