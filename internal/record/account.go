package record

import (
	"encoding/binary"
	"time"

	"github.com/hwprof/hwprof/perf"
)

var le = binary.LittleEndian

// drain empties every ring into the file, then marks the end of the round
// so readers can sort samples by time one round at a time. After a failed
// write it reads nothing more: the recording has stopped (see stop).
func (r *recorder) drain() {
	if r.writeErr != nil {
		return
	}
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
		if r.writeErr != nil {
			return // err is the write's, not the ring's
		}
		if err != nil {
			r.stats.RingErrors++
		}
		wrote = wrote || n > 0
	}
	if wrote {
		r.stats.Wakeups++
		r.failed(r.w.WriteFinishedRound())
	}
	if r.adaptive != nil && wrote {
		r.adaptive.noteDrain(threadCPU() - t0)
	}
}

// write notes what the recording needs at once from a record read from a
// ring and writes it verbatim. It is counted in Stats once it is in the
// file (written).
func (r *recorder) write(rec []byte) error {
	r.note(rec)
	err := r.w.WriteRecord(rec)
	r.failed(err)
	return err
}

// failed keeps the first write error: the recording stops at it.
func (r *recorder) failed(err error) {
	if err != nil && r.writeErr == nil {
		r.writeErr = err
	}
}

// note feeds a record, as it is read, to the adaptive controllers
// (samples, loss and throttling by event) and keeps the objects mapped,
// for the build-id feature. Samples are not decoded unless a controller
// needs them; other records are rare.
func (r *recorder) note(rec []byte) {
	typ := perf.RecordType(le.Uint32(rec))
	switch typ {
	case perf.RecordSample:
		if r.liveHits != nil { // a stream: the samples cannot be read back
			r.liveHits.sample(r.format, rec)
		}
		if r.adaptive == nil {
			return
		}
		if ei, err := r.format.EventOf(rec); err == nil && ei >= 0 {
			r.adaptive.countSample(r.format, ei, rec)
		}
		return
	case perf.RecordMmap, perf.RecordMmap2:
	case perf.RecordFork:
		if r.hits == nil {
			return
		}
	case perf.RecordComm:
		if r.adaptive == nil {
			return
		}
	case perf.RecordLost, perf.RecordLostSamples, perf.RecordThrottle:
		if r.adaptive == nil {
			return
		}
	default:
		return
	}
	d, err := r.format.Decode(rec)
	if err != nil {
		return // counted as undecoded once written
	}
	switch d := d.(type) {
	case *perf.Lost:
		if t := r.tunerOf(d.ID); t != nil {
			t.lost += d.Lost
		}
	case *perf.LostSamples:
		if t := r.tunerOf(d.Trailer.ID); t != nil {
			t.lost += d.Lost
		}
	case *perf.Throttle:
		if t := r.tunerOf(d.ID); t != nil {
			t.throttled++
		}
	case *perf.Comm:
		if d.Exec() { // the process's code is another program's
			r.adaptive.forgetCode(d.PID)
		}
	case *perf.Fork:
		if d.Type == perf.RecordFork {
			r.hits.addFork(d.PID, d.PPID)
		}
	case *perf.Mmap:
		r.noteMapping(d.Misc, d.PID, d.Addr, d.Len, d.Filename)
	case *perf.Mmap2:
		r.noteMapping(d.Misc, d.PID, d.Addr, d.Len, d.Filename)
	}
}

// written counts the records that reached the file, as the Writer reports
// them (perfdata.Writer.NotifyWritten): Stats say what the file holds,
// also when a write failed midway. The records the Writer adds itself
// (FINISHED_ROUND, user types from 64 on) are not counted.
func (r *recorder) written(b []byte) {
	for len(b) >= 8 {
		size := int(le.Uint16(b[6:]))
		if size < 8 || size > len(b) {
			return // the Writer hands over whole records only
		}
		if perf.RecordType(le.Uint32(b)) < perf.RecordHeaderAttr {
			r.account(b[:size])
		}
		b = b[size:]
	}
}

// account counts a record with the shared decoder (perf.SampleFormat):
// samples per event and their times cheaply, without decoding the sample;
// the rare other records decoded whole for the kernel's loss and
// throttling reports.
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
	case *perf.LostSamples:
		r.stats.LostSamples += d.Lost
	case *perf.Throttle:
		if d.Type == perf.RecordThrottle {
			r.stats.Throttle++
		} else {
			r.stats.Unthrottle++
		}
	}
}

func (r *recorder) accountSample(rec []byte) {
	r.stats.Samples++
	ei, err := r.format.EventOf(rec)
	if err == nil && ei >= 0 {
		r.stats.EventSamples[ei]++
	}
	if t, ok := r.format.Time(rec); ok {
		r.spanTo(t)
	}
}

// spanTo widens the recording's time span (the sample_time feature) to
// take in t: the samples' times, and when the events started and stopped
// counting (markSpan).
func (r *recorder) spanTo(t uint64) {
	if r.timeFirst == 0 || t < r.timeFirst {
		r.timeFirst = t
	}
	if t > r.timeLast {
		r.timeLast = t
	}
}

// markSpan widens the span to now on the perf clock: an attached process
// that did nothing for a while wrote no record saying so, and its
// threads' time off the CPU runs from the start of the recording to its
// end. Without the clock (it never fails where events open) the span is
// the samples'.
func (r *recorder) markSpan() {
	if t, err := perfClockNow(); err == nil {
		r.spanTo(t)
	}
}

// noteMapping remembers the file of an executable mapping, for the
// build-id feature and for finding the objects that had samples (hits),
// and drops what the activation key read of the process's code, which the
// mapping may have replaced.
func (r *recorder) noteMapping(misc uint16, pid uint32, addr, n uint64, name string) {
	if misc&perf.MiscMmapData == 0 && r.adaptive != nil {
		r.adaptive.forgetCode(pid) // new code, maybe where other code was
	}
	if misc&perf.MiscMmapData == 0 && isAnonExec(name) {
		r.perfMaps.note(pid) // JIT code: a container's perf map, while the process lives
	}
	if misc&perf.MiscMmapData != 0 || len(name) == 0 || name[0] != '/' {
		return // data, [vdso], [stack], anonymous memory
	}
	if r.hits != nil && !isAnonExec(name) { // "//anon": no file to keep
		r.hits.addMapping(pid, addr, n, name)
	}
	if _, ok := r.buildIDs[name]; !ok {
		r.buildIDs[name] = int32(pid)
		r.files.hold(pid, name) // a container's file, while the process lives
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
