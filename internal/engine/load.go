package engine

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/ccmap"
	"github.com/hwprof/hwprof/internal/procmap"
	"github.com/hwprof/hwprof/lbr"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/perfdata"
	"github.com/hwprof/hwprof/profile"
	"github.com/hwprof/hwprof/symbolize/debuginfod"
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
	// Debuginfod, when not nil, fetches the debug files of stripped
	// objects by build-id (see engine.Options).
	Debuginfod *debuginfod.Client
	// SiteLines resolves the source file and line of every call site
	// from the objects' DWARF (slow for large debug packages: it reads
	// all of their DWARF). Without it, functions are named by the objects'
	// symbols and sites have their object and offset only. With it,
	// functions also get their file and start line, call sites their
	// inlined frames (profile.Site.Frames), and objects without a GNU
	// build-id their Go build-id (Recording.GoBuildIDs): what a pprof
	// profile needs.
	SiteLines bool
	// Instrs lists the self weight of every sampled instruction with
	// its source frames (profile.Profile.Instrs, for sample-based FDO
	// profiles); it needs SiteLines.
	Instrs bool
	// Workers, DedupRatio and Seed configure the folding (package
	// pipeline): the number of folding goroutines (0: GOMAXPROCS), which
	// is also the number of goroutines preparing samples (decoding and
	// unwinding them; the profile is the same whatever it is), the
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
func Load(path string, o LoadOptions) (*profile.Profile, error) {
	return load(path, o, testOptions{})
}

// LoadFrom is Load of a recording already opened (standard input, for
// "-i -"), named name in messages and in the profile. It closes r.
func LoadFrom(r *perfdata.Reader, name string, o LoadOptions) (*profile.Profile, error) {
	return loadFrom(r, name, o, testOptions{})
}

// load is Load with test switches.
func load(path string, o LoadOptions, t testOptions) (*profile.Profile, error) {
	r, err := perfdata.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	return loadFrom(r, path, o, t)
}

func loadFrom(r *perfdata.Reader, path string, o LoadOptions, t testOptions) (*profile.Profile, error) {
	defer r.Close()
	l := newLoader(r, o, t)
	defer l.code.close()
	readErr := l.read()
	p := l.finish()
	p.Recording.File = path
	if readErr != nil {
		return p, fmt.Errorf("load %s: %w", path, readErr)
	}
	return p, nil
}

// loader is the state of one Load, in groups: the reader and what it
// shares with the sample worker (events), the analysis (eng and the
// address table), the folding, and the state of each kind of sample.
type loader struct {
	r *perfdata.Reader
	o LoadOptions
	// test switches (the zero value in Load)
	test testOptions

	ev       eventTable
	eng      *Engine      // objects, process model, unwinder, symbols
	maps     *procmap.Map // eng.Maps
	unwinder *unwind.Unwinder
	code     *codeReader
	addrs    *addrTable

	fold      folder
	stacks    *stackCache
	sumStacks bool // sum repeated stacks' weights in the cache (no redundancy skipping)
	rng       *rand.Rand

	rec      profile.Recording
	per      periodHistory
	filter   processFilter
	lbr      lbrState
	ranges   rangeState // LBR's ranges and calls for sample-based FDO (LoadOptions.Instrs)
	probes   exactState
	warnings []string
	// the perf_event_max_stack sysctl, read once when needed (maxStack)
	sysMaxStack uint64
	// the samples and weight of the whole stacks whose outermost frame is
	// each address id (countShape; judged by unrooted)
	rootSamples, rootWeight []uint64

	// buffers reused from sample to sample
	decoded   perf.Sample // a sample a fast fold left (foldPrepared)
	leafChain []uint64    // the repaired callchain (repairLeaf)
	frames    []unwind.Frame
	cframes   []ccmap.Frame
	// the address-level stack the current sample folded (for
	// test.sampleHook; nil when none)
	hookFrames []ccmap.Frame
}

// testOptions are switches tests set on a load (load's last argument).
type testOptions struct {
	inline     bool    // fold samples on the reading goroutine
	noFast     bool    // decode every sample: no foldFast
	eachStack  bool    // fold every sample's stack, not summed in the stack cache
	stackLimit int     // stacks the stack cache holds at most (0: maxStacks)
	fastCount  *uint64 // if set, counts the samples foldFast folds
	// sampleHook, if set, is given every sample and the address-level
	// stack it folded (nil when none)
	sampleHook func(s *perf.Sample, frames []ccmap.Frame)
	// funcMap, if set, is given the function of every address id
	funcMap *[]ccmap.FuncID
	// kallsymsRead, if set, is called as kallsyms is read (Symbols.onRead)
	kallsymsRead func(preload bool)
	// noPreload: no object's symbols are read ahead (PreloadObject);
	// preloads, if set, counts the objects whose symbols are
	noPreload bool
	preloads  *int
	// leafCut, if above 0, cuts every sample's stack copy to that many
	// bytes before the leaf repair (TestLeafCopyCut)
	leafCut int
}

// eventTable is the reader's event table as of the sample being folded
// (a snapshot the sample worker reads), and per event how its samples are
// folded.
type eventTable struct {
	format *perf.SampleFormat
	attrs  []perfdata.EventAttr
	srcs   []profile.Source
	used   []bool // the event gave samples
	fpOnly []bool // unwound from the callchain alone
	fast   []bool // its samples may take foldFast
	exact  []exactEvent
	// per event whether it probes Go's morestack (its event is named
	// after it: "GROUP:runtime_morestack_noctxt_abi0"), and whether any
	// does (else goRestart has nothing to match)
	isMore    []bool
	morestack bool
}

// exactEvent is what exactFields needs of an event: whether its samples
// may be folded from their records (an exact event, LoadOptions.Event's
// when set, with a stack copy and no raw data or branch stack), and
// whether they have the user registers between the callchain and the
// stack copy, regWords of them unless the ABI is NONE.
type exactEvent struct {
	ok, regs bool
	regWords int
}

// periodHistory is the recording's time span and each event's period
// history: per event and thread the last period seen, per event the
// periods seen at all (see notePeriod).
type periodHistory struct {
	first, last  uint64 // times of the first and last samples
	timed        bool   // a sample had a time
	lastPeriod   map[evTID]uint64
	periodsSeen  []map[uint64]bool
	recent       evTID // the last sample's thread and period
	recentPeriod uint64
	hasRecent    bool
}

// processFilter is the tally of the samples of each process kept, what
// the filter knows of each process now (procNow, emptied at every COMM,
// FORK and EXIT), and while filtering the count of every sample's thread.
type processFilter struct {
	procs map[uint32]*procTally
	now   map[uint32]procState
	seen  map[sampledKey]*uint64
	// the tally of the last sample's process, lastPID (nil: none yet)
	last    *procTally
	lastPID uint32
	// the count of the last sample's thread, lastKey (nil: none yet)
	lastSeen *uint64
	lastKey  sampledKey
	counted  bool // the record being folded was counted in seen
}

// lbrState is the decoding of branch stacks and call samples: the LBR
// decoder, the current sample (for its code reads), per edge the sum of
// the periods of its appearances, and call samples whose edge could not
// be derived.
type lbrState struct {
	dec          *lbr.Decoder
	cur          *perf.Sample
	edges        lbrEdges         // per edge the sum of the periods of its appearances
	calls        []lbr.Call       // buffer
	chain        []addrspace.Addr // buffer: a call sample's user callchain
	callsUnknown uint64
}

// exactState is the folding of probe hits: hits without a return
// address, and for Go programs each thread's last probe event and the
// hits whose next one is a restart after stack growth (goRestart).
type exactState struct {
	noRetAddr  uint64
	notCall    uint64 // hits whose return address follows no call
	lastExact  map[uint32]exactHit
	restart    map[exactHit]int
	goRestarts uint64
	// cache holds the folded form of recent hits (see exactCached)
	cache   *stackCache
	key     []uint64 // buffer: a hit's cache key
	lastHit int      // the cache entry foldExactHit found last (findHit)
}

type lbrKey struct {
	caller, callee ccmap.FuncID
	site           uint64
}

type lbrSum struct {
	periods uint64 // sum of the periods of the appearances with a known period
	plain   uint64 // appearances without a known period
}

func newLoader(r *perfdata.Reader, o LoadOptions, t testOptions) *loader {
	eng := New(r, Options{SymFS: o.SymFS, DebugDirs: o.DebugDirs, Objects: o.Objects, Debuginfod: o.Debuginfod})
	l := &loader{
		r: r, o: o, test: t,
		eng:      eng,
		maps:     eng.Maps,
		unwinder: eng.Unwinder,
		rng:      rand.New(rand.NewPCG(o.Seed, 0x9e3779b97f4a7c15)),
		lbr:      lbrState{edges: newLBREdges()},
		stacks:   newStackCache(),
	}
	if t.stackLimit > 0 {
		l.stacks.limit = t.stackLimit
	}
	eng.Symbols.onRead = t.kallsymsRead
	l.sumStacks = !(o.DedupRatio > 0 && o.DedupRatio < 1) && !t.eachStack
	l.snapshot()
	l.code = newCodeReader(eng.Objects.File)
	l.addrs = newAddrTable(l.code)
	if !o.SiteLines && !t.noPreload {
		// each object's symbols are read while the records are
		var last *addrspace.Object
		l.addrs.onNew = func(k addrKey) {
			if k.obj != last {
				last = k.obj
				if eng.Symbols.PreloadObject(k.obj) && t.preloads != nil {
					*t.preloads++
				}
			}
		}
	}
	l.lbr.dec = lbr.NewDecoder(lbrCode{l})
	l.fold = newFolder(o)
	return l
}

// read applies every record; it returns the reader's error.
//
// Samples are prepared on a pool of goroutines and folded on another, in
// their order (sampleWorker), while this one reads on; it applies every
// other record itself, after the samples before it are done: the workers
// read the process model and a copy of the reader's event table (fmt,
// attrs) that is renewed before the first sample that follows records of
// perf's own that may change it.
func (l *loader) read() error {
	w := l.startWorker()
	defer w.stop()
	// stale: the event table may have changed since the last snapshot,
	// which is renewed before the next sample only (not after each of
	// thousands of EVENT_UPDATE records in a row).
	stale := false
	for l.r.Next() {
		raw, stable := l.r.Raw() // not a Record: its copy stalls (wide loads of narrow stores)
		switch t := perf.RecordType(binary.LittleEndian.Uint32(raw)); t {
		case perf.RecordSample:
			if KernelMode(raw) && !l.o.SiteLines {
				l.eng.Symbols.PreloadKernel() // kallsyms is read while the records are
			}
			if l.r.Format().Len() > len(l.ev.srcs) {
				w.wait()
				l.growEvents()
				stale = true
			}
			if stale {
				w.wait()
				l.snapshot()
				stale = false
			}
			w.add(raw, stable)
		case perf.RecordMmap, perf.RecordMmap2:
			w.wait()
			if d, ok := l.decode(); ok {
				l.eng.Apply(d)
				l.clearStacks()
			}
		case perf.RecordFork, perf.RecordExit:
			w.wait()
			if d, ok := l.decode(); ok {
				l.maps.Apply(d)
				clear(l.filter.now)
			}
		case perf.RecordComm:
			w.wait()
			if d, ok := l.decode(); ok {
				l.maps.Apply(d)
				clear(l.filter.now)
				if c, ok := d.(*perf.Comm); ok && c.Exec() {
					l.lbr.dec.Forget(c.PID)
					l.clearStacks()
				}
			}
		case perf.RecordLost:
			if d, ok := l.decode(); ok {
				if x, ok := d.(*perf.Lost); ok {
					l.rec.Lost += x.Lost
				}
			}
		case perf.RecordLostSamples:
			if d, ok := l.decode(); ok {
				if x, ok := d.(*perf.LostSamples); ok {
					l.rec.Lost += x.Lost
				}
			}
		case perf.RecordThrottle:
			l.rec.Throttled++
		case perf.RecordFinishedRound:
		default:
			if t >= perf.RecordHeaderAttr { // may have changed the events
				stale = true
			}
		}
	}
	w.wait()
	return l.r.Err()
}

// decode decodes the current record (of an Analyzed type other than
// SAMPLE); one that does not decode is counted as skipped.
func (l *loader) decode() (perf.Record, bool) {
	d, err := l.r.Decode()
	if err != nil {
		l.eng.Skips.Records++
		return nil, false
	}
	return d, true
}

// snapshot copies the reader's event table for the sample worker (which
// must be idle).
func (l *loader) snapshot() {
	l.ev.format = l.r.Format().Clone()
	l.ev.attrs = slices.Clone(l.r.Attrs())
	l.exactEvents()
}

// exactEvents fills in l.ev.exact, l.ev.isMore and l.ev.morestack from
// the event table (the sample worker must be idle).
func (l *loader) exactEvents() {
	l.ev.exact = l.ev.exact[:0]
	for ev := range min(len(l.ev.srcs), len(l.ev.attrs), l.ev.format.Len()) {
		var x exactEvent
		a := l.ev.format.Attr(ev)
		x.ok = l.ev.srcs[ev] == profile.Exact && (l.o.Event == "" || l.ev.attrs[ev].Name == l.o.Event) &&
			a.SampleType&(perf.SampleRaw|perf.SampleBranchStack) == 0 && a.SampleType&perf.SampleStackUser != 0
		x.regs = a.SampleType&perf.SampleRegsUser != 0
		x.regWords = bits.OnesCount64(a.SampleRegsUser)
		l.ev.exact = append(l.ev.exact, x)
	}
	l.ev.isMore, l.ev.morestack = l.ev.isMore[:0], false
	for _, a := range l.ev.attrs {
		m := strings.Contains(a.Name, "morestack")
		l.ev.isMore = append(l.ev.isMore, m)
		l.ev.morestack = l.ev.morestack || m
	}
}

// A sampleWorker decodes, unwinds and folds samples off the reading
// goroutine, in two stages: the reading goroutine copies sample records
// into batches and hands each batch both to a pool of preparers
// (prepare: decode, leaf repair, unwinding and the frames' address keys,
// which depend on the batch's records, the process model and the event
// table alone, all unchanged while batches are in flight) and, in order,
// to the one folding goroutine, which waits for each batch to be prepared
// and folds its samples in their order (sample: everything that keeps
// state, from the filters to the address ids and the stack cache). The
// profile is thus the same whatever the number of preparers. wait
// returns when every batch handed over is folded.
type sampleWorker struct {
	l        *loader
	cur      *recBatch
	free     []*recBatch
	prep     chan *recBatch // to the preparers
	order    chan *recBatch // to the folding goroutine, in reading order
	done     chan *recBatch // folded
	inflight int
	// batches in flight at most: the preparers' and ten more, so that a
	// goroutine that falls behind for a while (descheduled: the reader,
	// the preparers and the folder share the CPUs) does not stall the
	// others (n+2 left the 2-CPU machine idle: report on 820k exact
	// samples took ~70 ms instead of ~59)
	max      int
	ended    sync.WaitGroup
	inline   prepSample // test.inline: the one sample prepared
	inlineF  fastPrep
	inlinePS prepScratch
}

// prepScratch is what one preparer keeps from sample to sample: its
// return-address table and its unwinding scratch.
type prepScratch struct {
	rt  retTable
	unw unwind.Scratch
}

// recBatch holds sample records: recs[i] is record i, a copy in buf
// (records are copied there back to back, and buf never grows past its
// first capacity, so the copies stay put) or the Reader's own bytes when
// they are Stable (they stay valid until it is closed, after every batch
// is folded); n counts the bytes of all. fast[i] and prep[i] are what the
// preparers found of record i: fast[i] always (its state says whether
// prep[i] holds more), prep[i] only for a record that is not left to a
// fast fold. ready has a value when the batch is prepared.
type recBatch struct {
	buf   []byte
	recs  [][]byte
	n     int
	fast  []fastPrep
	prep  []prepSample
	ready chan struct{}
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
)

const (
	batchRecords = 1024
	batchBytes   = 256 << 10
)

// preparers is the number of preparing goroutines: LoadOptions.Workers,
// or GOMAXPROCS.
func (l *loader) preparers() int {
	if l.o.Workers > 0 {
		return l.o.Workers
	}
	return max(runtime.GOMAXPROCS(0), 1)
}

func (l *loader) startWorker() *sampleWorker {
	n := l.preparers()
	w := &sampleWorker{
		l:   l,
		cur: newRecBatch(),
		max: n + 10,
	}
	if l.test.inline {
		w.inlinePS = prepScratch{rt: newRetTable(l.code)} // the preparers have their own
		return w
	}
	w.prep = make(chan *recBatch, w.max)
	w.order = make(chan *recBatch, w.max)
	w.done = make(chan *recBatch, w.max)
	w.ended.Add(n + 1)
	for range n {
		go w.runPrepare()
	}
	go w.runFold()
	return w
}

// batchCap is the room of a batch's copies: a batch is sent once it
// holds batchBytes, and a record has at most 64 KiB.
const batchCap = batchBytes + 64<<10

func newRecBatch() *recBatch { return &recBatch{ready: make(chan struct{}, 1)} }

// add queues a sample record: itself if stable (the Reader's Record.Stable),
// else a copy.
func (w *sampleWorker) add(raw []byte, stable bool) {
	if w.l.test.inline {
		if !w.l.prepareFast(&w.inlineF, raw) {
			w.l.prepareSlow(&w.inlineF, &w.inline, raw, &w.inlinePS)
		}
		w.l.foldPrepared(&w.inlineF, &w.inline, raw)
		return
	}
	b := w.cur
	if !stable {
		if b.buf == nil {
			b.buf = make([]byte, 0, batchCap)
		}
		if len(b.buf)+len(raw) > cap(b.buf) { // not for records of up to 64 KiB
			w.send()
			w.add(raw, stable)
			return
		}
		s := len(b.buf)
		b.buf = append(b.buf, raw...)
		raw = b.buf[s:len(b.buf):len(b.buf)]
	}
	b.recs = append(b.recs, raw)
	b.n += len(raw)
	if len(b.recs) >= batchRecords || b.n >= batchBytes {
		w.send()
	}
}

// send hands the current batch over, waiting while w.max are in flight.
func (w *sampleWorker) send() {
	if len(w.cur.recs) == 0 {
		return
	}
	for w.inflight >= w.max {
		w.free = append(w.free, <-w.done)
		w.inflight--
	}
	w.prep <- w.cur
	w.order <- w.cur
	w.inflight++
	if n := len(w.free); n > 0 {
		w.cur, w.free = w.free[n-1], w.free[:n-1]
	} else {
		w.cur = newRecBatch()
	}
}

// wait hands the current batch over and returns when all are folded.
func (w *sampleWorker) wait() {
	if w.l.test.inline {
		return
	}
	w.send()
	for w.inflight > 0 {
		w.free = append(w.free, <-w.done)
		w.inflight--
	}
}

// stop ends the goroutines after the batches handed over.
func (w *sampleWorker) stop() {
	if w.l.test.inline {
		return
	}
	w.wait()
	close(w.prep)
	close(w.order)
	w.ended.Wait()
}

// runPrepare prepares batches, with a return-address table and an
// unwinding scratch of its own (prepScratch).
func (w *sampleWorker) runPrepare() {
	defer w.ended.Done()
	ps := &prepScratch{rt: newRetTable(w.l.code)}
	for b := range w.prep {
		if len(b.fast) < len(b.recs) {
			b.fast = append(b.fast, make([]fastPrep, len(b.recs)-len(b.fast))...)
		}
		for i, raw := range b.recs {
			if w.l.prepareFast(&b.fast[i], raw) {
				continue
			}
			// the large slots only once a record needs one (a batch of
			// records all folded fast has none to allocate and zero)
			if len(b.prep) < len(b.recs) {
				b.prep = append(b.prep, make([]prepSample, len(b.recs)-len(b.prep))...)
			}
			w.l.prepareSlow(&b.fast[i], &b.prep[i], raw, ps)
		}
		b.ready <- struct{}{}
	}
}

// runFold folds the batches in their order, each once prepared.
func (w *sampleWorker) runFold() {
	defer w.ended.Done()
	for b := range w.order {
		<-b.ready
		for i, raw := range b.recs {
			var p *prepSample // allocated for the records prepareSlow took
			if i < len(b.prep) {
				p = &b.prep[i]
			}
			w.l.foldPrepared(&b.fast[i], p, raw)
		}
		clear(b.recs) // let go of the records
		b.buf, b.recs, b.n = b.buf[:0], b.recs[:0], 0
		w.done <- b
	}
}

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

// foldPrepared folds a prepared sample record (on the folding goroutine):
// f and, unless it was left to a fast fold, p are what prepareFast or
// prepareSlow found (p may be nil for one left to a fast fold).
func (l *loader) foldPrepared(f *fastPrep, p *prepSample, raw []byte) {
	l.filter.counted = false // a new record (a fast fold may pass it on to sample)
	switch f.state {
	case prepFast:
		var done bool
		switch {
		case f.fast == fastStack && f.ok:
			done = l.foldFast(raw, int(f.ev), f.lay, f.pid, f.chain(raw), f.hash)
		case f.fast == fastExact && f.ok && l.exactFastOn():
			done = l.foldExactHit(raw, f)
		}
		if done {
			return
		}
		s := &l.decoded
		if err := l.ev.format.DecodeSample(raw, s); err != nil {
			l.eng.Skips.Samples++ // only this goroutine counts samples
			return
		}
		l.sample(s, nil)
	case prepBad:
		l.eng.Skips.Samples++
	case prepDecoded:
		l.sample(&p.s, nil)
	default:
		l.sample(&p.s, p)
	}
}

// event returns the index of s's event, or -1.
func (l *loader) event(s *perf.Sample) int {
	ev := s.Attr
	if ev < 0 && l.ev.format.Len() == 1 {
		ev = 0
	}
	if ev >= l.ev.format.Len() {
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
		if a := l.ev.format.Attr(ev); a != nil && !a.Freq() {
			return a.SamplePeriod
		}
	}
	return 0
}

func (l *loader) growEvents() {
	n := l.r.Format().Len()
	if len(l.ev.srcs) < n {
		l.ev.srcs = classify(l.r.Attrs(), l.r.Features())
		for len(l.ev.used) < len(l.ev.srcs) {
			a := l.r.Format().Attr(len(l.ev.used))
			l.ev.used = append(l.ev.used, false)
			l.per.periodsSeen = append(l.per.periodsSeen, map[uint64]bool{})
			l.ev.fpOnly = append(l.ev.fpOnly, unwind.MethodFor(a) == unwind.MethodFP)
		}
		l.ev.fast = l.ev.fast[:0]
		for i, src := range l.ev.srcs {
			copied := l.r.Attrs()[i].Attr.SampleType&perf.SampleStackUser != 0 // repaired by repairLeaf
			l.ev.fast = append(l.ev.fast, l.ev.fpOnly[i] && !copied && src != profile.Exact && src != profile.LBR && src != profile.Calls &&
				(l.o.Event == "" || l.r.Attrs()[i].Name == l.o.Event))
		}
	}
}

// foldFast folds a sample whose stack is in the stack cache without
// decoding it, when its event's samples are stacks alone (timer-like,
// unwound from the frame-pointer callchain: l.ev.fast) and have their
// callchain at a fixed place (perf.SampleLayout): it reads the thread,
// time, period and callchain where they sit and does what sample does
// for them. A preparer found the record's event ev, layout lay, process,
// callchain (fastChain) and its hash h (hashChainBytes). It returns
// false when the cache does not hold the stack, to be decoded.
func (l *loader) foldFast(raw []byte, ev int, lay *perf.SampleLayout, pid uint32, chain []byte, h uint64) bool {
	tid := binary.LittleEndian.Uint32(raw[lay.TID+4:])
	if !l.keep(pid, tid, true) {
		return true // filtered out: done with it
	}
	i := l.stacks.findBytes(h, pid, chain)
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
	l.ev.used[ev] = true
	l.notePeriodAt(ev, tid, t, lay.Time >= 0, period)
	l.tally(pid, max(period, 1))
	l.foldCached(i, max(period, 1))
	if l.test.fastCount != nil {
		*l.test.fastCount++
	}
	return true
}

// sample folds one sample (on the folding goroutine); p, when not nil,
// is what prepare found of it.
func (l *loader) sample(s *perf.Sample, p *prepSample) {
	if l.test.sampleHook != nil {
		l.hookFrames = nil
		defer func() { l.test.sampleHook(s, l.hookFrames) }()
	}
	ev := l.event(s)
	if ev < 0 || ev >= len(l.ev.srcs) {
		return
	}
	if l.o.Event != "" && l.ev.attrs[ev].Name != l.o.Event {
		return
	}
	if !l.keep(s.PID, s.TID, s.Has(perf.SampleTID)) {
		return
	}
	l.rec.Samples++
	l.ev.used[ev] = true
	period := l.period(s, ev)
	l.notePeriod(s, ev, period)
	weight := max(period, 1)
	l.tally(s.PID, weight)
	switch l.ev.srcs[ev] {
	case profile.Exact:
		if l.goRestart(s, ev) {
			return
		}
		l.exact(s, ev, weight)
	case profile.LBR:
		l.stack(s, ev, weight, p)
		l.branches(s, period)
		if l.o.Instrs {
			l.countRanges(s)
		}
	case profile.Calls:
		l.stack(s, ev, weight, p)
		l.callSample(s, ev, weight)
	default:
		l.stack(s, ev, weight, p)
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
// had before: the copies of an event that threads inherited before its
// period changed keep the old period (PERF_EVENT_IOC_PERIOD reaches only
// the event it is given), and a thread may sample through either in
// turns, so an event's threads may sample at two periods at once, which
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
		if !l.per.timed {
			l.per.first, l.per.timed = t, true
		}
		l.per.first = min(l.per.first, t)
		l.per.last = max(l.per.last, t)
	}
	if period == 0 {
		return
	}
	if l.per.lastPeriod == nil {
		l.per.lastPeriod = map[evTID]uint64{}
	}
	k := evTID{ev, tid}
	if l.per.hasRecent && k == l.per.recent && period == l.per.recentPeriod {
		return // the common case: the same thread at the same period
	}
	l.per.recent, l.per.recentPeriod, l.per.hasRecent = k, period, true
	prev, known := l.per.lastPeriod[k]
	if prev == period {
		return
	}
	l.per.lastPeriod[k] = period
	seen := l.per.periodsSeen[ev]
	if (!known && seen[period]) || (len(seen) > 0 && l.ev.format.Attr(ev).Freq()) {
		return
	}
	if seen[period] && l.lastChange(ev) == period {
		// another thread (or CPU-wide event) reaching the period the
		// event changed to last: the same change, not another one
		return
	}
	seen[period] = true
	var since uint64
	if timed && t > l.per.first {
		since = t - l.per.first
	}
	l.rec.Periods = append(l.rec.Periods, profile.PeriodChange{TimeNS: since, Event: l.ev.attrs[ev].Name, Period: period})
}

// lastChange is the period of event ev's latest entry in the period
// history (0 if none).
func (l *loader) lastChange(ev int) uint64 {
	name := l.ev.attrs[ev].Name
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
	return frameKey(&l.addrs.retTable, f, pid)
}

// frameKey is the loader's frameKey with the call sites found in rt.
func frameKey(rt *retTable, f *unwind.Frame, pid uint32) addrKey {
	obj := f.Object
	a := f.ObjAddr
	if obj == nil {
		a = addrspace.Unmapped(f.Addr)
	}
	if f.Kind == unwind.FrameReturn {
		if obj == nil {
			return addrKey{obj: nil, addr: max(a, 1) - 1}
		}
		a = rt.callOf(obj, a)
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

// stack folds s's stack; p, when not nil (prepared: prepStack or
// prepUnwound), holds the leaf repair, the chain's hash or the unwound
// stack's address keys, done by a preparer.
func (l *loader) stack(s *perf.Sample, ev int, weight uint64, p *prepSample) {
	shape := stackWhole
	fp := l.ev.fpOnly[ev] && s.Has(perf.SampleCallchain) && len(s.Callchain) > 0
	if p != nil {
		fp = p.fp
	}
	if fp { // before the leaf repair lengthens the chain
		var cut bool
		var limit uint64
		if p != nil {
			limit = l.maxStack(ev)
			cut = p.real >= limit // as cutStack (the chain is at least as long)
		} else {
			cut, limit = l.cutStack(s, ev)
		}
		if cut {
			shape = stackCut
			l.rec.Stacks.MaxStack = max(l.rec.Stacks.MaxStack, limit)
		}
	}
	if p != nil {
		l.countLeaf(p.leaf) // s.Callchain is the repaired chain
	} else {
		l.repairLeaf(s)
	}
	var h uint64
	if fp {
		if p != nil {
			h = p.hash
		} else {
			h = hashChain(s.PID, s.Callchain)
		}
		if i := l.stacks.find(h, s.PID, s.Callchain); i >= 0 {
			if l.test.sampleHook != nil {
				e := &l.stacks.entries[i]
				l.hookFrames = l.stacks.frames[e.frame:e.frameTo]
			}
			l.foldCached(i, weight)
			return
		}
	}
	if p != nil && p.state == prepUnwound {
		if len(p.frames) == 0 {
			return
		}
		if p.broken {
			shape = stackBroken
			l.cframes = l.brokenFrames(l.cframes[:0])
		} else {
			l.cframes = l.cframes[:0]
			for i, k := range p.keys { // as toFrames
				f := ccmap.Frame{Func: l.addrs.id(k)}
				if i > 0 {
					f.Site = uint64(k.addr)
				}
				l.cframes = append(l.cframes, f)
			}
		}
	} else {
		l.frames = l.eng.Frames(l.frames[:0], s)
		if len(l.frames) == 0 {
			return
		}
		if l.brokenStack(l.frames, shape == stackCut) {
			shape = stackBroken
			l.cframes = l.brokenFrames(l.cframes[:0])
		} else {
			l.cframes = l.toFrames(l.cframes[:0], l.frames, s.PID, false)
		}
	}
	l.hookFrames = l.cframes
	if fp && !l.maps.HasJIT(s.PID) { // a jitdump's code changes with no record to clear the cache
		i := l.stacks.put(h, s.PID, s.Callchain, l.cframes, shape)
		if i < 0 {
			l.clearStacks()
			i = l.stacks.put(h, s.PID, s.Callchain, l.cframes, shape)
		}
		if i >= 0 {
			l.foldCached(i, weight)
			return
		}
	}
	roots := l.cframes
	if !s.Has(perf.SampleCallchain) && !s.Has(perf.SampleStackUser) {
		roots = nil // no call graph recorded: the sampled function alone is no stack to judge (unrooted)
	}
	l.countShape(shape, roots, weight)
	l.fold.AddStacks(l.cframes, weight, 1)
}

// foldCached folds a sample of the stack of cache entry i: its weight is
// summed in the entry (folded at the next clearStacks), or, with
// redundancy skipping, which decides sample by sample, folded now.
func (l *loader) foldCached(i int, weight uint64) {
	e := &l.stacks.entries[i]
	l.countShape(e.shape, l.stacks.frames[e.frame:e.frameTo], weight)
	if l.sumStacks {
		e.pending += weight
		e.count++
		return
	}
	l.fold.AddStacks(l.stacks.frames[e.frame:e.frameTo], weight, 1)
}

// clearStacks folds the stack cache's pending weights and empties it.
func (l *loader) clearStacks() {
	l.stacks.flush(l.fold.AddStacks)
	l.stacks.clear()
	l.lbr.edges.reset()
	if c := l.probes.cache; c != nil {
		c.flush(func(frames []ccmap.Frame, weight, _ uint64) { l.addExact(frames, weight) })
		c.clear()
	}
}

// branches folds the call edges of s's branch stack into the per-edge
// period sums.
func (l *loader) branches(s *perf.Sample, period uint64) {
	if len(s.Branches) == 0 {
		return
	}
	l.lbr.cur = s
	l.lbr.calls = l.lbr.dec.Decode(l.lbr.calls[:0], s.PID, s.Branches)
	for _, c := range l.lbr.calls {
		rk := lbrRuntime{s.PID, c.Site, c.Callee}
		i, ok := l.lbr.edges.find(rk)
		if !ok {
			site := l.runtimeKey(s, c.Site)
			callee := l.runtimeKey(s, c.Callee)
			i = l.lbr.edges.put(rk, lbrKey{caller: l.addrs.id(site), callee: l.addrs.id(callee), site: uint64(site.addr)})
		}
		sum := &l.lbr.edges.sums[i]
		if period > 0 {
			sum.periods += period
		} else {
			sum.plain++
		}
	}
	l.lbr.cur = nil
}

// runtimeKey interns a runtime address of s's process.
func (l *loader) runtimeKey(s *perf.Sample, a addrspace.Addr) addrKey {
	if m, oa, ok := l.maps.Lookup(s.PID, s.TID, s.Time, a); ok {
		return newAddrKey(m.Object, s.PID, oa)
	}
	return addrKey{obj: nil, addr: addrspace.Unmapped(a)}
}

// flushLBR turns the per-edge sums into estimated call counts: each
// appearance weighs P/D (lbr.Estimator, mode EveryEntry), the sum over an
// edge is rounded up or down at random in proportion to its fraction, so
// the integer count keeps the estimate's expectation.
func (l *loader) flushLBR() {
	e := &l.lbr.edges
	if len(e.keys) == 0 {
		return
	}
	est := lbr.Estimator{Depth: l.lbr.dec.MaxWindow(), Mode: lbr.EveryEntry}
	keys := slices.Clone(e.keys)
	sortLBRKeys(keys) // the random rounding must not depend on the order edges were seen in
	for _, k := range keys {
		sum := e.sums[e.index[k]]
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
// entry on the same thread marks that (function entry, return address) as
// due for one restart; the next such hit, on any thread, is not counted. (If
// another goroutine calls the function from the same return address
// meanwhile, the one skipped is that call: the edge's count is the same.)
// Without a probe on morestack the restarts count as calls.
func (l *loader) goRestart(s *perf.Sample, ev int) bool {
	if !l.ev.morestack {
		return false // no event probes morestack: nothing restarts
	}
	if l.probes.lastExact == nil {
		l.probes.lastExact, l.probes.restart = map[uint32]exactHit{}, map[exactHit]int{}
	}
	ra, _ := unwind.EntryReturnAddress(s)
	hit := exactHit{s.IP, ra}
	prev, hadPrev := l.probes.lastExact[s.TID]
	l.probes.lastExact[s.TID] = hit
	if ev < len(l.ev.isMore) && l.ev.isMore[ev] {
		if hadPrev {
			l.probes.restart[prev]++
		}
		return false
	}
	if n := l.probes.restart[hit]; n > 0 {
		if n == 1 {
			delete(l.probes.restart, hit)
		} else {
			l.probes.restart[hit] = n - 1
		}
		l.probes.goRestarts++
		return true
	}
	return false
}

// exactHit is a probe hit as goRestart matches them: the IP (the
// function's entry: one event may probe many functions, see uprobe.Define)
// and the return address.
type exactHit struct {
	ip uint64
	ra uint64
}

func (l *loader) exact(s *perf.Sample, ev int, weight uint64) {
	ra, ok := unwind.EntryReturnAddress(s)
	if !ok {
		l.probes.noRetAddr++
		return
	}
	if l.probes.cache == nil {
		l.probes.cache = newStackCache()
	}
	c := l.probes.cache
	// The key: the callee's entry, the return address and the callchain.
	key := append(l.probes.key[:0], s.IP, ra)
	if s.Has(perf.SampleCallchain) {
		key = append(key, s.Callchain...)
	}
	l.probes.key = key
	h := hashChain(s.PID, key)
	if i := c.find(h, s.PID, key); i >= 0 {
		l.foldExact(i, weight)
		return
	}
	if !l.exactSlow(s, ra) {
		return
	}
	// l.cframes is the context (the caller first) and the callee after
	// it; the context lacks its outer frames when the callchain reached
	// the depth limit (--max-stack)
	shape := stackWhole
	if s.Has(perf.SampleCallchain) {
		if cut, limit := l.cutStack(s, ev); cut {
			shape = stackCut
			l.rec.Stacks.MaxStack = max(l.rec.Stacks.MaxStack, limit)
		}
	}
	i := c.put(h, s.PID, key, l.cframes, shape)
	if i < 0 {
		l.clearStacks()
		i = c.put(h, s.PID, key, l.cframes, shape)
	}
	if i >= 0 {
		l.foldExact(i, weight)
		return
	}
	l.countShape(shape, nil, weight) // exact contexts are not judged for roots (unrooted)
	l.addExact(l.cframes, weight)
}

// foldExact folds a hit of the exact cache's entry i: its weight is summed
// in the entry (folded at the next clearStacks), or, with redundancy
// skipping, folded now.
func (l *loader) foldExact(i int, weight uint64) {
	c := l.probes.cache
	e := &c.entries[i]
	l.countShape(e.shape, nil, weight)
	if l.sumStacks {
		e.pending += weight
		e.count++
		return
	}
	l.addExact(c.frames[e.frame:e.frameTo], weight)
}

// addExact folds weight calls of a hit in its cached form: the context
// (the caller, whose Site is the call site, then its callers) and last
// the callee.
func (l *loader) addExact(frames []ccmap.Frame, weight uint64) {
	n := len(frames) - 1
	ctx := frames[:n]
	site := ccmap.CallSite{Caller: ctx[0].Func, Addr: ctx[0].Site}
	l.fold.AddEdge(ctx, site, frames[n].Func, weight)
}

// exactSlow derives the call of a probe hit with return address ra: it
// leaves in l.cframes the context (the caller first, its Site the call
// site) followed by the callee, and reports whether the hit is a call.
func (l *loader) exactSlow(s *perf.Sample, ra uint64) bool {
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
	if len(user) == 0 {
		l.probes.noRetAddr++
		return false
	}
	l.frames = all
	callee := l.addrs.id(l.frameKey(&user[0], s.PID))
	caller := unwind.Frame{Addr: addrspace.Addr(ra), Kind: unwind.FrameReturn}
	if m, oa, ok := l.maps.Lookup(s.PID, s.TID, s.Time, addrspace.Addr(ra)); ok && m.Object != nil {
		caller.Object, caller.ObjAddr = m.Object, oa
	}
	if c := l.addrs.checkReturn(caller.Object, caller.ObjAddr); c == retNotCall || c == retNotCode {
		// not a call: nothing returns there (argc at _start's entry, a
		// goroutine's made-up goexit+1)
		l.probes.notCall++
		return false
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
	l.cframes = append(l.cframes, ccmap.Frame{Func: callee})
	return true
}

// callSample folds the call edge a sample of a calls-retired event stands
// for, weighted by its period (each sample stands for period calls):
// lbr.CallFromSample derives its call site and callee from what the IP
// means at the event's precise level (see lbr/calls.go), the callchain
// and the code.
func (l *loader) callSample(s *perf.Sample, ev int, weight uint64) {
	a := l.r.Format().Attr(ev)
	cs := lbr.CallSample{PID: s.PID, IP: addrspace.Addr(s.IP), Meaning: lbr.SampleIPMeaning(a.PreciseIP, s.Misc), Chain: l.lbr.chain[:0]}
	if s.Has(perf.SampleCallchain) {
		for _, r := range perf.SplitCallchain(s.Callchain).User {
			cs.Chain = append(cs.Chain, addrspace.Addr(r))
		}
	}
	l.lbr.chain = cs.Chain
	l.lbr.cur = s
	e, ok := lbr.CallFromSample(cs, lbrCode{l})
	l.lbr.cur = nil
	if !ok || e.Site == 0 || e.Callee == 0 {
		l.lbr.callsUnknown++
		return
	}
	site := l.runtimeKey(s, e.Site)
	callee := l.runtimeKey(s, e.Callee)
	l.fold.AddEdge(nil, ccmap.CallSite{Caller: l.addrs.id(site), Addr: uint64(site.addr)}, l.addrs.id(callee), weight)
}

// lbrCode reads code for the LBR decoder through the process model at
// the current sample's thread and time.
type lbrCode struct{ l *loader }

func (c lbrCode) Code(pid uint32, addr addrspace.Addr) ([]byte, bool) {
	s := c.l.lbr.cur
	if s == nil {
		return nil, false
	}
	m, oa, ok := c.l.maps.Lookup(pid, s.TID, s.Time, addr)
	if !ok || m.Object == nil {
		return nil, false
	}
	return c.l.code.read(m.Object, oa, lbr.MaxInstLen)
}
