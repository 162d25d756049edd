package record

import (
	"bytes"
	"encoding/binary"
	"math/bits"

	"github.com/hwprof/hwprof/perf"
)

var le = binary.LittleEndian

// drain empties every ring into the file, then marks the end of the round
// so readers can sort samples by time one round at a time.
func (r *recorder) drain() {
	wrote := false
	for _, rg := range r.rings {
		n, _, err := rg.Read(r.write)
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

// account counts a record by type: samples per event, the kernel's loss
// and throttling reports, sample times, and the objects that were mapped.
// Records were checked by the ring reader to be at least a header long.
func (r *recorder) account(rec []byte) {
	r.stats.Records++
	r.stats.Bytes += uint64(len(rec))
	switch perf.RecordType(le.Uint32(rec)) {
	case perf.RecordSample:
		r.accountSample(rec)
	case perf.RecordLost: // {header; u64 id; u64 lost; sample_id}
		if len(rec) >= 24 {
			r.stats.Lost += le.Uint64(rec[16:])
		}
	case perf.RecordLostSamples: // {header; u64 lost; sample_id}
		if len(rec) >= 16 {
			r.stats.LostSamples += le.Uint64(rec[8:])
		}
	case perf.RecordThrottle:
		r.stats.Throttle++
	case perf.RecordUnthrottle:
		r.stats.Unthrottle++
	case perf.RecordMmap: // {header; u32 pid, tid; u64 addr, len, pgoff; char filename[]}
		r.noteMapping(rec, 40)
	case perf.RecordMmap2: // ... u32 maj, min; u64 ino, ino_generation (or build id); u32 prot, flags; char filename[]
		r.noteMapping(rec, 72)
	}
}

func (r *recorder) accountSample(rec []byte) {
	r.stats.Samples++
	ei := 0
	if len(r.o.Events) > 1 && r.o.Events[0].Attr.SampleType&perf.SampleIdentifier != 0 && len(rec) >= 16 {
		ei = r.idEvent[le.Uint64(rec[8:])]
	}
	r.stats.EventSamples[ei]++
	st := r.o.Events[ei].Attr.SampleType
	if st&perf.SampleTime == 0 {
		return
	}
	// IDENTIFIER, IP and TID come before TIME, one u64 each.
	off := 8 + 8*bits.OnesCount64(uint64(st&(perf.SampleIdentifier|perf.SampleIP|perf.SampleTID)))
	if len(rec) < off+8 {
		return
	}
	t := le.Uint64(rec[off:])
	if r.timeFirst == 0 || t < r.timeFirst {
		r.timeFirst = t
	}
	if t > r.timeLast {
		r.timeLast = t
	}
}

// noteMapping remembers the file of an executable mapping, for the
// build-id feature.
func (r *recorder) noteMapping(rec []byte, nameOff int) {
	misc := le.Uint16(rec[4:])
	if misc&perf.MiscMmapData != 0 || len(rec) <= nameOff {
		return
	}
	name := rec[nameOff:]
	if i := bytes.IndexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	if len(name) == 0 || name[0] != '/' {
		return // [vdso], [stack], anonymous memory
	}
	if _, ok := r.buildIDs[string(name)]; !ok {
		r.buildIDs[string(name)] = int32(le.Uint32(rec[8:]))
	}
}
