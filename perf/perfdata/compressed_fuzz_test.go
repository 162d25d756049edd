package perfdata

import (
	"bytes"
	"testing"

	"github.com/hwprof/hwprof/internal/zbomb"
	"github.com/hwprof/hwprof/perf"
	"github.com/klauspost/compress/zstd"
)

// innerRecords cuts b into records of an unknown type (200), delivered as
// read, with bodies of 0 to 255 bytes (each piece's first byte says how
// long), padded to 8 bytes.
func innerRecords(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		n := min(int(b[0]), len(b)-1)
		body := append(make([]byte, 0, n+7), b[1:1+n]...)
		for len(body)%8 != 0 {
			body = append(body, 0)
		}
		out = append(out, record(200, 0, body))
		b = b[1+n:]
	}
	return out
}

// fuzzEncoder is compressAsPerf's encoder, made once per process (a new
// one per execution cost most of its time).
var fuzzEncoder *zstd.Encoder

// compressAsPerf compresses records as perf record does: one zstd stream,
// flushed (not ended) after each group of per records, each flush's output
// in COMPRESSED records of at most chunk bytes of data.
func compressAsPerf(t *testing.T, recs [][]byte, per, chunk int) [][]byte {
	var z bytes.Buffer
	if fuzzEncoder == nil {
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
		if err != nil {
			t.Fatal(err)
		}
		fuzzEncoder = enc
	}
	enc := fuzzEncoder
	enc.Reset(&z)
	var out [][]byte
	for i := 0; i < len(recs); i += per {
		for _, r := range recs[i:min(i+per, len(recs))] {
			enc.Write(r)
		}
		if err := enc.Flush(); err != nil {
			t.Fatal(err)
		}
		for b := z.Bytes(); len(b) > 0; b = b[min(chunk, len(b)):] {
			out = append(out, compressedRecord(bytes.Clone(b[:min(chunk, len(b))])))
		}
		z.Reset()
	}
	return out
}

// FuzzCompressed reads pipe streams of COMPRESSED records.
//
// raw: the bytes, cut into chunks, are the zstd data of the records (any
// stream: frames, blocks, bombs); the reader ends without panicking, every
// record it delivers is framed by its header, and it allocates a bounded
// amount whatever the bytes expand to.
//
// Otherwise the bytes are cut into records, compressed as perf record
// does (one stream flushed every few records, cut into COMPRESSED
// records), and the reader must deliver those records exactly, in order,
// without a warning.
func FuzzCompressed(f *testing.F) {
	const fuzzLimit = 256 << 10
	f.Add([]byte("\x10abcdefgh\x00\x03xyz"), uint8(2), uint16(7), false)
	f.Add(bytes.Repeat([]byte{0x20, 1, 2, 3}, 40), uint8(1), uint16(100), false)
	f.Add(zstdFrame(f, bytes.Repeat(timedSample(1, 0), 4)), uint8(1), uint16(30), true)
	f.Add(zbomb.RLEBlocks(zbomb.FrameHeader(), 4, zbomb.RecordByte, false), uint8(1), uint16(10), true)
	f.Add(zbomb.Frames(nil, 4, zbomb.RecordByte), uint8(1), uint16(100), true)
	f.Add(zbomb.RLEBlocks(zbomb.FrameHeaderSize(1<<40, false), 4, 0x10, true), uint8(1), uint16(0), true)
	f.Fuzz(func(t *testing.T, data []byte, per uint8, chunk uint16, raw bool) {
		c := int(chunk)%zbomb.MaxData + 1
		if raw {
			var parts [][]byte
			for b := data; len(b) > 0; b = b[min(c, len(b)):] {
				parts = append(parts, b[:min(c, len(b))])
			}
			// A limit of 256 KiB per record (HEADER_COMPRESSED's mmap_len)
			// keeps bombs quick to stop.
			feat := le.AppendUint64(nil, uint64(FeatCompressed))
			for _, v := range []uint32{1, 1, 1, 10, fuzzLimit} {
				feat = le.AppendUint32(feat, v)
			}
			stream := append(newStream().add(record(perf.RecordHeaderFeature, 0, feat)).b, zbomb.Pipe(parts...)[pipeHeaderSize:]...)
			alloc := allocated(func() {
				r, err := NewPipeReader(bytes.NewReader(stream))
				if err != nil {
					t.Fatal(err)
				}
				checkReader(t, r, stream)
			})
			// Each record: at most the limit, in two buffers, plus the
			// decoder's window (its maximum) and blocks.
			if bound := uint64(len(parts))*(2*fuzzLimit+1<<20) + maxDecompressed + 8<<20; alloc > bound {
				t.Fatalf("%d COMPRESSED records: allocated %d MiB, bound %d MiB", len(parts), alloc>>20, bound>>20)
			}
			return
		}
		recs := innerRecords(data)
		stream := newStream().add(compressAsPerf(t, recs, int(per)%8+1, c)...).b
		r, err := NewPipeReader(bytes.NewReader(stream))
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		i := 0
		for r.Next() {
			rec := r.Record()
			if !rec.Compressed {
				continue
			}
			if i >= len(recs) || !bytes.Equal(rec.Raw, recs[i]) {
				t.Fatalf("record %d: got % x, want one of %d records", i, rec.Raw, len(recs))
			}
			i++
		}
		if r.Err() != nil || len(r.Warnings()) > 0 || i != len(recs) {
			t.Fatalf("%d of %d records, error %v, warnings %q", i, len(recs), r.Err(), r.Warnings())
		}
	})
}
