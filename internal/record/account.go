package record

import (
	"encoding/binary"
	"time"

	"github.com/hwprof/hwprof/perf"
)

var le = binary.LittleEndian

// drain empties every ring into the file, then marks the end of the round
// so readers can sort samples by time one round at a time.
func (r *recorder) drain() {
	var t0 time.Duration
	if r.adaptive != nil {
		t0 = threadCPU()
	}
	wrote := false
	for i, rg := range r.rings {
		n, _, err := rg.ReadPos(func(pos uint64, rec []byte) error {
			if r.adaptive != nil {
				rec = r.adaptive.fixPeriod(r.format, i, pos, rec)
			}
			return r.write(rec)
		})
		if err != nil {
			r.stats.RingErrors++
		}
		wrote = wrote || n > 0
	}
	if wrote {
		r.stats.Wakeups++
		if err := r.w.WriteFinishedRound(); err != nil && r.writeErr == nil {
			r.writeErr = err
		}
	}
	if r.adaptive != nil && wrote {
		r.adaptive.noteDrain(threadCPU() - t0)
	}
}

// write accounts for one record and writes it verbatim.
func (r *recorder) write(rec []byte) error {
	r.account(rec)
	if err := r.w.WriteRecord(rec); err != nil {
		if r.writeErr == nil {
			r.writeErr = err
		}
		return err
	}
	return nil
}

// account counts a record with the shared decoder (perf.SampleFormat):
// samples per event and their times cheaply, without decoding the sample;
// the rare other records decoded whole for the kernel's loss and
// throttling reports and the objects that were mapped.
func (r *recorder) account(rec []byte) {
	r.stats.Records++
	r.stats.Bytes += uint64(len(rec))
	if perf.RecordType(le.Uint32(rec)) == perf.RecordSample {
		r.accountSample(rec)
		return
	}
	d, err := r.format.Decode(rec)
	if err != nil {
		r.stats.Undecoded++
		return
	}
	switch d := d.(type) {
	case *perf.Lost:
		r.stats.Lost += d.Lost
		if t := r.tunerOf(d.ID); t != nil {
			t.lost += d.Lost
		}
	case *perf.LostSamples:
		r.stats.LostSamples += d.Lost
		if t := r.tunerOf(d.Trailer.ID); t != nil {
			t.lost += d.Lost
		}
	case *perf.Throttle:
		if d.Type == perf.RecordThrottle {
			r.stats.Throttle++
			if t := r.tunerOf(d.ID); t != nil {
				t.throttled++
			}
		} else {
			r.stats.Unthrottle++
		}
	case *perf.Mmap:
		r.noteMapping(d.Misc, d.PID, d.Filename)
	case *perf.Mmap2:
		r.noteMapping(d.Misc, d.PID, d.Filename)
	}
}

func (r *recorder) accountSample(rec []byte) {
	r.stats.Samples++
	ei, err := r.format.EventOf(rec)
	if err == nil && ei >= 0 {
		r.stats.EventSamples[ei]++
		if r.adaptive != nil {
			r.adaptive.countSample(r.format, ei, rec)
		}
	}
	t, ok := r.format.Time(rec)
	if !ok {
		return
	}
	if r.timeFirst == 0 || t < r.timeFirst {
		r.timeFirst = t
	}
	if t > r.timeLast {
		r.timeLast = t
	}
}

// noteMapping remembers the file of an executable mapping, for the
// build-id feature.
func (r *recorder) noteMapping(misc uint16, pid uint32, name string) {
	if misc&perf.MiscMmapData != 0 || len(name) == 0 || name[0] != '/' {
		return // data, [vdso], [stack], anonymous memory
	}
	if _, ok := r.buildIDs[name]; !ok {
		r.buildIDs[name] = int32(pid)
	}
}

// tunerOf is the tuner of the event that owns a sample id; with one event,
// that event's (ids of loss records may be 0 when no ID was sampled).
func (r *recorder) tunerOf(id uint64) *tuner {
	if r.adaptive == nil {
		return nil
	}
	ei, ok := 0, len(r.adaptive.tuners) == 1
	if !ok {
		ei, ok = r.format.EventOfID(id)
	}
	if !ok || r.adaptive.tuners[ei].ctl == nil {
		return nil
	}
	return &r.adaptive.tuners[ei]
}
