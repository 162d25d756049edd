package profile

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/hwprof/hwprof/ccmap"
	"github.com/hwprof/hwprof/internal/engine"
	"github.com/hwprof/hwprof/internal/procmap"
	"github.com/hwprof/hwprof/internal/uprobe"
	"github.com/hwprof/hwprof/lbr"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/perfdata"
	"github.com/hwprof/hwprof/unwind"
)

// LoadOptions say where a recording's objects are found and how samples
// are folded.
type LoadOptions struct {
	// Event, if set, keeps only the samples of the event of that name
	// (as the recording names it, e.g. "cpu-clock"); the others are
	// skipped as if absent.
	Event string
	// PIDs, TIDs and Comms, when not empty, keep only the samples of
	// those processes, threads and process command names (the name the
	// recording's COMM records give the sample's process at the sample's
	// time, as perf report --comms); the others are skipped before
	// folding, as if absent. Given together, a sample must match each.
	PIDs  []int
	TIDs  []int
	Comms []string
	// SymFS prefixes every object path, like perf's --symfs.
	SymFS string
	// DebugDirs are directories of binaries and debug files named by
	// build-id (see symbolize.Options).
	DebugDirs []string
	// Objects maps an object path as recorded to the local file to read
	// for it, for recordings of programs whose file has another name here
	// (not under SymFS; its build-id is not checked).
	Objects map[string]string
	// SiteLines resolves the source file and line of every call site
	// from the objects' DWARF (slow for large debug packages: it reads
	// all of their DWARF). Without it, functions are named by the objects'
	// symbols and sites have their object and offset only.
	SiteLines bool
	// Workers, DedupRatio and Seed configure the folding (package
	// pipeline): the number of folding goroutines (0: GOMAXPROCS), the
	// share RR in (0, 1] of already-seen stacks folded (with weight 1/RR;
	// 0 or 1: every stack), and the seed of the random choices (the LBR
	// estimate's rounding too).
	Workers    int
	DedupRatio float64
	Seed       uint64
}

// Load reads a recording (perf.data, file or pipe mode) into a Profile.
//
// It reads the records in time order, keeps the process model (MMAP,
// MMAP2, COMM, FORK, EXIT), unwinds each sample as it was recorded
// (frame-pointer callchain, DWARF stack copy or LBR call stack) and folds
// it by code address: each frame's (object, address) gets a dense address
// id, a return address standing for its call instruction. Then every
// unique address is symbolized once per object (objects in parallel), each
// address id is mapped to its function (one per object and symbol) and
// the address-level map is projected onto functions. A call site is the
// call instruction's address in its object: the `from` of an LBR entry,
// and for a return address the instruction that ends at it and decodes as
// a call (ra-1 when the code cannot be read).
//
// How each event's samples are folded depends on its source (see
// Recording.Source): timer and calls samples are stacks weighted by
// their period (calls: call edges are not derived from single call
// samples yet; their adjacent frames give the edges, as for timer); lbr
// samples are their stacks plus the call edges of their branch stacks,
// estimated with package lbr's Estimator (every entry weighted P/D, D the
// deepest window seen), summed per edge and rounded to an integer without
// bias; exact samples (uprobes at function entries) are one call each:
// the callee is the function at the sample IP, the call site the return
// address on top of the user stack copy, the context the frame-pointer
// callchain above the caller.
//
// A file that cannot be opened gives a nil Profile and the error. When
// reading stops at an error later (a truncated or corrupt file), Load
// returns the profile of every record read before it together with the
// error (matching perfdata.ErrTruncated when the file ends early).
func Load(path string, o LoadOptions) (*Profile, error) {
	return load(path, o, nil)
}

// LoadFrom is Load of a recording already opened (standard input, for
// "-i -"), named name in messages and in the profile. It closes r.
func LoadFrom(r *perfdata.Reader, name string, o LoadOptions) (*Profile, error) {
	return loadFrom(r, name, o, nil)
}

// load is Load with a hook that may change the loader before it reads
// (tests).
func load(path string, o LoadOptions, tweak func(*loader)) (*Profile, error) {
	r, err := perfdata.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	return loadFrom(r, path, o, tweak)
}

func loadFrom(r *perfdata.Reader, path string, o LoadOptions, tweak func(*loader)) (*Profile, error) {
	defer r.Close()
	l := newLoader(r, o)
	if tweak != nil {
		tweak(l)
	}
	defer l.code.close()
	if !o.SiteLines {
		l.eng.Symbols.PreloadKernel(r.Attrs())
	}
	readErr := l.read()
	p := l.finish()
	p.Recording.File = path
	if readErr != nil {
		return p, fmt.Errorf("load %s: %w", path, readErr)
	}
	return p, nil
}

// loader is the state of one Load.
type loader struct {
	r *perfdata.Reader
	o LoadOptions
	// the reader's event table as of the sample being folded (snapshot)
	format   *perf.SampleFormat
	attrs    []perfdata.EventAttr
	srcs     []eventSource
	used     []bool
	eng      *engine.Engine // objects, process model, unwinder, symbols
	maps     *procmap.Map   // eng.Maps
	unwinder *unwind.Unwinder
	code     *codeReader
	addrs    *addrTable
	fold     folder
	rng      *rand.Rand

	// LBR: the decoder, the current sample (for its code reads), and per
	// edge the sum of the periods of its appearances.
	dec     *lbr.Decoder
	cur     *perf.Sample
	lbrSums map[lbrKey]lbrSum

	rec   Recording
	first uint64 // time of the first sample
	last  uint64
	timed bool
	// period history: per event and thread the last period seen, per
	// event the periods seen at all
	lastPeriod   map[evTID]uint64
	periodsSeen  []map[uint64]bool
	recent       evTID // the last sample's thread and period
	recentPeriod uint64
	hasRecent    bool
	fpOnly       []bool  // per event: unwound from the callchain alone
	fast         []bool  // per event: its samples may take foldFast
	noFast       bool    // decode every sample (tests)
	fastCount    *uint64 // if set, counts the samples foldFast folds (tests)
	stacks       *stackCache
	sumStacks    bool // sum repeated stacks' weights in the cache (no redundancy skipping)
	inline       bool // fold samples on the reading goroutine (tests)
	// sampleHook, if set, is given every sample and the address-level
	// stack it folded (nil when none), for tests; hookFrames is that stack
	sampleHook func(s *perf.Sample, frames []ccmap.Frame)
	hookFrames []ccmap.Frame
	// the functions of the address ids, set by finish (tests)
	fmap []ccmap.FuncID

	noRetAddr uint64 // exact samples without a return address
	// exact hits of Go programs: each thread's last probe event, and the
	// event whose next hit is a restart after stack growth (goRestart)
	lastExact  map[uint32]exactHit
	restart    map[exactHit]int
	goRestarts uint64
	// calls samples: the callchain buffer, and samples without an edge
	chain        []lbr.Addr
	callsUnknown uint64
	warnings     []string
	// the samples of each process kept, and for the Comms filter whether
	// a process's current name matches (emptied at every COMM, FORK and
	// EXIT)
	procs    map[uint32]*procTally
	commKeep map[uint32]bool

	// buffers reused from sample to sample
	frames  []unwind.Frame
	cframes []ccmap.Frame
	calls   []lbr.Call
}

type lbrKey struct {
	caller, callee ccmap.FuncID
	site           uint64
}

type lbrSum struct {
	periods uint64 // sum of the periods of the appearances with a known period
	plain   uint64 // appearances without a known period
}

func newLoader(r *perfdata.Reader, o LoadOptions) *loader {
	eng := engine.New(r, engine.Options{SymFS: o.SymFS, DebugDirs: o.DebugDirs, Objects: o.Objects})
	l := &loader{
		r: r, o: o,
		eng:      eng,
		maps:     eng.Maps,
		unwinder: eng.Unwinder,
		rng:      rand.New(rand.NewPCG(o.Seed, 0x9e3779b97f4a7c15)),
		lbrSums:  map[lbrKey]lbrSum{},
		stacks:   newStackCache(),
	}
	l.sumStacks = !(o.DedupRatio > 0 && o.DedupRatio < 1)
	l.snapshot()
	l.code = newCodeReader(eng.Objects.File)
	l.addrs = newAddrTable(l.code)
	l.dec = lbr.NewDecoder(lbrCode{l})
	l.fold = newFolder(o)
	return l
}

// read applies every record; it returns the reader's error.
//
// Samples are decoded and folded on a second goroutine (sampleWorker), in
// their order, while this one reads on; it applies every other record
// itself, after the samples before it are done: the worker reads the
// process model and a copy of the reader's event table (fmt, attrs) that
// is renewed after every record of perf's own that may change it.
func (l *loader) read() error {
	w := l.startWorker()
	defer w.stop()
	for l.r.Next() {
		rec := l.r.Record()
		switch t := rec.Type(); t {
		case perf.RecordSample:
			if l.r.Format().Len() > len(l.srcs) {
				w.wait()
				l.growEvents()
				l.snapshot()
			}
			w.add(rec.Raw)
		case perf.RecordMmap, perf.RecordMmap2:
			w.wait()
			if d, err := l.r.Decode(); err == nil {
				l.eng.Apply(d)
				l.clearStacks()
			}
		case perf.RecordFork, perf.RecordExit:
			w.wait()
			if d, err := l.r.Decode(); err == nil {
				l.maps.Apply(d)
				clear(l.commKeep)
			}
		case perf.RecordComm:
			w.wait()
			if d, err := l.r.Decode(); err == nil {
				l.maps.Apply(d)
				clear(l.commKeep)
				if c, ok := d.(*perf.Comm); ok && c.Exec() {
					l.dec.Forget(c.PID)
					l.clearStacks()
				}
			}
		case perf.RecordLost:
			if d, err := l.r.Decode(); err == nil {
				if x, ok := d.(*perf.Lost); ok {
					l.rec.Lost += x.Lost
				}
			}
		case perf.RecordLostSamples:
			if d, err := l.r.Decode(); err == nil {
				if x, ok := d.(*perf.LostSamples); ok {
					l.rec.Lost += x.Lost
				}
			}
		case perf.RecordThrottle:
			l.rec.Throttled++
		case perf.RecordFinishedRound:
		default:
			if t >= perf.RecordHeaderAttr { // may have changed the events
				w.wait()
				l.snapshot()
			}
		}
	}
	w.wait()
	return l.r.Err()
}

// snapshot copies the reader's event table for the sample worker (which
// must be idle).
func (l *loader) snapshot() {
	l.format = l.r.Format().Clone()
	l.attrs = slices.Clone(l.r.Attrs())
}

// fold decodes and folds one sample record.
func (w *sampleWorker) fold(raw []byte) {
	if w.l.foldFast(raw) {
		return
	}
	if err := w.l.format.DecodeSample(raw, &w.s); err == nil {
		w.l.sample(&w.s) // the reader counts undecodable samples in its warnings
	}
}

// A sampleWorker decodes and folds samples on its own goroutine: the
// reading goroutine copies sample records into batches and hands them
// over; wait returns when every batch handed over is done.
type sampleWorker struct {
	l        *loader
	cur      *recBatch
	free     []*recBatch
	work     chan *recBatch
	done     chan *recBatch
	inflight int
	s        perf.Sample // the worker's
}

// recBatch holds sample records back to back; ends[i] is where record i
// ends.
type recBatch struct {
	buf  []byte
	ends []int
}

const (
	batchRecords    = 1024
	batchBytes      = 256 << 10
	batchesInFlight = 3
)

func (l *loader) startWorker() *sampleWorker {
	w := &sampleWorker{
		l:    l,
		cur:  &recBatch{},
		work: make(chan *recBatch, batchesInFlight),
		done: make(chan *recBatch, batchesInFlight),
	}
	go w.run()
	return w
}

// add queues a copy of a sample record.
func (w *sampleWorker) add(raw []byte) {
	if w.l.inline {
		w.fold(raw)
		return
	}
	b := w.cur
	b.buf = append(b.buf, raw...)
	b.ends = append(b.ends, len(b.buf))
	if len(b.ends) >= batchRecords || len(b.buf) >= batchBytes {
		w.send()
	}
}

// send hands the current batch over, waiting while batchesInFlight are.
func (w *sampleWorker) send() {
	if len(w.cur.ends) == 0 {
		return
	}
	for w.inflight >= batchesInFlight {
		w.free = append(w.free, <-w.done)
		w.inflight--
	}
	w.work <- w.cur
	w.inflight++
	if n := len(w.free); n > 0 {
		w.cur, w.free = w.free[n-1], w.free[:n-1]
	} else {
		w.cur = &recBatch{}
	}
}

// wait hands the current batch over and returns when all are done.
func (w *sampleWorker) wait() {
	w.send()
	for w.inflight > 0 {
		w.free = append(w.free, <-w.done)
		w.inflight--
	}
}

// stop ends the worker after the batches handed over.
func (w *sampleWorker) stop() {
	w.wait()
	close(w.work)
}

func (w *sampleWorker) run() {
	for b := range w.work {
		start := 0
		for _, end := range b.ends {
			w.fold(b.buf[start:end])
			start = end
		}
		b.buf, b.ends = b.buf[:0], b.ends[:0]
		w.done <- b
	}
}

// event returns the index of s's event, or -1.
func (l *loader) event(s *perf.Sample) int {
	ev := s.Attr
	if ev < 0 && l.format.Len() == 1 {
		ev = 0
	}
	if ev >= l.format.Len() {
		return -1
	}
	return ev
}

// period is s's period: its PERIOD field, or the event's fixed period; 0
// when neither is known (a frequency-mode event without PERIOD).
func (l *loader) period(s *perf.Sample, ev int) uint64 {
	return l.periodOf(ev, s.Has(perf.SamplePeriod), s.Period)
}

// periodOf is the period of a sample of event ev whose PERIOD field, if
// it has one (has), holds v.
func (l *loader) periodOf(ev int, has bool, v uint64) uint64 {
	if has {
		return v
	}
	if ev >= 0 {
		if a := l.format.Attr(ev); a != nil && !a.Freq() {
			return a.SamplePeriod
		}
	}
	return 0
}

func (l *loader) growEvents() {
	n := l.r.Format().Len()
	if len(l.srcs) < n {
		l.srcs = classify(l.r.Attrs(), l.r.Features())
		for len(l.used) < len(l.srcs) {
			a := l.r.Format().Attr(len(l.used))
			l.used = append(l.used, false)
			l.periodsSeen = append(l.periodsSeen, map[uint64]bool{})
			l.fpOnly = append(l.fpOnly, unwind.MethodFor(a) == unwind.MethodFP)
		}
		l.fast = l.fast[:0]
		for i, src := range l.srcs {
			l.fast = append(l.fast, l.fpOnly[i] && src != srcExact && src != srcLBR && src != srcCalls &&
				(l.o.Event == "" || l.r.Attrs()[i].Name == l.o.Event))
		}
	}
}

// foldFast folds a sample whose stack is in the stack cache without
// decoding it, when its event's samples are stacks alone (timer-like,
// unwound from the frame-pointer callchain: l.fast) and have their
// callchain at a fixed place (perf.SampleLayout): it reads the thread,
// time, period and callchain where they sit and does what sample does
// for them. It returns false for every other sample, to be decoded.
func (l *loader) foldFast(raw []byte) bool {
	if l.noFast {
		return false
	}
	ev, lay, err := l.format.Layout(raw)
	if err != nil || ev >= len(l.fast) || lay.Callchain < 0 || lay.TID < 0 {
		return false
	}
	if ev < 0 {
		if l.format.Len() != 1 {
			return false
		}
		ev = 0
	}
	if !l.fast[ev] || lay.Callchain+8 > len(raw) {
		return false
	}
	n := binary.LittleEndian.Uint64(raw[lay.Callchain:])
	if n == 0 || n > uint64(len(raw)-lay.Callchain-8)/8 {
		return false
	}
	chain := raw[lay.Callchain+8 : lay.Callchain+8+8*int(n)]
	pid := binary.LittleEndian.Uint32(raw[lay.TID:])
	tid := binary.LittleEndian.Uint32(raw[lay.TID+4:])
	if !l.keep(pid, tid, true) {
		return true // filtered out: done with it
	}
	i := l.stacks.findBytes(hashChainBytes(pid, chain), pid, chain)
	if i < 0 {
		return false
	}
	var v uint64
	if lay.Period >= 0 {
		v = binary.LittleEndian.Uint64(raw[lay.Period:])
	}
	period := l.periodOf(ev, lay.Period >= 0, v)
	var t uint64
	if lay.Time >= 0 {
		t = binary.LittleEndian.Uint64(raw[lay.Time:])
	}
	l.rec.Samples++
	l.used[ev] = true
	l.notePeriodAt(ev, tid, t, lay.Time >= 0, period)
	l.tally(pid, max(period, 1))
	l.foldCached(i, max(period, 1))
	if l.fastCount != nil {
		*l.fastCount++
	}
	return true
}

// sample folds one sample (on the sample worker).
func (l *loader) sample(s *perf.Sample) {
	if l.sampleHook != nil {
		l.hookFrames = nil
		defer func() { l.sampleHook(s, l.hookFrames) }()
	}
	ev := l.event(s)
	if ev < 0 || ev >= len(l.srcs) {
		return
	}
	if l.o.Event != "" && l.attrs[ev].Name != l.o.Event {
		return
	}
	if !l.keep(s.PID, s.TID, s.Has(perf.SampleTID)) {
		return
	}
	l.rec.Samples++
	l.used[ev] = true
	period := l.period(s, ev)
	l.notePeriod(s, ev, period)
	weight := max(period, 1)
	l.tally(s.PID, weight)
	switch l.srcs[ev] {
	case srcExact:
		if l.goRestart(s, ev) {
			return
		}
		l.exact(s, weight)
	case srcLBR:
		l.stack(s, ev, weight)
		l.branches(s, period)
	case srcCalls:
		l.stack(s, ev, weight)
		l.callSample(s, ev, weight)
	default:
		l.stack(s, ev, weight)
	}
}

// evTID names one thread's samples of one event.
type evTID struct {
	ev  int
	tid uint32
}

// notePeriod keeps the recording's duration and each event's period
// history: its first period and every change, from the samples' PERIOD
// field. A change is a thread whose samples' period differs from its
// previous ones, or a thread that starts with a period the event has not
// had before: threads that inherited an event before its period changed
// keep the old period (PERF_EVENT_IOC_PERIOD reaches only the event it is
// given), so an event's threads may sample at two periods at once, which
// is not a change each time their samples interleave. Frequency-mode
// events (whose period the kernel adjusts sample by sample) keep their
// first period only.
func (l *loader) notePeriod(s *perf.Sample, ev int, period uint64) {
	l.notePeriodAt(ev, s.TID, s.Time, s.Has(perf.SampleTime), period)
}

// notePeriodAt is notePeriod for a sample of thread tid at time t (when
// timed).
func (l *loader) notePeriodAt(ev int, tid uint32, t uint64, timed bool, period uint64) {
	if timed {
		if !l.timed {
			l.first, l.timed = t, true
		}
		l.first = min(l.first, t)
		l.last = max(l.last, t)
	}
	if period == 0 {
		return
	}
	if l.lastPeriod == nil {
		l.lastPeriod = map[evTID]uint64{}
	}
	k := evTID{ev, tid}
	if l.hasRecent && k == l.recent && period == l.recentPeriod {
		return // the common case: the same thread at the same period
	}
	l.recent, l.recentPeriod, l.hasRecent = k, period, true
	prev, known := l.lastPeriod[k]
	if prev == period {
		return
	}
	l.lastPeriod[k] = period
	seen := l.periodsSeen[ev]
	if (!known && seen[period]) || (len(seen) > 0 && l.format.Attr(ev).Freq()) {
		return
	}
	if seen[period] && l.lastChange(ev) == period {
		// another thread (or CPU-wide event) reaching the period the
		// event changed to last: the same change, not another one
		return
	}
	seen[period] = true
	var since uint64
	if timed && t > l.first {
		since = t - l.first
	}
	l.rec.Periods = append(l.rec.Periods, PeriodChange{TimeNS: since, Event: l.attrs[ev].Name, Period: period})
}

// lastChange is the period of event ev's latest entry in the period
// history (0 if none).
func (l *loader) lastChange(ev int) uint64 {
	name := l.attrs[ev].Name
	for i := len(l.rec.Periods) - 1; i >= 0; i-- {
		if l.rec.Periods[i].Event == name {
			return l.rec.Periods[i].Period
		}
	}
	return 0
}

// frameKey is the address a frame is interned by, and its call site: the
// instruction pointer, or the call instruction of a return address.
func (l *loader) frameKey(f *unwind.Frame, pid uint32) addrKey {
	obj := engine.FrameObject(f)
	a := procmap.ObjAddr(f.ObjAddr)
	if obj == nil {
		a = procmap.ObjAddr(f.Addr)
	}
	if f.Kind == unwind.FrameReturn {
		if obj == nil {
			return addrKey{obj: nil, addr: max(a, 1) - 1}
		}
		a = l.addrs.callOf(obj, a)
	}
	return newAddrKey(obj, pid, a)
}

// toFrames appends the address-level frames of an unwound stack, innermost
// first; each but the first has the call site leading to the one below.
func (l *loader) toFrames(dst []ccmap.Frame, frames []unwind.Frame, pid uint32, leafSite bool) []ccmap.Frame {
	for i := range frames {
		k := l.frameKey(&frames[i], pid)
		f := ccmap.Frame{Func: l.addrs.id(k)}
		if i > 0 || leafSite {
			f.Site = uint64(k.addr)
		}
		dst = append(dst, f)
	}
	return dst
}

func (l *loader) stack(s *perf.Sample, ev int, weight uint64) {
	fp := l.fpOnly[ev] && s.Has(perf.SampleCallchain) && len(s.Callchain) > 0
	var h uint64
	if fp {
		h = hashChain(s.PID, s.Callchain)
		if i := l.stacks.find(h, s.PID, s.Callchain); i >= 0 {
			if l.sampleHook != nil {
				e := &l.stacks.entries[i]
				l.hookFrames = l.stacks.frames[e.frame:e.frameTo]
			}
			l.foldCached(i, weight)
			return
		}
	}
	l.frames = l.eng.Frames(l.frames[:0], s)
	if len(l.frames) == 0 {
		return
	}
	l.cframes = l.toFrames(l.cframes[:0], l.frames, s.PID, false)
	l.hookFrames = l.cframes
	if fp {
		i := l.stacks.put(h, s.PID, s.Callchain, l.cframes)
		if i < 0 {
			l.clearStacks()
			i = l.stacks.put(h, s.PID, s.Callchain, l.cframes)
		}
		if i >= 0 {
			l.foldCached(i, weight)
			return
		}
	}
	l.fold.Add(l.cframes, weight)
}

// foldCached folds a sample of the stack of cache entry i: its weight is
// summed in the entry (folded at the next clearStacks), or, with
// redundancy skipping, which decides sample by sample, folded now.
func (l *loader) foldCached(i int, weight uint64) {
	e := &l.stacks.entries[i]
	if l.sumStacks {
		e.pending += weight
		return
	}
	l.fold.Add(l.stacks.frames[e.frame:e.frameTo], weight)
}

// clearStacks folds the stack cache's pending weights and empties it.
func (l *loader) clearStacks() {
	l.stacks.flush(l.fold.Add)
	l.stacks.clear()
}

// branches folds the call edges of s's branch stack into the per-edge
// period sums.
func (l *loader) branches(s *perf.Sample, period uint64) {
	if len(s.Branches) == 0 {
		return
	}
	l.cur = s
	l.calls = l.dec.Decode(l.calls[:0], s.PID, s.Branches)
	for _, c := range l.calls {
		site := l.runtimeKey(s, uint64(c.Site))
		callee := l.runtimeKey(s, uint64(c.Callee))
		k := lbrKey{caller: l.addrs.id(site), callee: l.addrs.id(callee), site: uint64(site.addr)}
		sum := l.lbrSums[k]
		if period > 0 {
			sum.periods += period
		} else {
			sum.plain++
		}
		l.lbrSums[k] = sum
	}
	l.cur = nil
}

// runtimeKey interns a runtime address of s's process.
func (l *loader) runtimeKey(s *perf.Sample, a uint64) addrKey {
	if m, oa, ok := l.maps.Lookup(s.PID, s.TID, s.Time, procmap.Addr(a)); ok {
		return newAddrKey(m.Object, s.PID, oa)
	}
	return addrKey{obj: nil, addr: procmap.ObjAddr(a)}
}

// flushLBR turns the per-edge sums into estimated call counts: each
// appearance weighs P/D (lbr.Estimator, mode EveryEntry), the sum over an
// edge is rounded up or down at random in proportion to its fraction, so
// the integer count keeps the estimate's expectation.
func (l *loader) flushLBR() {
	if len(l.lbrSums) == 0 {
		return
	}
	est := lbr.Estimator{Depth: l.dec.MaxWindow(), Mode: lbr.EveryEntry}
	keys := make([]lbrKey, 0, len(l.lbrSums))
	for k := range l.lbrSums {
		keys = append(keys, k)
	}
	sortLBRKeys(keys) // the random rounding must not depend on map order
	for _, k := range keys {
		sum := l.lbrSums[k]
		calls := float64(sum.plain)
		if sum.periods > 0 {
			calls += est.Weight(sum.periods, 0)
		}
		n := uint64(calls)
		if frac := calls - float64(n); frac > 0 && l.rng.Float64() < frac {
			n++
		}
		if n > 0 {
			l.fold.AddEdge(nil, ccmap.CallSite{Caller: k.caller, Addr: k.site}, k.callee, n)
		}
	}
}

// exact folds one uprobe hit: a call of the function at the IP from the
// call instruction before the return address on top of the user stack.
// goRestart reports whether an exact hit is a Go function restarting
// rather than being called: when a goroutine's stack must grow (or it is
// asked to yield), the function's prologue calls runtime.morestack_noctxt,
// which copies the stack and jumps back to the function's entry, so its
// entry probe fires twice for one call, with the same return address, and
// possibly on another thread when the goroutine was rescheduled. A hit of
// morestack (probed: its event is named after it) right after a function's
// entry on the same thread marks that (function, return address) as due
// for one restart; the next such hit, on any thread, is not counted. (If
// another goroutine calls the function from the same return address
// meanwhile, the one skipped is that call: the edge's count is the same.)
// Without a probe on morestack the restarts count as calls.
func (l *loader) goRestart(s *perf.Sample, ev int) bool {
	if l.lastExact == nil {
		l.lastExact, l.restart = map[uint32]exactHit{}, map[exactHit]int{}
	}
	ra, _ := uprobe.ReturnAddress(s)
	hit := exactHit{ev, ra}
	prev, hadPrev := l.lastExact[s.TID]
	l.lastExact[s.TID] = hit
	if strings.Contains(l.r.Attrs()[ev].Name, "morestack") { // "GROUP:runtime_morestack_noctxt_abi0"
		if hadPrev {
			l.restart[prev]++
		}
		return false
	}
	if n := l.restart[hit]; n > 0 {
		if n == 1 {
			delete(l.restart, hit)
		} else {
			l.restart[hit] = n - 1
		}
		l.goRestarts++
		return true
	}
	return false
}

// exactHit is a probe hit as goRestart matches them: the event (the
// function) and the return address.
type exactHit struct {
	ev int
	ra uint64
}

func (l *loader) exact(s *perf.Sample, weight uint64) {
	all := unwind.AppendCallchain(l.frames[:0], s, l.maps)
	user := all[:0]
	for _, f := range all {
		if !f.Kernel {
			user = append(user, f)
		}
	}
	if len(user) == 0 {
		user = l.eng.IPFrame(user, s)
	}
	ra, ok := uprobe.ReturnAddress(s)
	if len(user) == 0 || !ok {
		l.noRetAddr++
		return
	}
	l.frames = all
	callee := l.addrs.id(l.frameKey(&user[0], s.PID))
	caller := unwind.Frame{Addr: unwind.Addr(ra), Kind: unwind.FrameReturn}
	if m, oa, ok := l.maps.Lookup(s.PID, s.TID, s.Time, procmap.Addr(ra)); ok && m.Object != nil {
		caller.Object, caller.ObjAddr = m.Object, unwind.ObjAddr(oa)
	}
	ck := l.frameKey(&caller, s.PID)
	site := ccmap.CallSite{Caller: l.addrs.id(ck), Addr: uint64(ck.addr)}
	// The frame-pointer chain at a function's entry skips the caller (the
	// callee has not pushed its frame yet), unless the kernel put the
	// return address in itself (Linux 6.12+ does for uprobes at function
	// entry): the context is the caller, then its callers.
	above := user[1:]
	if len(above) > 0 && above[0].Addr == caller.Addr {
		above = above[1:]
	}
	l.cframes = append(l.cframes[:0], ccmap.Frame{Func: site.Caller, Site: site.Addr})
	l.cframes = l.toFrames(l.cframes, above, s.PID, true)
	l.fold.AddEdge(l.cframes, site, callee, weight)
}

// callSample folds the call edge a sample of a calls-retired event stands
// for, weighted by its period (each sample stands for period calls):
// lbr.CallFromSample derives its call site and callee from what the IP
// means at the event's precise level (see lbr/calls.go), the callchain
// and the code.
func (l *loader) callSample(s *perf.Sample, ev int, weight uint64) {
	a := l.r.Format().Attr(ev)
	cs := lbr.CallSample{PID: s.PID, IP: lbr.Addr(s.IP), Meaning: lbr.SampleIPMeaning(a.PreciseIP, s.Misc), Chain: l.chain[:0]}
	if s.Has(perf.SampleCallchain) {
		for _, r := range perf.SplitCallchain(s.Callchain).User {
			cs.Chain = append(cs.Chain, lbr.Addr(r))
		}
	}
	l.chain = cs.Chain
	l.cur = s
	e, ok := lbr.CallFromSample(cs, lbrCode{l})
	l.cur = nil
	if !ok || e.Site == 0 || e.Callee == 0 {
		l.callsUnknown++
		return
	}
	site := l.runtimeKey(s, uint64(e.Site))
	callee := l.runtimeKey(s, uint64(e.Callee))
	l.fold.AddEdge(nil, ccmap.CallSite{Caller: l.addrs.id(site), Addr: uint64(site.addr)}, l.addrs.id(callee), weight)
}

// lbrCode reads code for the LBR decoder through the process model at
// the current sample's thread and time.
type lbrCode struct{ l *loader }

func (c lbrCode) Code(pid uint32, addr lbr.Addr) ([]byte, bool) {
	s := c.l.cur
	if s == nil {
		return nil, false
	}
	m, oa, ok := c.l.maps.Lookup(pid, s.TID, s.Time, procmap.Addr(addr))
	if !ok || m.Object == nil {
		return nil, false
	}
	return c.l.code.read(m.Object, oa, lbr.MaxInstLen)
}
