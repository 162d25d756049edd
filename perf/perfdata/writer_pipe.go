package perfdata

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/hwprof/hwprof/perf"
)

// pipeFeatureLast is HEADER_LAST_FEATURE of perf 6.1 (one past
// HEADER_PMU_CAPS): perf record ends the pipe's features with a
// PERF_RECORD_HEADER_FEATURE of this id and no data, and perf report
// prints the header when it reads it.
const pipeFeatureLast = FeatPMUCaps + 1

// maxRecordSize is the largest record a u16 header size allows, rounded
// down to 8 bytes.
const maxRecordSize = 0xfff8

// NewPipeWriter writes a pipe-mode perf.data stream to out, as `perf
// record -o -` does (tools/perf/Documentation/perf.data-file-format.txt,
// "Pipe-mode data"): the 16-byte pipe header (magic, size 16), one
// PERF_RECORD_HEADER_ATTR per event (the attr followed by its ids), one
// PERF_RECORD_HEADER_FEATURE per feature of f and the event names
// (EVENT_DESC) in the feature sections' encodings, the closing
// HEADER_LAST_FEATURE mark, then the records. Features perf does not send
// in pipe mode (BUILD_ID, and BRANCH_STACK, which has no data) are not
// sent; SAMPLE_TIME only when f has the times. Build-ids known at the end
// go to Close. out need not seek; it is written in whole records, about
// once a second at Checkpoint and when the 1 MiB buffer fills. Close does
// not close out.
func NewPipeWriter(out io.Writer, attrs []EventAttr, f Features) (*Writer, error) {
	events, _, _, err := layout(attrs)
	if err != nil {
		return nil, fmt.Errorf("perfdata: create pipe: %w", err)
	}
	w := &Writer{out: out, events: events, timeOff: sampleTimeOffset(attrs)}
	w.buf = make([]byte, 0, bufferSize)
	head := append([]byte(magic), 0, 0, 0, 0, 0, 0, 0, 0)
	binary.LittleEndian.PutUint64(head[8:], 16) // sizeof(struct perf_pipe_file_header)
	w.buf = append(w.buf, head...)
	w.recStart = len(head)
	for _, e := range events {
		rec, err := headerAttrRecord(e)
		if err != nil {
			return nil, fmt.Errorf("perfdata: create pipe: %w", err)
		}
		if err := w.append(rec); err != nil {
			return nil, err
		}
	}
	f.BuildIDs = nil
	secs, err := encodeFeatures(&f, events, false)
	if err != nil {
		return nil, fmt.Errorf("perfdata: create pipe: %w", err)
	}
	for _, s := range secs {
		if s.feat == FeatBuildID || len(s.data) == 0 {
			continue
		}
		rec, err := headerFeatureRecord(s.feat, s.data)
		if err != nil {
			return nil, fmt.Errorf("perfdata: create pipe: %w", err)
		}
		if err := w.append(rec); err != nil {
			return nil, err
		}
	}
	last, _ := headerFeatureRecord(pipeFeatureLast, nil)
	if err := w.append(last); err != nil {
		return nil, err
	}
	if err := w.appendNames(attrs); err != nil {
		return nil, err
	}
	if err := w.flush(); err != nil {
		return nil, err
	}
	return w, nil
}

// headerAttrRecord is a PERF_RECORD_HEADER_ATTR (struct
// perf_record_header_attr: header, attr of attr.size bytes, then the ids),
// as perf_event__synthesize_attr writes it.
func headerAttrRecord(e eventDesc) ([]byte, error) {
	size := eventHeaderSize + len(e.attr) + 8*len(e.ids)
	if size > maxRecordSize {
		return nil, fmt.Errorf("event %s has %d ids, more than one pipe-mode ATTR record holds (%d): record fewer threads or CPUs, or to a file",
			e.name, len(e.ids), (maxRecordSize-eventHeaderSize-len(e.attr))/8)
	}
	le := binary.LittleEndian
	b := make([]byte, 0, size)
	b = le.AppendUint32(b, uint32(perf.RecordHeaderAttr))
	b = le.AppendUint16(b, 0)
	b = le.AppendUint16(b, uint16(size))
	b = append(b, e.attr...)
	for _, id := range e.ids {
		b = le.AppendUint64(b, id)
	}
	return b, nil
}

// headerFeatureRecord is a PERF_RECORD_HEADER_FEATURE (struct
// perf_record_header_feature: header, u64 feat_id, the section's bytes),
// padded to 8 bytes as newer perf does (older perf reads the section
// up to the record's end, and the sections' parsers ignore the padding).
func headerFeatureRecord(feat Feature, data []byte) ([]byte, error) {
	size := alignUp(eventHeaderSize+8+len(data), 8)
	if size > maxRecordSize {
		return nil, fmt.Errorf("feature %v: %d bytes, more than a record holds", feat, len(data))
	}
	le := binary.LittleEndian
	b := make([]byte, 0, size)
	b = le.AppendUint32(b, uint32(perf.RecordHeaderFeature))
	b = le.AppendUint16(b, 0)
	b = le.AppendUint16(b, uint16(size))
	b = le.AppendUint64(b, uint64(feat))
	b = append(b, data...)
	for len(b) < size {
		b = append(b, 0)
	}
	return b, nil
}

// finishPipe flushes the records and sends the build-ids as
// PERF_RECORD_HEADER_BUILD_ID records (perf inject's way of adding them to
// a stream; perf report and hwprof's Reader take them at any point).
func (w *Writer) finishPipe(f Features) error {
	if w.err != nil {
		return w.err
	}
	bids, err := encodeBuildIDs(f.BuildIDs)
	if err != nil {
		return fmt.Errorf("perfdata: close: %w", err)
	}
	le := binary.LittleEndian
	for len(bids) > 0 {
		// The feature section's entries are records already, with type
		// 0 and a size of 36 bytes plus the name's multiple of 64: the
		// name gets 4 more NULs, so that the records stay 8-aligned.
		n := int(le.Uint16(bids[6:]))
		rec := append(bids[:n:n], make([]byte, alignUp(n, 8)-n)...)
		le.PutUint32(rec, uint32(perf.RecordHeaderBuildID))
		le.PutUint16(rec[6:], uint16(len(rec)))
		if err := w.append(rec); err != nil {
			return err
		}
		bids = bids[n:]
	}
	return w.flush()
}
