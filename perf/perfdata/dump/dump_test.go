package dump

import (
	"bytes"
	"encoding/binary"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/perfdata"
	"github.com/hwprof/hwprof/perf/synth"
)

var le = binary.LittleEndian

// record returns a record of type t with the body after its header.
func record(t perf.RecordType, misc uint16, body []byte) []byte {
	b := make([]byte, 8, 8+len(body))
	le.PutUint32(b, uint32(t))
	le.PutUint16(b[4:], misc)
	b = append(b, body...)
	le.PutUint16(b[6:], uint16(len(b)))
	return b
}

// write makes a recording of one cpu-clock event: a COMM of pid 42, a
// sample with a two-entry callchain, and a record too short to decode
// (the writer adds an EVENT_UPDATE naming the event).
func write(t *testing.T) string {
	t.Helper()
	const st = perf.SampleIP | perf.SampleTID | perf.SampleTime | perf.SamplePeriod | perf.SampleCallchain
	attr := perf.Attr{Type: perf.TypeSoftware, Config: perf.SWCPUClock, SamplePeriod: 1000, SampleType: st,
		Flags: perf.FlagComm | perf.FlagSampleIDAll}
	path := filepath.Join(t.TempDir(), "perf.data")
	w, err := perfdata.Create(path, []perfdata.EventAttr{{Attr: attr, IDs: []uint64{7}, Name: "cpu-clock"}})
	if err != nil {
		t.Fatal(err)
	}
	comm := le.AppendUint32(nil, 42)
	comm = le.AppendUint32(comm, 42)
	comm = append(comm, "prog\x00\x00\x00\x00"...)
	comm = synth.AppendSampleID(comm, st, synth.SampleID{PID: 42, TID: 42, Time: 1_000_000_001})
	s := le.AppendUint64(nil, 0x401000)   // ip
	s = le.AppendUint32(s, 42)            // pid
	s = le.AppendUint32(s, 43)            // tid
	s = le.AppendUint64(s, 2_500_000_000) // time
	s = le.AppendUint64(s, 1000)          // period
	s = le.AppendUint64(s, 2)             // callchain nr
	s = le.AppendUint64(s, 0x401000)
	s = le.AppendUint64(s, 0x402345)
	short := record(perf.RecordSample, perf.MiscUser, le.AppendUint64(nil, 0x401000))
	for _, rec := range [][]byte{record(perf.RecordComm, 0, comm), record(perf.RecordSample, perf.MiscUser, s), short} {
		if err := w.WriteRecord(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(perfdata.Features{Hostname: "box", OSRelease: "6.1.0"}); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRecords(t *testing.T) {
	r, err := perfdata.Open(write(t))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.SetFileOrder(true)
	var out bytes.Buffer
	undecodable, err := Records(&out, r)
	if err != nil {
		t.Fatal(err)
	}
	if undecodable[perf.RecordSample] != 1 {
		t.Errorf("undecodable samples counted: %v, want the short one", undecodable)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	t.Logf("\n%s", out.String())
	var comm, sample, bad, chain []string
	for _, l := range lines {
		switch {
		case strings.Contains(l, " COMM "):
			comm = append(comm, l)
		case strings.Contains(l, " SAMPLE ") && strings.Contains(l, "undecodable"):
			bad = append(bad, l)
		case strings.Contains(l, " SAMPLE "):
			sample = append(sample, l)
		case strings.HasPrefix(l, " "):
			chain = append(chain, l)
		}
	}
	if len(comm) != 1 || !strings.Contains(comm[0], "1.000000001") || !strings.Contains(comm[0], "prog") {
		t.Errorf("COMM line %q: want its time as seconds.nanoseconds and its name", comm)
	}
	if len(sample) != 1 || !strings.Contains(sample[0], "2.500000000") || !strings.Contains(sample[0], "0x401000") ||
		!strings.Contains(sample[0], "42/43") {
		t.Errorf("SAMPLE line %q: want time, ip and pid/tid", sample)
	}
	if len(chain) == 0 || !strings.Contains(strings.Join(chain, "\n"), "0x402345") {
		t.Errorf("callchain lines %q: want the caller 0x402345 indented under the sample", chain)
	}
	if len(bad) != 1 {
		t.Errorf("the short sample: %q, want one line saying it is undecodable", bad)
	}
	for _, l := range append(comm, sample...) {
		if !strings.HasPrefix(l, "0x") {
			t.Errorf("line %q does not start with its file offset", l)
		}
	}
}

func TestStats(t *testing.T) {
	r, err := perfdata.Open(write(t))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.SetFileOrder(true)
	var out bytes.Buffer
	if err := Stats(&out, r, "x.data"); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"file x.data (file mode)", "hostname       box", "os release     6.1.0",
		"events 1", "0 cpu-clock: type", "period 1000 ids 1", "SAMPLE           2", "COMM             1", "EVENT_UPDATE     1", "samples 2", "records 4"} {
		if !strings.Contains(got, want) {
			t.Errorf("stats lack %q:\n%s", want, got)
		}
	}
}
