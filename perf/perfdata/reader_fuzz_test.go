package perfdata

import (
	"bytes"
	"testing"

	"github.com/hwprof/hwprof/internal/zbomb"
	"github.com/hwprof/hwprof/perf"
)

// FuzzReader reads arbitrary bytes as a perf.data file and as a pipe-mode
// stream. Whatever the bytes: no panic and an end (every record consumes
// at least its 8-byte header); every delivered record has a header whose
// size is its length and lies inside the input; every record counted is
// delivered; decoding any record returns, with an error at worst; the
// header sections and records kept total at most the input's size (in a
// version 1 file the attrs are read past their section, as perf does).
func FuzzReader(f *testing.F) {
	file := smallFile(f)
	f.Add(file)
	f.Add(file[:len(file)/2])
	f.Add(toV1(f, file, v1Shapes[len(v1Shapes)-1])) // version 1, attrs read by their own size
	var inner []byte
	for _, tm := range []uint64{3, 1, 2} {
		inner = append(inner, timedSample(tm, 1)...)
	}
	aux := le.AppendUint64(nil, 8)
	aux = append(aux, make([]byte, 32)...)
	pipe := newStream().add(attrRecord(orderAttr(), 7), timedSample(2, 0), timedSample(1, 1), finishedRound[:],
		compressed2Record(zstdFrame(f, inner)), record(perf.RecordAuxtrace, 0, aux), make([]byte, 8),
		record(perf.RecordEventUpdate, 0, appendString(le.AppendUint64(le.AppendUint64(nil, 2), 7), "cycles")),
		record(perf.RecordHeaderFeature, 0, append(le.AppendUint64(nil, uint64(FeatCmdline)), 1, 0, 0, 0, 4, 0, 0, 0, 'l', 's', 0, 0)),
		commRecord(0, sampleID{}, "x"))
	f.Add(pipe.b)
	f.Add(pipe.b[:len(pipe.b)-3])
	for _, b := range zbomb.FuzzSeeds() {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if r, err := NewReader(bytes.NewReader(data), int64(len(data))); err == nil {
			checkReader(t, r, data)
		}
		if r, err := NewPipeReader(bytes.NewReader(data)); err == nil {
			checkReader(t, r, data)
		}
	})
}

func checkReader(t *testing.T, r *Reader, data []byte) {
	defer r.Close()
	var s perf.Sample
	n := int64(0)
	for r.Next() {
		rec := r.Record()
		if len(rec.Raw) < 8 || int(le.Uint16(rec.Raw[6:])) != len(rec.Raw) {
			t.Fatalf("record at %#x of %d bytes, header size %d", rec.Offset, len(rec.Raw), le.Uint16(rec.Raw[6:]))
		}
		if rec.Offset < 0 || rec.Offset+int64(len(rec.Raw)) > int64(len(data)) && !rec.Compressed {
			t.Fatalf("record at %#x of %d bytes outside the %d-byte input", rec.Offset, len(rec.Raw), len(data))
		}
		if rec.Type() == perf.RecordSample {
			r.DecodeSample(&s)
		}
		r.Decode()
		n++
	}
	if n != r.Total() {
		t.Fatalf("%d records delivered, %d counted", n, r.Total())
	}
	r.Attrs()
	r.Features()
	if r.hdr.Version != 1 && r.hdrBytes > int64(len(data)) {
		t.Fatalf("header sections and records of %d bytes kept from an input of %d", r.hdrBytes, len(data))
	}
}
