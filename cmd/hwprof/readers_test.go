package main

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/perfdata"
)

// TestReadersSayTheSame damages one recording in the ways files get
// damaged (a flipped byte in a COMPRESSED record, a COMPRESSED record that
// is not zstd, a file cut in the middle of its data, a recording whose
// writer was killed, a sample record that does not decode) and reads it with every reading command: dump,
// report (text and JSON), script and flamegraph. Each prints what it can
// read and exits 1; each prints every warning once, as
// "hwprof: warning: ..."; all print the reader's warnings (dump's), the
// others adding only the notes they print on the intact recording
// (symbolization); and the JSON report's recording.warnings are exactly
// the warnings it printed, with incomplete true, and its samples and lost
// count what was read and what was lost. The intact recordings
// give exit 0, no warning from dump, and incomplete false.
func TestReadersSayTheSame(t *testing.T) {
	tmp := t.TempDir()
	syn := goldenSynthetic(t, tmp)
	plain, err := os.ReadFile(syn.file)
	if err != nil {
		t.Fatal(err)
	}
	zpath := filepath.Join(tmp, "compressed.data")
	zoffs := writeCompressed(t, syn.file, zpath)
	comp, err := os.ReadFile(zpath)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	dataOff, dataSize := le.Uint64(plain[40:]), le.Uint64(plain[48:])

	write := func(name string, b []byte) string {
		p := filepath.Join(tmp, name+".data")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// The third COMPRESSED record holds samples 10 to 19.
	third := zoffs[2]
	flipped := slices.Clone(comp)
	flipped[third+8+int(le.Uint16(comp[third+6:])-8)/2] ^= 0xff
	garbage := slices.Clone(comp)
	for i := third + 8; i < third+int(le.Uint16(comp[third+6:])); i++ {
		garbage[i] = byte(i)
	}
	// Cut in the middle of the data section: the header still covers it.
	truncated := slices.Clone(plain[:dataOff+dataSize/2])
	// Killed: the header's data size is that of the writer's first
	// header (0) and there are no feature sections; the last record is
	// cut.
	killed := slices.Clone(plain[:dataOff+dataSize-5])
	le.PutUint64(killed[48:], 0)
	clear(killed[72:104])

	// A sample whose callchain claims more entries than the record holds:
	// it does not decode, and is skipped (and counted as lost).
	undecodable := slices.Clone(plain)
	for at := dataOff; at < dataOff+dataSize; at += uint64(le.Uint16(plain[at+6:])) {
		if perf.RecordType(le.Uint32(plain[at:])) == perf.RecordSample {
			le.PutUint64(undecodable[at+48:], 1000) // after ip, pid/tid, time, cpu, period
			break
		}
	}

	intact := map[string]string{"plain": syn.file, "compressed": zpath}
	// samples and lost: what the JSON report counts (-1: not checked)
	damaged := []struct {
		name, path, want string
		samples, lost    int
	}{
		{"flipped", write("flipped", flipped), "COMPRESSED record", 30, 0},
		{"lost-compressed", write("lost-compressed", garbage), "COMPRESSED record", 30, 0},
		{"truncated", write("truncated", truncated), "truncated", -1, 0},
		{"killed", write("killed", killed), "cut short", 39, 0},
		{"undecodable-sample", write("undecodable", undecodable), "1 sample records could not be decoded", 39, 1},
	}
	// The notes each command prints on the intact recordings.
	notes := map[string]map[string]bool{}
	for base, path := range intact {
		for _, c := range readerCommands {
			r := hwprof(t, c.args(path, syn.args)...)
			ws := checkWarnings(t, base+" "+c.name, r)
			if r.code != 0 {
				t.Errorf("%s %s: exit %d, want 0\n%s", c.name, base, r.code, r.stderr)
			}
			if c.name == "dump" && len(ws) > 0 {
				t.Errorf("dump %s: warnings %q on an intact recording", base, ws)
			}
			if c.name == "report-json" {
				if rec := checkJSONWarnings(t, base, r, ws, false); rec.Samples != 40 || rec.Lost != 0 {
					t.Errorf("report-json %s: samples %d, lost %d; want 40, 0", base, rec.Samples, rec.Lost)
				}
			}
			if notes[c.name] == nil {
				notes[c.name] = map[string]bool{}
			}
			for _, w := range ws {
				notes[c.name][w] = true
			}
		}
	}
	for _, d := range damaged {
		var reader []string // dump's warnings: the reader's
		for _, c := range readerCommands {
			r := hwprof(t, c.args(d.path, syn.args)...)
			ws := checkWarnings(t, d.name+" "+c.name, r)
			t.Logf("%s %s: exit %d, %d bytes of output, warnings %q", c.name, d.name, r.code, len(r.stdout), ws)
			if r.code != 1 {
				t.Errorf("%s %s: exit %d, want 1 (data lost)\n%s", c.name, d.name, r.code, r.stderr)
			}
			if r.stdout == "" {
				t.Errorf("%s %s: prints nothing of what could be read", c.name, d.name)
			}
			if c.name == "dump" {
				reader = ws
				if !strings.Contains(strings.Join(ws, "\n"), d.want) {
					t.Errorf("dump %s: warnings %q do not say %q", d.name, ws, d.want)
				}
				continue
			}
			for _, w := range reader {
				if !slices.Contains(ws, w) {
					t.Errorf("%s %s: does not print the reader's warning %q (dump does)", c.name, d.name, w)
				}
			}
			for _, w := range ws {
				if !slices.Contains(reader, w) && !notes[c.name][w] {
					t.Errorf("%s %s: warning %q is neither the reader's nor one it prints on the intact recording", c.name, d.name, w)
				}
			}
			if c.name == "report-json" {
				rec := checkJSONWarnings(t, d.name, r, ws, true)
				if d.samples >= 0 && rec.Samples != uint64(d.samples) || rec.Lost != uint64(d.lost) {
					t.Errorf("report-json %s: samples %d, lost %d; want %d, %d", d.name, rec.Samples, rec.Lost, d.samples, d.lost)
				}
			}
		}
	}
}

// jsonCounts is what checkJSONWarnings returns of the JSON recording.
type jsonCounts struct {
	Warnings   []string
	Incomplete bool
	Samples    uint64
	Lost       uint64
}

// readerCommands are the commands that read a recording, with the
// arguments that find its objects.
var readerCommands = []struct {
	name string
	args func(path string, objs []string) []string
}{
	{"dump", func(p string, _ []string) []string { return []string{"dump", "-i", p} }},
	{"report", func(p string, o []string) []string { return append([]string{"report", "-i", p}, o...) }},
	{"report-json", func(p string, o []string) []string {
		return append([]string{"report", "--format", "json", "-i", p}, o...)
	}},
	{"script", func(p string, o []string) []string { return append([]string{"script", "-i", p}, o...) }},
	{"flamegraph", func(p string, o []string) []string { return append([]string{"flamegraph", "-i", p}, o...) }},
}

// checkWarnings checks that every line of r's stderr is a warning and
// that none is printed twice, and returns them (without the prefix).
func checkWarnings(t *testing.T, what string, r result) []string {
	t.Helper()
	var ws []string
	for _, l := range lines(r.stderr) {
		w, ok := strings.CutPrefix(l, "hwprof: warning: ")
		if !ok {
			t.Errorf("%s: stderr line %q is not a warning", what, l)
			continue
		}
		if slices.Contains(ws, w) {
			t.Errorf("%s: warning %q printed twice", what, w)
		}
		ws = append(ws, w)
	}
	return ws
}

// checkJSONWarnings checks that the JSON report's recording.warnings are
// the warnings printed (ws) and incomplete is as wanted.
func checkJSONWarnings(t *testing.T, what string, r result, ws []string, incomplete bool) jsonCounts {
	t.Helper()
	var j struct{ Recording jsonCounts }
	if err := json.Unmarshal([]byte(r.stdout), &j); err != nil {
		t.Errorf("%s: JSON report: %v", what, err)
		return j.Recording
	}
	if !slices.Equal(j.Recording.Warnings, ws) && len(ws)+len(j.Recording.Warnings) > 0 {
		t.Errorf("%s: JSON recording.warnings %q, stderr's %q", what, j.Recording.Warnings, ws)
	}
	if j.Recording.Incomplete != incomplete {
		t.Errorf("%s: JSON recording.incomplete %v, want %v", what, j.Recording.Incomplete, incomplete)
	}
	return j.Recording
}

// writeCompressed writes the records of the recording at src to dst as
// perf record -z does, in COMPRESSED records (each a zstd frame with a
// checksum): the side-band records in the first, then the samples ten by
// ten. It returns the offsets of the COMPRESSED records in dst.
func writeCompressed(t *testing.T, src, dst string) []int {
	t.Helper()
	r, err := perfdata.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.SetFileOrder(true)
	var side []byte
	var samples [][]byte
	for r.Next() {
		rec := r.Record()
		switch t := rec.Type(); {
		case t == perf.RecordSample:
			samples = append(samples, slices.Clone(rec.Raw))
		case t < perf.RecordHeaderAttr: // perf's own records are the writer's
			side = append(side, rec.Raw...)
		}
	}
	if err := r.Err(); err != nil || len(samples) < 40 {
		t.Fatalf("reading %s: %v, %d samples", src, err, len(samples))
	}
	chunks := [][]byte{side}
	for i := 0; i < len(samples); i += 10 {
		chunks = append(chunks, slices.Concat(samples[i:min(i+10, len(samples))]...))
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderCRC(true))
	if err != nil {
		t.Fatal(err)
	}
	w, err := perfdata.Create(dst, slices.Clone(r.Attrs()))
	if err != nil {
		t.Fatal(err)
	}
	var recs [][]byte
	for _, c := range chunks {
		z := enc.EncodeAll(c, nil)
		rec := binary.LittleEndian.AppendUint32(nil, uint32(perf.RecordCompressed))
		rec = binary.LittleEndian.AppendUint16(rec, 0)
		rec = binary.LittleEndian.AppendUint16(rec, uint16(8+len(z)))
		rec = append(rec, z...)
		if err := w.WriteRecord(rec); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	if err := w.Close(perfdata.Features{}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	var offs []int
	at := 0
	for _, rec := range recs {
		i := strings.Index(string(b[at:]), string(rec))
		if i < 0 {
			t.Fatalf("COMPRESSED record not found in %s", dst)
		}
		offs = append(offs, at+i)
		at += i + len(rec)
	}
	return offs
}
