package perfdata

import (
	"bytes"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/perf"
)

// writePipe writes the synthetic recording s as a pipe-mode stream.
func writePipe(t *testing.T, s synthetic, f Features, bids []BuildID) []byte {
	t.Helper()
	var out bytes.Buffer
	w, err := NewPipeWriter(&out, s.attrs, f)
	must(t, err)
	writeSynthetic(t, w, s, textMapping(t, "/usr/bin/true", testBase), s.samples)
	must(t, w.WriteFinishedRound())
	must(t, w.Close(Features{BuildIDs: bids}))
	return out.Bytes()
}

// The stream is what perf record -o - writes: the pipe header, ATTR
// records, FEATURE records ending with the HEADER_LAST_FEATURE mark, then
// the records; hwprof's Reader reads it all back.
func TestPipeWriterRoundTrip(t *testing.T) {
	const n = 300
	attrs := testAttrs()
	s := synthetic{attrs: attrs, samples: n, idOf: func(i int) uint64 { return 17 + uint64(max(i, 0)%2) }}
	f := Features{Hostname: "host", OSRelease: "6.1", Cmdline: []string{"hwprof", "record", "-o", "-"},
		NrCPUsOnline: 2, NrCPUsAvail: 2, SampleTimeFirst: 0}
	bid := BuildID{PID: -1, Misc: perf.MiscUser, ID: testID(bytes.Repeat([]byte{0xab}, 20)), Path: "/usr/bin/true"}
	b := writePipe(t, s, f, []BuildID{bid})

	if string(b[:8]) != magic || le.Uint64(b[8:]) != 16 {
		t.Fatalf("stream starts %q %d, want the pipe header", b[:8], le.Uint64(b[8:]))
	}
	// Walk the records: every one 8-aligned; the order perf writes.
	var types []perf.RecordType
	var feats []uint64
	for off := 16; off < len(b); {
		typ, size := perf.RecordType(le.Uint32(b[off:])), int(le.Uint16(b[off+6:]))
		if size < 8 || size%8 != 0 || off+size > len(b) {
			t.Fatalf("record %v at %#x: size %d", typ, off, size)
		}
		if typ == perf.RecordHeaderFeature {
			feats = append(feats, le.Uint64(b[off+8:]))
		}
		if len(types) == 0 || types[len(types)-1] != typ {
			types = append(types, typ)
		}
		off += size
	}
	if want := []perf.RecordType{perf.RecordHeaderAttr, perf.RecordHeaderFeature, perf.RecordEventUpdate}; !slices.Equal(types[:3], want) {
		t.Errorf("stream begins with %v, want %v", types[:3], want)
	}
	if last := types[len(types)-1]; last != perf.RecordHeaderBuildID {
		t.Errorf("stream ends with %v, want the build-ids", last)
	}
	wantFeats := []uint64{uint64(FeatHostname), uint64(FeatOSRelease), uint64(FeatNrCPUs), uint64(FeatCmdline), uint64(FeatEventDesc), uint64(pipeFeatureLast)}
	if !slices.Equal(feats, wantFeats) {
		t.Errorf("features %v, want %v (no BUILD_ID section, the last-feature mark at the end)", feats, wantFeats)
	}

	r, err := NewPipeReader(bytes.NewReader(b))
	must(t, err)
	samples := 0
	for r.Next() {
		if r.Record().Type() == perf.RecordSample {
			samples++
		}
	}
	must(t, r.Err())
	if samples != n || !r.Header().Pipe {
		t.Errorf("read %d samples (pipe %v), want %d", samples, r.Header().Pipe, n)
	}
	if a := r.Attrs(); len(a) != 1 || a[0].Name != "cpu-clock" || !slices.Equal(a[0].IDs, []uint64{17, 18}) {
		t.Errorf("attrs %+v", a)
	}
	got := r.Features()
	if got.Hostname != "host" || got.OSRelease != "6.1" || !slices.Equal(got.Cmdline, f.Cmdline) || got.NrCPUsOnline != 2 {
		t.Errorf("features %+v", got.Features)
	}
	if len(got.BuildIDs) != 1 || got.BuildIDs[0].Path != bid.Path || got.BuildIDs[0].ID != bid.ID {
		t.Errorf("build-ids %+v, want %+v", got.BuildIDs, bid)
	}
	for _, w := range r.Warnings() {
		t.Errorf("reader warning: %s", w)
	}
}

// perf itself reads the stream from standard input, as in
// `hwprof record -o - | perf report -i -`, without a warning, and sees
// every sample.
func TestPerfReadsPipeStream(t *testing.T) {
	perfTool(t)
	const n = 500
	st := perf.SampleIdentifier | perf.SampleIP | perf.SampleTID | perf.SampleTime | perf.SampleCPU | perf.SamplePeriod
	clock := cpuClockAttr(st)
	clock.Flags |= perf.FlagExcludeKernel | perf.FlagExcludeHV
	task := clock
	task.Config = perf.SWTaskClock
	s := synthetic{
		attrs:   []EventAttr{{Attr: clock, IDs: []uint64{21, 22}, Name: "cpu-clock:u"}, {Attr: task, IDs: []uint64{31, 32}, Name: "task-clock:u"}},
		samples: n,
		idOf:    func(i int) uint64 { return []uint64{21, 22, 31, 32}[max(i, 0)%4] },
	}
	b := writePipe(t, s, CollectFeatures(), []BuildID{trueBuildID(t)})

	out, stderr := runPerfStdin(t, b, "script", "-F", "comm,event,ip,dso", "-i", "-")
	checkQuiet(t, "perf script -i -", stderr)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != n {
		t.Fatalf("perf script -i -: %d lines, want %d", len(lines), n)
	}
	for _, ev := range []string{"cpu-clock:u", "task-clock:u"} {
		if c := strings.Count(out, ev); c != n/2 {
			t.Errorf("perf script: %d samples of %s, want %d", c, ev, n/2)
		}
	}
	if !strings.Contains(lines[0], "/usr/bin/true") {
		t.Errorf("perf script line %q: want the dso", lines[0])
	}
	rep, stderr := runPerfStdin(t, b, "report", "--stdio", "-i", "-")
	checkQuiet(t, "perf report -i -", stderr)
	if !strings.Contains(rep, "of event 'cpu-clock:u'") || !strings.Contains(rep, "Samples: 250") {
		t.Errorf("perf report -i - does not show the events' samples:\n%s", rep)
	}
	hdr, _ := runPerfStdin(t, b, "report", "--header-only", "-i", "-")
	for _, want := range []string{"hostname : ", "cmdline : ", "event : name = cpu-clock:u"} {
		if !strings.Contains(hdr, want) {
			t.Errorf("perf report --header-only lacks %q:\n%s", want, hdr)
		}
	}
}

// runPerfStdin runs perf with in on its standard input (a pipe).
func runPerfStdin(t *testing.T, in []byte, args ...string) (string, string) {
	t.Helper()
	cmd := exec.Command(perfTool(t), args...)
	cmd.Env = append(cmd.Environ(), "PAGER=cat", "PERF_PAGER=cat")
	cmd.Stdin = bytes.NewReader(in) // not an *os.File: exec feeds it through a pipe
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("perf %s: %v\nstderr:\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.String(), errb.String()
}

func TestPipeWriterErrors(t *testing.T) {
	if _, err := NewPipeWriter(&bytes.Buffer{}, nil, Features{}); err == nil {
		t.Error("no attrs: no error")
	}
	many := testAttrs()
	many[0].IDs = make([]uint64, 9000)
	if _, err := NewPipeWriter(&bytes.Buffer{}, many, Features{}); err == nil || !strings.Contains(err.Error(), "ids") {
		t.Errorf("9000 ids in one ATTR record: %v, want an error", err)
	}
	// A stream that fails: the error is returned, and kept.
	f, err := os.Open(os.DevNull) // read-only: writes fail
	must(t, err)
	defer f.Close()
	if _, err := NewPipeWriter(f, testAttrs(), Features{}); err == nil {
		t.Error("writing into a read-only file: no error")
	}
}
