package engine

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/ccmap"
	"github.com/hwprof/hwprof/internal/pipeline"
	"github.com/hwprof/hwprof/internal/procmap"
	"github.com/hwprof/hwprof/lbr"
	"github.com/hwprof/hwprof/offcpu"
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
// The loader is the stages of package pipeline's Run (read → prepare →
// fold → merge): it reads the records in time order, keeps the process
// model (MMAP, MMAP2, COMM, FORK, EXIT), unwinds each sample as it was recorded
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
	addrMap, readErr := pipeline.Run(l.r, l, l.fold, pipeline.Options{Preparers: o.Workers, Inline: t.inline})
	p := l.finish(addrMap)
	p.Recording.File = path
	if readErr != nil {
		return p, fmt.Errorf("load %s: %w", path, readErr)
	}
	return p, nil
}

// loader is the state of one Load, in groups: the reader and what it
// shares with the prepare stage (events), the analysis (eng and the
// address table), the folding, and the state of each kind of sample. It
// is the pipeline's stages (pipeline.Stages: Route, Apply, Preparer, Fold,
// Flush).
type loader struct {
	r *perfdata.Reader
	o LoadOptions
	// test switches (the zero value in Load)
	test testOptions
	// settled: the kernel's kallsyms is decided (Objects.SettleKernel)
	settled bool
	// follow: the recording is read a part at a time (Follower); last:
	// the part being read is the last
	follow, last bool
	parts        int // parts read (Follower)

	ev eventTable
	// stale: the event table may have changed since the last snapshot,
	// which is renewed before the next sample only (not after each of
	// thousands of EVENT_UPDATE records in a row)
	stale    bool
	eng      *Engine      // objects, process model, unwinder, symbols
	maps     *procmap.Map // eng.Maps
	unwinder *unwind.Unwinder
	code     *codeReader
	addrs    *addrTable

	fold      *pipeline.Folder
	stacks    *stackCache
	sumStacks bool // sum repeated stacks' weights in the cache (no redundancy skipping)
	rng       *rand.Rand

	rec      profile.Recording
	per      periodHistory
	filter   processFilter
	lbr      lbrState
	ranges   rangeState // LBR's ranges and calls for sample-based FDO (LoadOptions.Instrs)
	probes   exactState
	off      offState
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
	// live: the recording is being made here (Follower; Options.Live)
	live bool
	// leafCut, if above 0, cuts every sample's stack copy to that many
	// bytes before the leaf repair (TestLeafCopyCut)
	leafCut int
}

// eventTable is the reader's event table as of the sample being folded
// (a snapshot the preparers and the fold stage read), and per event how its samples are
// folded.
type eventTable struct {
	format *perf.SampleFormat
	attrs  []perfdata.EventAttr
	srcs   []profile.Source
	used   []bool // the event gave samples
	fpOnly []bool // unwound from the callchain alone
	fast   []bool // its samples may take foldFast
	exact  []exactEvent
	// offcpu: the event samples the stacks threads leave the CPU with
	// (offcpu.IsEvent), folded by the time off the CPU that follows
	offcpu []bool
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

func newLoader(r *perfdata.Reader, o LoadOptions, t testOptions) *loader {
	eng := New(r, Options{SymFS: o.SymFS, DebugDirs: o.DebugDirs, Objects: o.Objects, Debuginfod: o.Debuginfod, Live: t.live})
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
	l.fold = pipeline.NewFolder(pipeline.FoldOptions{Workers: o.Workers, DedupRatio: o.DedupRatio, Seed: o.Seed})
	return l
}

// Route is the read stage (pipeline.Stages), for every record in order:
// a sample goes to the preparers, after the event table is renewed when
// records of perf's own may have changed it (Apply); the records that
// change the process model are applied once the samples before them are
// folded (Apply); losses and throttling are counted here.
func (l *loader) Route(raw []byte) pipeline.Route {
	t := perf.RecordType(binary.LittleEndian.Uint32(raw))
	if !l.settled && Analyzed(t) {
		l.eng.Objects.SettleKernel() // the header's records, if any, are read
		l.settled = true
	}
	switch t {
	case perf.RecordSample:
		if KernelMode(raw) && !l.o.SiteLines {
			l.eng.Symbols.PreloadKernel() // kallsyms is read while the records are
		}
		if l.stale || l.r.Format().Len() > len(l.ev.srcs) {
			return pipeline.BarrierSample
		}
		return pipeline.Sample
	case perf.RecordMmap, perf.RecordMmap2, perf.RecordFork, perf.RecordExit, perf.RecordComm:
		return pipeline.Barrier
	case perf.RecordSwitch, perf.RecordSwitchCPUWide:
		return pipeline.Sample // folded in order with the samples (switchRecord)
	case perf.RecordLost:
		if d, ok := l.decode(); ok {
			if x, ok := d.(*perf.Lost); ok {
				l.rec.Lost += x.Lost
				l.offLost(x)
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
			l.stale = true
		}
	}
	return pipeline.Handled
}

// Apply takes the records Route holds back until no sample is in flight
// (pipeline.Stages): before a sample, the event table is renewed (the
// preparers and the fold stage read a copy); a side-band record changes
// the process model.
func (l *loader) Apply(raw []byte) {
	switch perf.RecordType(binary.LittleEndian.Uint32(raw)) {
	case perf.RecordSample:
		l.growEvents()
		l.snapshot()
		l.stale = false
	case perf.RecordMmap, perf.RecordMmap2:
		if d, ok := l.decode(); ok {
			l.eng.Apply(d)
			l.clearStacks()
		}
	case perf.RecordFork, perf.RecordExit:
		if d, ok := l.decode(); ok {
			l.maps.Apply(d)
			clear(l.filter.now)
			if f, ok := d.(*perf.Fork); ok && f.Type == perf.RecordFork {
				l.offFork(f)
			} else if ok {
				l.offExit(f)
			}
		}
	case perf.RecordComm:
		if d, ok := l.decode(); ok {
			l.maps.Apply(d)
			clear(l.filter.now)
			if c, ok := d.(*perf.Comm); ok {
				l.offComm(c)
			}
			if c, ok := d.(*perf.Comm); ok && c.Exec() {
				l.lbr.dec.Forget(c.PID)
				l.clearStacks()
			}
		}
	}
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

// snapshot copies the reader's event table for the preparers and the fold
// stage (no sample in flight).
func (l *loader) snapshot() {
	l.ev.format = l.r.Format().Clone()
	l.ev.attrs = slices.Clone(l.r.Attrs())
	l.exactEvents()
}

// exactEvents fills in l.ev.exact, l.ev.isMore and l.ev.morestack from
// the event table (no sample in flight).
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
		l.ev.fast, l.ev.offcpu = l.ev.fast[:0], l.ev.offcpu[:0]
		for i, src := range l.ev.srcs {
			a := &l.r.Attrs()[i].Attr
			off := offcpu.IsEvent(a)
			l.ev.offcpu = append(l.ev.offcpu, off)
			copied := a.SampleType&perf.SampleStackUser != 0 // repaired by repairLeaf
			l.ev.fast = append(l.ev.fast, l.ev.fpOnly[i] && !copied && !off && src != profile.Exact && src != profile.LBR && src != profile.Calls &&
				(l.o.Event == "" || l.r.Attrs()[i].Name == l.o.Event))
		}
	}
}
