package perf

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// timeByEvent is Time as it reads every record: through the record's
// event (layoutOf), the reference for Time's shortcut when the events lay
// records out alike.
func timeByEvent(f *SampleFormat, rec []byte) (uint64, bool) {
	if len(rec) < RecordHeaderSize || len(f.events) == 0 {
		return 0, false
	}
	typ := RecordType(binary.LittleEndian.Uint32(rec))
	if typ >= RecordHeaderAttr {
		return 0, false
	}
	_, ev, err := f.layoutOf(rec)
	if err != nil {
		return 0, false
	}
	if typ == RecordSample {
		if ev.timeOff < 0 || ev.timeOff+8 > len(rec) {
			return 0, false
		}
		return binary.LittleEndian.Uint64(rec[ev.timeOff:]), true
	}
	if ev.trailerTime == 0 || len(rec)-RecordHeaderSize < ev.trailerSize {
		return 0, false
	}
	return binary.LittleEndian.Uint64(rec[len(rec)-ev.trailerTime:]), true
}

// Time gives the time of every record as read through its event, for
// formats of one or more events that lay records out alike or not (ids
// as SAMPLE_ID or IDENTIFIER, with and without sample_id_all), on samples
// and other records with known, unknown and zero ids, cut at every
// length; and where SampleTimeAt says a SAMPLE's time is, Time reads it.
func TestTimeMatchesEventLayout(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	sts := []SampleType{
		SampleIdentifier | SampleIP | SampleTID | SampleTime | SampleCPU | SamplePeriod,
		SampleIP | SampleTID | SampleTime | SampleID | SampleCPU | SamplePeriod | SampleCallchain,
		SampleIP | SampleTID | SampleTime | SampleID | SampleStreamID,
		SampleIP | SampleTID | SampleID,
	}
	checked, fast := 0, 0
	for k := range 400 {
		st := sts[k%len(sts)]
		flags := AttrFlags(0)
		if k%3 != 0 {
			flags = FlagSampleIDAll
		}
		f, err := NewSampleFormat()
		if err != nil {
			t.Fatal(err)
		}
		nev := 1 + rng.IntN(3)
		for i := range nev {
			a := Attr{SampleType: st, Flags: flags}
			if i > 0 && k%5 == 0 { // an event with another layout: not uniform
				if st&SampleIdentifier != 0 {
					a.SampleType |= SampleAddr // its time sits elsewhere in a sample
				} else {
					a.ReadFormat = 1 // the id stays where it was
				}
			}
			if _, err := f.Add(a, []uint64{uint64(100 + i)}); err != nil {
				t.Fatal(err)
			}
		}
		for range 20 {
			a := f.events[rng.IntN(nev)].attr
			id := []uint64{0, 100, 101, 102, 999}[rng.IntN(5)]
			var raw []byte
			if rng.IntN(2) == 0 {
				s := Sample{IP: 1, PID: 2, TID: 3, Time: rng.Uint64(), ID: id, Identifier: id, StreamID: id, CPU: 1, Period: 5,
					Callchain: []uint64{1, 2, 3}}
				raw = appendSample(&a, &s)
			} else {
				tr := Trailer{PID: 2, TID: 3, Time: rng.Uint64(), ID: id, Identifier: id, StreamID: id, CPU: 1}
				body := cstr(make([]byte, 8), "comm")
				if a.Flags.Has(FlagSampleIDAll) {
					body = appendTrailer(body, a.SampleType, &tr)
				}
				raw = rec(RecordComm, 0, body)
			}
			for n := 0; n <= len(raw); n++ {
				cut := raw[:n]
				gt, gok := f.Time(cut)
				wt, wok := timeByEvent(f, cut)
				if gt != wt || gok != wok {
					t.Fatalf("format %d (%d events, uniform %v), record %x cut to %d bytes: Time %d %v, through its event %d %v",
						k, nev, f.uniform, raw, n, gt, gok, wt, wok)
				}
				if at, minLen := f.SampleTimeAt(); n >= minLen && RecordType(binary.LittleEndian.Uint32(cut)) == RecordSample {
					if at+8 > n || binary.LittleEndian.Uint64(cut[at:]) != wt || !wok {
						t.Fatalf("format %d (%d events, uniform %v), record %x cut to %d bytes: SampleTimeAt %d, %d; through its event %d %v",
							k, nev, f.uniform, raw, n, at, minLen, wt, wok)
					}
					fast++
				}
				checked++
			}
		}
	}
	if checked == 0 || fast == 0 {
		t.Fatalf("%d records checked, %d through SampleTimeAt", checked, fast)
	}
}
