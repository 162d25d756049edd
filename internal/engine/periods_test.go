package engine

import (
	"encoding/binary"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/perfdata"
	"github.com/hwprof/hwprof/profile"
)

// periodSample is one sample of a synthetic recording.
type periodSample struct {
	ev          int
	tid         uint32
	time, perio uint64
}

// writePeriodFile writes a recording of two cpu-clock-like events whose
// samples carry IP, TID, TIME, PERIOD and IDENTIFIER.
func writePeriodFile(t *testing.T, samples []periodSample) string {
	t.Helper()
	st := perf.SampleIdentifier | perf.SampleIP | perf.SampleTID | perf.SampleTime | perf.SamplePeriod
	attr := func(period uint64) perf.Attr {
		return perf.Attr{Type: perf.TypeSoftware, Config: perf.SWCPUClock, SamplePeriod: period,
			SampleType: st, Flags: perf.FlagSampleIDAll | perf.FlagExcludeKernel}
	}
	path := filepath.Join(t.TempDir(), "periods.data")
	w, err := perfdata.Create(path, []perfdata.EventAttr{
		{Attr: attr(1000), IDs: []uint64{11}, Name: "cpu-clock"},
		{Attr: attr(500), IDs: []uint64{22}, Name: "task-clock"},
	})
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	for _, s := range samples {
		rec := make([]byte, 8+5*8)
		le.PutUint32(rec[0:], uint32(perf.RecordSample))
		le.PutUint16(rec[4:], 2) // PERF_RECORD_MISC_USER
		le.PutUint16(rec[6:], uint16(len(rec)))
		le.PutUint64(rec[8:], []uint64{11, 22}[s.ev])
		le.PutUint64(rec[16:], 0x401000)
		le.PutUint32(rec[24:], 100)
		le.PutUint32(rec[28:], s.tid)
		le.PutUint64(rec[32:], s.time)
		le.PutUint64(rec[40:], s.perio)
		if err := w.WriteRecord(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(perfdata.Features{}); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestPeriodHistory checks the period history read from the samples'
// PERIOD fields: a thread whose period changes is a change, threads that
// inherited the event before the change and keep the old period are not,
// nor are new threads that start at a period already seen; LoadOptions.Event
// keeps one event's samples.
func TestPeriodHistory(t *testing.T) {
	const ms = 1000000
	var samples []periodSample
	at := uint64(1000 * ms)
	add := func(ev int, tid uint32, period uint64) {
		samples = append(samples, periodSample{ev, tid, at, period})
		at += ms
	}
	for range 5 {
		add(0, 1, 1000) // the task hwprof opened
		add(0, 2, 1000) // a thread that inherited the event
		add(1, 1, 500)
	}
	for range 5 { // the period of tid 1 changes; tid 2 keeps the old one
		add(0, 1, 8000)
		add(0, 2, 1000)
		add(0, 3, 8000) // a thread created after the change
		add(1, 1, 500)
	}
	for range 3 { // and back
		add(0, 1, 1000)
		add(0, 2, 1000)
	}
	path := writePeriodFile(t, samples)

	p, err := Load(path, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []profile.PeriodChange{
		{TimeNS: 0, Event: "cpu-clock", Period: 1000},
		{TimeNS: 2 * ms, Event: "task-clock", Period: 500},
		{TimeNS: 15 * ms, Event: "cpu-clock", Period: 8000},
		{TimeNS: 35 * ms, Event: "cpu-clock", Period: 1000},
	}
	if !reflect.DeepEqual(p.Recording.Periods, want) {
		t.Errorf("periods\n got %+v\nwant %+v", p.Recording.Periods, want)
	}
	if p.Recording.Samples != uint64(len(samples)) {
		t.Errorf("samples %d, want %d", p.Recording.Samples, len(samples))
	}
	// At the end tids 1 and 2 sample at 1000, tid 3 at 8000; task-clock
	// never changed, so its threads are not listed.
	wantThreads := []profile.ThreadPeriod{
		{Event: "cpu-clock", TID: 1, Period: 1000},
		{Event: "cpu-clock", TID: 2, Period: 1000},
		{Event: "cpu-clock", TID: 3, Period: 8000},
	}
	if !reflect.DeepEqual(p.Recording.ThreadPeriods, wantThreads) {
		t.Errorf("thread periods\n got %+v\nwant %+v", p.Recording.ThreadPeriods, wantThreads)
	}
	if got, want := p.Recording.PeriodsInForce(), "cpu-clock 1000 (2 threads), 8000 (1 thread)"; got != want {
		t.Errorf("PeriodsInForce() = %q, want %q", got, want)
	}

	p, err = Load(path, LoadOptions{Event: "task-clock"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Recording.Samples != 10 || len(p.Recording.Periods) != 1 || p.Recording.Periods[0].Period != 500 {
		t.Errorf("with Event task-clock: %d samples, periods %+v; want 10 samples at period 500",
			p.Recording.Samples, p.Recording.Periods)
	}
	if len(p.Recording.ThreadPeriods) != 0 || p.Recording.PeriodsInForce() != "" {
		t.Errorf("with Event task-clock: thread periods %+v, in force %q; want none",
			p.Recording.ThreadPeriods, p.Recording.PeriodsInForce())
	}
}

// TestPeriodsInForceEveryThread: an event whose threads all ended at one
// period shows it alone.
func TestPeriodsInForceEveryThread(t *testing.T) {
	r := profile.Recording{Periods: []profile.PeriodChange{
		{Event: "cpu-clock", Period: 250000}, {TimeNS: 5, Event: "cpu-clock", Period: 2000000}, {Event: "task-clock", Period: 7},
	}}
	if got, want := r.PeriodsInForce(), "cpu-clock 2000000"; got != want {
		t.Errorf("PeriodsInForce() = %q, want %q", got, want)
	}
}
