package perfdata

import (
	"cmp"
	"fmt"
	"io"
	"slices"

	"github.com/hwprof/hwprof/perf"
)

// What a header can make the Reader read and allocate. A perf.data file
// is untrusted input: its header and feature table name byte ranges
// (sections) and counts, and a Reader that followed them blindly would
// read one string six times over, or the same ids for every event. The
// budget, as a whole:
//
//   - Every section a file-mode header names (the attrs, each event's
//     ids, the old event_types, the feature table, each feature section)
//     is read at most once, and only if it lies in the file and overlaps
//     neither the header, the data section nor a section read before it
//     (claim): such a section is refused with a warning, and the first
//     one kept. So what a header makes the Reader read totals at most
//     the file's size.
//   - Each feature section has a cap by kind (featureCap): 64 KiB for one
//     string or a few numbers, 1 MiB for a topology, 16 MiB for the
//     command line, 256 MiB for the tables that grow with the recording
//     (build-ids, event descriptions). Sections of features the Reader
//     does not decode are not read at all.
//   - Decoding a section allocates at most about three times its size:
//     counts are checked against the bytes that follow, and the items a
//     count makes cost at most twice the section's bytes plus 64 KiB
//     (featReader.items) besides the strings' bytes.
//   - Header records (ATTR, FEATURE, BUILD_ID, EVENT_TYPE, EVENT_UPDATE)
//     that come out of COMPRESSED records, which perf never writes there,
//     are applied only while all the header bytes applied total at most
//     the bytes read from the input so far (headerRecordFits).

// Caps of feature sections (featureCap).
const (
	maxSmallFeature    = 64 << 10
	maxTopologyFeature = 1 << 20
	maxCmdlineFeature  = 16 << 20
	maxTableFeature    = 256 << 20
)

// itemSlack is what the items of any section may cost besides twice the
// section's size (featReader.items).
const itemSlack = 64 << 10

// featureCap returns the largest section of feature f the Reader reads,
// 0 for a feature it does not decode (whose section it does not read).
func featureCap(f Feature) uint64 {
	switch f {
	case FeatHostname, FeatOSRelease, FeatVersion, FeatArch, FeatCPUDesc, FeatCPUID,
		FeatNrCPUs, FeatTotalMem, FeatSampleTime, FeatCompressed, FeatBranchStack:
		return maxSmallFeature
	case FeatCPUTopology, FeatNUMATopology, FeatPMUMappings, FeatGroupDesc, FeatHybridTopology:
		return maxTopologyFeature
	case FeatCmdline:
		return maxCmdlineFeature
	case FeatBuildID, FeatEventDesc:
		return maxTableFeature
	}
	return 0
}

// A span is a byte range of the file that the Reader reads, and what it
// holds, for warnings ("the data section", "feature HOSTNAME").
type span struct {
	Section
	what string
}

// spans are the byte ranges read so far, sorted by offset, none
// overlapping another.
type spans []span

// overlap returns the span that s overlaps, if any (an empty s overlaps
// none).
func (p spans) overlap(s Section) (span, bool) {
	if s.Size == 0 {
		return span{}, false
	}
	// The first span that ends after s starts.
	i, _ := slices.BinarySearchFunc(p, s.Offset, func(x span, off uint64) int {
		if x.End() <= off {
			return -1
		}
		return 1
	})
	if i < len(p) && p[i].Offset < s.End() {
		return p[i], true
	}
	return span{}, false
}

// claim takes the sections of cands that overlap no span and no other
// candidate kept before them, and returns for each refused candidate the
// span it overlaps (clash[i].what is "" for one taken). Among candidates
// that overlap each other, the one at the lowest offset is kept (of those
// at one offset, the first). Empty sections are taken and not recorded.
// It costs O(n log n) for n candidates, whatever their order.
func (p *spans) claim(cands []span) (clash []span) {
	clash = make([]span, len(cands))
	order := make([]int, 0, len(cands))
	for i, c := range cands {
		if c.Size > 0 {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(cands[a].Offset, cands[b].Offset) })
	var took spans
	for _, i := range order {
		c := cands[i]
		if o, ok := p.overlap(c.Section); ok {
			clash[i] = o
		} else if n := len(took); n > 0 && took[n-1].End() > c.Offset {
			clash[i] = took[n-1]
		} else {
			took = append(took, c)
		}
	}
	*p = mergeSpans(*p, took)
	return clash
}

// mergeSpans merges two sorted lists of spans that do not overlap.
func mergeSpans(a, b spans) spans {
	if len(b) == 0 {
		return a
	}
	out := make(spans, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if a[0].Offset < b[0].Offset {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return append(append(out, a...), b...)
}

// claimOne claims one section; see claim.
func (p *spans) claimOne(what string, s Section) (span, bool) {
	c := p.claim([]span{{s, what}})[0]
	return c, c.what != ""
}

// readSection reads section s of the file (claimed before) and charges
// it to the header bytes.
func (r *Reader) readSection(ra io.ReaderAt, s Section) ([]byte, error) {
	b := make([]byte, s.Size)
	if _, err := ra.ReadAt(b, int64(s.Offset)); err != nil {
		return nil, err
	}
	r.hdrBytes += int64(len(b))
	return b, nil
}

// headerRecordFits reports whether rec, a record of perf's of type t, is
// to be applied. A header record (ATTR, EVENT_UPDATE, FEATURE,
// EVENT_TYPE, BUILD_ID) is charged to the header bytes; one that came out
// of a COMPRESSED record is applied only if the header bytes stay within
// the bytes read from the input so far, else it is ignored and counted.
func (r *Reader) headerRecordFits(rec *Record, t perf.RecordType) bool {
	switch t {
	case perf.RecordHeaderAttr, perf.RecordEventUpdate, perf.RecordHeaderFeature,
		perf.RecordHeaderEventType, perf.RecordHeaderBuildID:
	default:
		return true
	}
	n := int64(len(rec.Raw))
	if rec.Compressed && r.hdrBytes+n > r.src.off {
		if r.hdrSkipped++; r.hdrSkipped == 1 {
			r.lose(fmt.Sprintf("%v record from the COMPRESSED record at offset %#x: the header records kept would total more than the %d bytes read: ignored, with every later one from a COMPRESSED record past the budget",
				t, rec.Offset, r.src.off))
		}
		return false
	}
	r.hdrBytes += n
	return true
}
