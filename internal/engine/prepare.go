package engine

import (
	"encoding/binary"

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/internal/pipeline"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/profile"
	"github.com/hwprof/hwprof/unwind"
)

// prepared is what the preparers found of a batch's records
// (pipeline.Batch.Prep): fast[i] always (its state says whether slow[i]
// holds more), slow[i] only for a record that is not left to a fast fold
// (slow is allocated once a record of the batch needs it: a batch of
// records all folded fast has none to allocate and zero).
type prepared struct {
	fast []fastPrep
	slow []prepSample
}

// Preparer is the prepare stage (pipeline.Stages) of one goroutine, with
// a return-address table and an unwinding scratch of its own.
func (l *loader) Preparer() func(*pipeline.Batch[prepared]) {
	ps := &prepScratch{rt: newRetTable(l.code)}
	return func(b *pipeline.Batch[prepared]) { l.prepare(b, ps) }
}

// prepare prepares every record of b (prepareFast, else prepareSlow).
func (l *loader) prepare(b *pipeline.Batch[prepared], ps *prepScratch) {
	p := &b.Prep
	if n := len(b.Records); len(p.fast) < n {
		p.fast = append(p.fast, make([]fastPrep, n-len(p.fast))...)
	}
	for i, raw := range b.Records {
		if perf.RecordType(binary.LittleEndian.Uint32(raw)) != perf.RecordSample {
			p.fast[i] = fastPrep{state: prepOther} // a switch record: folded as it is
			continue
		}
		if l.prepareFast(&p.fast[i], raw) {
			continue
		}
		if n := len(b.Records); len(p.slow) < n {
			p.slow = append(p.slow, make([]prepSample, n-len(p.slow))...)
		}
		l.prepareSlow(&p.fast[i], &p.slow[i], raw, ps)
	}
}

// prepScratch is what one preparer keeps from sample to sample: its
// return-address table and its unwinding scratch.
type prepScratch struct {
	rt  retTable
	unw unwind.Scratch
}

// fastPrep is what a preparer leaves of every sample record for the
// folding goroutine: how far it took the record, and for one left to a
// fast fold (prepFast) which fold may take it (candidate), its event and
// field layout, and what that fold reads of it that depends on the record
// alone: a frame-pointer stack's process, callchain and hash (fastStack),
// an exact hit's fields and key hash (fastExact; exactFields), when ok.
// It is small (56 bytes), apart from the large prepSample, so that the
// preparer writes and the folding goroutine reads less than a cache line
// of a record folded fast.
type fastPrep struct {
	lay  *perf.SampleLayout
	hash uint64 // fastStack: hashChainBytes(pid, chain); fastExact: hashChain(pid, the key ip, ra, chain...)
	// fastExact: the hit's IP and the return address on top of its stack copy
	ip, ra uint64
	pid    uint32
	tid    uint32 // fastExact
	// the callchain's u64s as they sit in the record: raw[chainOff:chainEnd]
	chainOff, chainEnd uint32
	ev                 int32
	state              prepState
	fast               fastKind
	ok                 bool
}

// chain returns the callchain of the record raw that f locates.
func (f *fastPrep) chain(raw []byte) []byte { return raw[f.chainOff:f.chainEnd] }

// prepSample is a sample record as a preparer leaves it for the folding
// goroutine, when it is not left to a fast fold (fastPrep.state says).
type prepSample struct {
	state prepState
	s     perf.Sample // decoded (not prepFast)
	// the leaf repair's outcome, done when the sample's event folds
	// stacks (prepStack, prepUnwound); leafBuf is the array the next
	// repair of this slot fills (see repairLeaf)
	leaf    unwind.LeafRepair
	leafBuf []uint64
	// a frame-pointer stack (fp): the raw callchain's number of entries
	// other than context markers (chainEntries, for cutStack), and the
	// hash of the repaired chain (for the stack cache)
	fp   bool
	real uint64
	hash uint64
	// prepUnwound: the stack unwound: broken (brokenStack), or the
	// address key of each frame (frameKey), innermost first; none when
	// the sample unwound to no frame
	broken bool
	frames []unwind.Frame
	keys   []addrKey
}

// fastKind says which fast fold may take a sample record.
type fastKind uint8

const (
	fastNone  fastKind = iota
	fastStack          // foldFast: its event's samples are frame-pointer stacks alone (l.ev.fast)
	fastExact          // foldExactHit: a sample of an exact event
)

// prepState is how far a preparer took a sample.
type prepState uint8

const (
	prepFast    prepState = iota // left to foldFast or foldExactHit (not decoded)
	prepBad                      // did not decode
	prepDecoded                  // decoded only (its stack, if any, is done when folded)
	prepStack                    // decoded, leaf repaired, frame-pointer chain hashed
	prepUnwound                  // decoded, leaf repaired, unwound and keyed
	prepOther                    // not a sample: a switch record (switchRecord)
)

// prepareFast and prepareSlow do for the sample record raw what depends on
// it, the process model and the event table alone (on a preparer; ps is
// its own). prepareFast leaves a sample a fast fold may take to it, not
// decoded: it sets f to what the fold needs, or returns false for
// another sample, which prepareSlow then takes: it decodes it, and when
// its event folds stacks, repairs its leaf, and hashes its frame-pointer
// chain or unwinds it and keys its frames, in p (f says how far it got).
func (l *loader) prepareFast(f *fastPrep, raw []byte) bool {
	fast, ev, lay := l.candidate(raw)
	switch fast {
	case fastStack:
		pid, off, end, ok := fastChain(raw, lay)
		var h uint64
		if ok {
			h = hashChainBytes(pid, raw[off:end])
		}
		// field by field (see exactFields)
		f.lay, f.hash, f.pid, f.chainOff, f.chainEnd = lay, h, pid, off, end
		f.ev, f.state, f.fast, f.ok = int32(ev), prepFast, fast, ok
	case fastExact:
		l.exactFields(f, raw, ev, lay)
	default:
		return false
	}
	return true
}

// prepareSlow: see prepareFast.
func (l *loader) prepareSlow(f *fastPrep, p *prepSample, raw []byte, ps *prepScratch) {
	l.prepareSample(p, raw, ps)
	f.state, f.fast = p.state, fastNone
}

// prepareSample is prepareSlow's work on p.
func (l *loader) prepareSample(p *prepSample, raw []byte, ps *prepScratch) {
	s := &p.s
	if err := l.ev.format.DecodeSample(raw, s); err != nil {
		p.state = prepBad
		return
	}
	p.state = prepDecoded
	ev := l.event(s)
	if ev < 0 || ev >= len(l.ev.srcs) || l.ev.srcs[ev] == profile.Exact {
		return
	}
	if l.o.Event != "" && l.ev.attrs[ev].Name != l.o.Event {
		return
	}
	// what stack does before it needs the folding state
	p.fp = l.ev.fpOnly[ev] && s.Has(perf.SampleCallchain) && len(s.Callchain) > 0
	if p.fp {
		p.real = chainEntries(s.Callchain)
	}
	p.leaf = l.repairChain(&p.leafBuf, s)
	if p.fp {
		p.hash = hashChain(s.PID, s.Callchain)
		p.state = prepStack
		return
	}
	p.frames = l.eng.FramesWith(p.frames[:0], s, &ps.unw)
	p.keys, p.broken = keyFrames(&ps.rt, p.keys[:0], p.frames, s.PID)
	p.state = prepUnwound
}

// keyFrames appends the address key of each frame (frameKey) to dst and
// reports whether the stack is broken (brokenStack), in one pass that
// looks each return address up once; the keys are incomplete when it is.
func keyFrames(rt *retTable, dst []addrKey, frames []unwind.Frame, pid uint32) ([]addrKey, bool) {
	for i := range frames {
		f := &frames[i]
		if f.Kind != unwind.FrameReturn {
			dst = append(dst, frameKey(rt, f, pid))
			continue
		}
		obj := f.Object
		var k addrKey
		var ri retInfo
		if obj == nil {
			k = addrKey{obj: nil, addr: max(addrspace.Unmapped(f.Addr), 1) - 1}
		} else {
			ri = rt.ret(obj, f.ObjAddr)
			k = newAddrKey(obj, pid, ri.call)
		}
		dst = append(dst, k)
		outermost := i == len(frames)-1
		if f.Kernel || (outermost && (f.Addr == 0 || obj == nil)) {
			continue
		}
		// as brokenStack (checkReturn, with ret's answer at hand)
		check := checkObject(obj)
		if obj != nil && obj.Kind == addrspace.KindFile {
			check = ri.check
		}
		if check == retNotCode || (check == retNotCall && !outermost) {
			return dst, true
		}
	}
	return dst, false
}

// candidate says which fast fold may take the sample record raw, with
// its event index and field layout: foldFast when its event's samples
// may (l.ev.fast) and it has a thread and a callchain where the layout
// says, foldExactHit when it is a sample of an exact event (folded from
// its record when the exact cache holds it, decoded only when it does
// not), none otherwise (and under the test switch noFast). A preparer
// leaves such a record undecoded.
func (l *loader) candidate(raw []byte) (fastKind, int, *perf.SampleLayout) {
	if l.test.noFast {
		return fastNone, 0, nil
	}
	ev, lay, ok := l.rawEvent(raw)
	if !ok {
		return fastNone, 0, nil
	}
	if ev < len(l.ev.fast) && lay.Callchain >= 0 && lay.TID >= 0 && l.ev.fast[ev] {
		return fastStack, ev, lay
	}
	if ev < len(l.ev.srcs) && l.ev.srcs[ev] == profile.Exact {
		return fastExact, ev, lay
	}
	return fastNone, 0, nil
}

// fastChain returns the process and where the callchain (its u64s as they
// sit in the record) is, raw[off:end], of a sample record foldFast may
// take (layout lay), false when the callchain is empty or does not fit in
// the record.
func fastChain(raw []byte, lay *perf.SampleLayout) (pid, off, end uint32, ok bool) {
	if lay.Callchain+8 > len(raw) {
		return 0, 0, 0, false
	}
	n := binary.LittleEndian.Uint64(raw[lay.Callchain:])
	if n == 0 || n > uint64(len(raw)-lay.Callchain-8)/8 {
		return 0, 0, 0, false
	}
	off = uint32(lay.Callchain + 8)
	return binary.LittleEndian.Uint32(raw[lay.TID:]), off, off + 8*uint32(n), true
}

// rawEvent returns the event index and the field layout of the sample
// record raw (the recording's one event when its samples carry no id),
// false when they cannot be told.
func (l *loader) rawEvent(raw []byte) (int, *perf.SampleLayout, bool) {
	ev, lay, err := l.ev.format.Layout(raw)
	if err != nil {
		return 0, nil, false
	}
	if ev < 0 {
		if l.ev.format.Len() != 1 {
			return 0, nil, false
		}
		ev = 0
	}
	return ev, lay, true
}
