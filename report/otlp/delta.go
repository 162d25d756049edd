package otlp

import (
	"math/bits"
	"slices"

	"github.com/google/pprof/profile"

	"github.com/hwprof/hwprof/report/pprof"
)

// Deltas turns cumulative profiles of one recording, read again and
// again while it is written, into the profiles of what each added: Next
// gives every calling context the weight it gained since the profiles
// before, so that over all the profiles Next returns, every context's
// weights add up exactly to those of the last profile given.
//
// A calling context is a sample's kind label and its frames, leaf first:
// each location's object, address and lines (function, file, line), but
// for the leaf only its object and function. A profile of report.PProfProfile splits a
// function's self weight in each context over the chains of inlined
// frames it was sampled in, in the proportions of the whole recording,
// which move as samples arrive; so Next splits the weight a context gained
// over the context's samples in the later profile's proportions (exactly,
// in integers).
//
// A context can also lose weight: the loader judges a stack by the whole
// recording (a stack whose callers are found elsewhere, a broken stack),
// so a later reading may put samples in another context, and an LBR
// recording's call counts are estimates rounded anew. Next then gives
// that context a negative weight, with the locations it was last seen
// with: a correction that keeps the sums exact. The weights of one
// profile are an interval's, the sums over intervals the recording's.
//
// It keeps, per context, its weights sent so far and the sample it was
// last seen in, not the profiles.
type Deltas struct {
	frames map[frame]int32
	nodes  map[sampleNode]int32
	types  map[valueType]int
	sent   map[int32][]int64         // context (trie node) -> weights sent so far, by type id
	last   map[int32]*profile.Sample // context -> the sample it was last seen in
	endNS  int64                     // the end of the last profile, Unix ns
}

// frame is one frame of a sample's key.
type frame struct {
	obj, fn, file string
	line          int64
	addr          uint64 // of a location but the leaf
}

// sampleNode is a node of the trie sample keys are interned in: its
// parent (0: the root) and a frame id (a kind label is a frame of its
// own, first).
type sampleNode struct{ parent, frame int32 }

type valueType struct{ typ, unit string }

// NewDeltas returns a Deltas that has sent nothing yet.
func NewDeltas() *Deltas {
	return &Deltas{
		frames: map[frame]int32{}, nodes: map[sampleNode]int32{}, types: map[valueType]int{},
		sent: map[int32][]int64{}, last: map[int32]*profile.Sample{},
	}
}

// Next returns what cur has that the profiles given before it had not
// (see Deltas), without the samples left with nothing. Its time is the end
// of the previous profile (cur's start for the first) and it lasts until
// cur's end.
func (d *Deltas) Next(cur *profile.Profile) *profile.Profile {
	out := &profile.Profile{
		SampleType: cur.SampleType, DefaultSampleType: cur.DefaultSampleType,
		PeriodType: cur.PeriodType, Period: cur.Period, Comments: cur.Comments,
		Mapping: cur.Mapping, Location: cur.Location, Function: cur.Function,
	}
	tids := make([]int, len(cur.SampleType))
	for i, st := range cur.SampleType {
		tids[i] = d.typeID(valueType{st.Type, st.Unit})
	}
	// cur's samples by context, in order.
	byCtx := map[int32][]*profile.Sample{}
	var order []int32
	for _, s := range cur.Sample {
		k := d.key(s)
		if byCtx[k] == nil {
			order = append(order, k)
		}
		byCtx[k] = append(byCtx[k], s)
	}
	emit := func(s *profile.Sample, vals []int64) {
		if slices.ContainsFunc(vals, func(v int64) bool { return v != 0 }) {
			out.Sample = append(out.Sample, &profile.Sample{Location: s.Location, Value: vals, Label: s.Label, NumLabel: s.NumLabel, NumUnit: s.NumUnit})
		}
	}
	for _, k := range order {
		samples := byCtx[k]
		now := make([]int64, len(d.types))
		for _, s := range samples {
			for i, x := range s.Value {
				now[tids[i]] += x
			}
		}
		was := grow(d.sent[k], len(d.types))
		vals := make([][]int64, len(samples))
		for j := range samples {
			vals[j] = make([]int64, len(cur.SampleType))
		}
		for i, t := range tids {
			split(now[t]-was[t], samples, i, vals)
		}
		d.sent[k], d.last[k] = now, samples[0]
		for j, s := range samples {
			emit(s, vals[j])
		}
	}
	// The contexts cur no longer has give back what they had.
	gone := slices.Sorted(func(yield func(int32) bool) {
		for k := range d.sent {
			if byCtx[k] == nil && !yield(k) {
				return
			}
		}
	})
	for _, k := range gone {
		was := grow(d.sent[k], len(d.types))
		vals := make([]int64, len(cur.SampleType))
		for i, t := range tids {
			vals[i] = -was[t]
		}
		emit(d.last[k], vals)
		delete(d.sent, k)
		delete(d.last, k)
	}
	end := cur.TimeNanos + cur.DurationNanos
	out.TimeNanos = cur.TimeNanos
	if d.endNS != 0 {
		out.TimeNanos = d.endNS
	}
	out.DurationNanos = max(end-out.TimeNanos, 0)
	d.endNS = end
	return out
}

// split gives gain (negative: a loss) of a context to its samples in
// proportion to their value i, into vals[j][i]: the shares are whole and
// add up to gain exactly. Without proportions (no sample has a positive
// value i) the first sample takes it all.
func split(gain int64, samples []*profile.Sample, i int, vals [][]int64) {
	var total uint64
	for _, s := range samples {
		total += uint64(max(s.Value[i], 0))
	}
	if gain == 0 {
		return
	}
	if total == 0 {
		vals[0][i] = gain
		return
	}
	mag := uint64(gain)
	if gain < 0 {
		mag = uint64(-gain)
	}
	var cum, given uint64
	for j, s := range samples {
		cum += uint64(max(s.Value[i], 0))
		hi, lo := bits.Mul64(mag, cum)
		upto, _ := bits.Div64(hi, lo, total) // mag*cum/total <= mag: no overflow
		share := int64(upto - given)
		if gain < 0 {
			share = -share
		}
		vals[j][i] = share
		given = upto
	}
}

// grow pads v with zeros to n values.
func grow(v []int64, n int) []int64 {
	for len(v) < n {
		v = append(v, 0)
	}
	return v
}

// typeID is the id of sample type t.
func (d *Deltas) typeID(t valueType) int {
	id, ok := d.types[t]
	if !ok {
		id = len(d.types)
		d.types[t] = id
	}
	return id
}

// key is the trie node of s's key.
func (d *Deltas) key(s *profile.Sample) int32 {
	var node int32
	step := func(f frame) {
		fid, ok := d.frames[f]
		if !ok {
			fid = int32(len(d.frames) + 1)
			d.frames[f] = fid
		}
		k := sampleNode{node, fid}
		next, ok := d.nodes[k]
		if !ok {
			next = int32(len(d.nodes) + 1)
			d.nodes[k] = next
		}
		node = next
	}
	for _, kind := range s.Label[pprof.KindLabel] {
		step(frame{fn: "kind=" + kind, line: -1})
	}
	for j, l := range s.Location {
		obj := ""
		if l.Mapping != nil {
			obj = l.Mapping.File
		}
		var addr uint64
		if j > 0 {
			addr = l.Address // a call site
		}
		if len(l.Line) == 0 {
			step(frame{obj: obj, addr: l.Address})
		}
		lines := l.Line
		if j == 0 && len(lines) > 0 {
			lines = lines[len(lines)-1:] // the leaf's function (see Deltas)
		}
		for _, ln := range lines {
			f := frame{obj: obj, line: ln.Line, addr: addr}
			if j == 0 {
				f.line = 0 // a chain's last line is in the function, not its start
			}
			if ln.Function != nil {
				f.fn, f.file = ln.Function.Name, ln.Function.Filename
			}
			step(f)
		}
		step(frame{line: -3}) // the end of a location
	}
	return node
}
