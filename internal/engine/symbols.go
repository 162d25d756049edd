package engine

import (
	"errors"
	"strings"

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/symbolize"
)

// ErrNoKernelSymbols is the error of the kernel's key when no kallsyms
// names the recording's kernel (Objects.Kernel says why).
var ErrNoKernelSymbols = errors.New("symbolize kernel: no kallsyms names the recorded kernel")

// A Handle names one unique address added to Symbols: its key and its
// index among the key's addresses.
type Handle struct {
	key int32 // -1: nothing names the address
	idx uint32
}

// NoHandle is the handle of an address nothing names.
var NoHandle = Handle{key: -1}

// Valid says whether h names an address that will be looked up.
func (h Handle) Valid() bool { return h.key >= 0 }

// Symbols collects the addresses to name, once per unique address of each
// object key (Add), then resolves each key's addresses at once, keys in
// parallel (Resolve): per object, never per sample.
type Symbols struct {
	objs    *Objects
	keys    []symbolize.ObjectKey
	keyIdx  map[symbolize.ObjectKey]int32
	objKey  map[objPID]int32
	last    objPID // the object of the last Add, and its key
	lastKey int32
	addrs   [][]addrspace.ObjAddr
	addrIdx []map[addrspace.ObjAddr]uint32
	results []symbolize.Result   // by key: the locations of addrs[k] looked up so far
	open    []symbolize.Resolver // by key: its file, read, kept by ResolveAdded
	// turn counts the calls of resolve; used is by key the turn it last
	// had addresses to look up (ReleaseIdle)
	turn int
	used []int
	// hold is by key how many idle turns ReleaseIdle waits before it lets
	// go of the key's file: doubled each time a file let go is read
	// again, so that an object in steady use (a daemon's, the profiler's
	// own) is read once, while the objects of programs that ran and
	// ended are let go
	hold []int
	// reads counts the keys whose file resolve read (Reads)
	reads int

	// the kallsyms text read ahead by PreloadKernel (nil: not), and the
	// text once read (kernelRead)
	kallsyms   *symbolize.Ahead[*symbolize.KallsymsText]
	kernelText *symbolize.KallsymsText
	kernelErr  error
	kernelRead bool
	// PreloadKernel was called: later calls (every kernel sample) return
	preloadAsked bool
	// onRead, if set (by tests), is called as kallsyms is read: by
	// PreloadKernel (preload) or when resolving
	onRead func(preload bool)
	// the symbol tables PreloadObject started reading, by key (until
	// Resolve)
	preloaded map[symbolize.ObjectKey]*symbolize.Ahead[symbolize.Resolver]
}

// objPID is an object as seen by a process: the process matters for JIT
// code only (its perf map).
type objPID struct {
	obj *addrspace.Object
	pid uint32
}

// NewSymbols returns an empty set of addresses of the objects objs names.
func NewSymbols(objs *Objects) *Symbols {
	return &Symbols{
		objs:   objs,
		keyIdx: map[symbolize.ObjectKey]int32{},
		objKey: map[objPID]int32{},
		last:   objPID{obj: nil},
	}
}

// PreloadKernel starts reading the kernel's kallsyms (slow for
// /proc/kallsyms: the kernel formats every line) while the records are
// read on, when a kallsyms names the recording's kernel. The loader calls
// it at the first sample taken in the kernel (KernelMode), so that a
// recording of user code alone never reads it. It starts one reading
// (symbolize.ReadKallsymsAhead), once, which Resolve waits for. A kernel address first met elsewhere (a
// branch entry of a user sample) has kallsyms read when it is resolved.
func (s *Symbols) PreloadKernel() {
	if s.preloadAsked || s.kernelRead {
		return
	}
	s.preloadAsked = true
	path, _ := s.objs.Kernel()
	if path == "" {
		return
	}
	if s.onRead != nil {
		s.onRead(true)
	}
	s.kallsyms = symbolize.ReadKallsymsAhead(path)
}

// PreloadObject starts reading the symbol tables of a file object obj
// (symbolize.OpenAhead), once per object key, so that a Resolve without
// DWARF finds them read (what it reads is the same: the same open, the
// same options). The loader calls it for the object of each new address
// while the records are read on. Resolve waits for every preload. It
// reports whether it started one.
func (s *Symbols) PreloadObject(obj *addrspace.Object) bool {
	if obj == nil || obj.Kind != addrspace.KindFile {
		return false // the kernel, JIT code and the vdso are read when resolving
	}
	key, ok := s.objs.Key(obj, 0)
	if !ok || IsPerfMap(key.Path) {
		return false
	}
	if _, ok := s.preloaded[key]; ok {
		return false
	}
	if s.preloaded == nil {
		s.preloaded = map[symbolize.ObjectKey]*symbolize.Ahead[symbolize.Resolver]{}
	}
	s.preloaded[key] = symbolize.OpenAhead(s.opener(key, s.objs.symbolizeOptions(), false))
	return true
}

// KernelMode says whether a record (raw: header first) was taken in the
// kernel, the host's or a guest's: its header's cpumode says so. A sample
// whose callchain holds kernel frames was taken there.
func KernelMode(raw []byte) bool {
	m := uint16(raw[4]) & perf.MiscCPUModeMask
	return m == perf.MiscKernel || m == perf.MiscGuestKernel
}

// Wait returns when the kernel's preloading (if any) has ended.
func (s *Symbols) Wait() {
	if s.kallsyms != nil {
		s.kallsyms.Wait()
	}
}

// Add asks for the symbol of address a of obj in process pid (a's object
// address; for a return address the address of the call, ra-1) and
// returns its handle; NoHandle when nothing names obj.
func (s *Symbols) Add(obj *addrspace.Object, pid uint32, a addrspace.ObjAddr) Handle {
	if obj == nil {
		return NoHandle
	}
	if obj.Kind != addrspace.KindJIT {
		pid = 0
	}
	op := objPID{obj, pid}
	k := s.lastKey
	if op != s.last {
		var ok bool
		if k, ok = s.objKey[op]; !ok {
			k = s.addKey(op)
		}
		s.last, s.lastKey = op, k
	}
	if k < 0 {
		return NoHandle
	}
	i, ok := s.addrIdx[k][a]
	if !ok {
		i = uint32(len(s.addrs[k]))
		s.addrs[k] = append(s.addrs[k], a)
		s.addrIdx[k][a] = i
	}
	return Handle{key: k, idx: i}
}

// addKey finds the key of a new object; objects with one key (the kernel
// and its modules, a file seen under two inodes) share its addresses.
func (s *Symbols) addKey(op objPID) int32 {
	k := int32(-1)
	if key, ok := s.objs.Key(op.obj, op.pid); ok {
		if k, ok = s.keyIdx[key]; !ok {
			k = int32(len(s.keys))
			s.keyIdx[key] = k
			s.keys = append(s.keys, key)
			s.addrs = append(s.addrs, nil)
			s.addrIdx = append(s.addrIdx, map[addrspace.ObjAddr]uint32{})
		}
	}
	s.objKey[op] = k
	return k
}

// KeyError is a key whose object could not be read, and why.
type KeyError struct {
	Key symbolize.ObjectKey
	Err error
}

// Resolve looks up every address added and not yet looked up, each
// key's file opened once, keys in parallel (symbolize.EachObject): with DWARF (source lines,
// inlined frames) when dwarf is set, else by the symbol tables alone. It
// then lets go of the files read (ResolveAdded keeps them). It returns
// every key that could not be read, in the order they were first added;
// the kernel's is ErrNoKernelSymbols when no kallsyms names it.
func (s *Symbols) Resolve(dwarf bool) []KeyError {
	s.resolve(dwarf)
	clear(s.open)
	for _, p := range s.preloaded { // those not taken (no goroutine outlives Resolve)
		p.Wait()
	}
	s.preloaded = nil
	return s.Errors()
}

// Errors returns the keys looked up that could not be read, in the order
// they were first added, as Resolve does.
func (s *Symbols) Errors() []KeyError {
	var errs []KeyError
	for k, r := range s.results {
		if r.Err != nil {
			errs = append(errs, KeyError{s.keys[k], r.Err})
		}
	}
	return errs
}

// ResolveAdded looks up the addresses added since the last ResolveAdded
// or Resolve, as Resolve does, and keeps each key's file read for the
// next call, so that a caller adding and resolving in turns (a window of
// samples at a time) reads each object once and holds the addresses, not
// the samples. Resolve ends the turns and returns what could not be read.
// The first call's dwarf holds for every key it reads.
func (s *Symbols) ResolveAdded(dwarf bool) { s.resolve(dwarf) }

// Reads is the number of times Resolve and ResolveAdded read a key's file
// (or the kernel's symbols), a file let go by ReleaseIdle counted again.
func (s *Symbols) Reads() int { return s.reads }

// ReleaseIdle lets go of the files ResolveAdded keeps of the keys that
// had no new address in the last idle turns (twice as many for a key
// each time its file had to be read again): a reader that adds and
// resolves in turns for long (engine.Follower) then holds the files of the
// objects in use, not of every object it met. A key let go has its file
// read again at its next new address.
func (s *Symbols) ReleaseIdle(idle int) {
	for k, res := range s.open {
		if s.hold[k] == 0 {
			s.hold[k] = idle
		}
		if res != nil && s.turn-s.used[k] >= s.hold[k] {
			s.open[k] = nil
		}
	}
}

// resolve looks up the addresses of each key not looked up yet.
func (s *Symbols) resolve(dwarf bool) {
	for len(s.results) < len(s.keys) {
		s.results = append(s.results, symbolize.Result{})
		s.open = append(s.open, nil)
		s.used = append(s.used, 0)
		s.hold = append(s.hold, 0)
	}
	s.turn++
	var todo []int
	for k, r := range s.results {
		if r.Err == nil && len(r.Locations) < len(s.addrs[k]) {
			todo = append(todo, k)
			s.used[k] = s.turn
		}
	}
	for _, k := range todo {
		if s.open[k] == nil {
			s.reads++
			if s.hold[k] > 0 && s.results[k].Locations != nil {
				s.hold[k] *= 2 // let go too soon: read again
			}
		}
	}
	opts := s.objs.symbolizeOptions()
	if len(todo) == 1 { // the usual case once the objects are read
		s.resolveKey(todo[0], opts, dwarf)
		return
	}
	symbolize.EachObject(len(todo), func(i int) { s.resolveKey(todo[i], opts, dwarf) })
}

// resolveKey looks up key k's addresses not looked up yet, reading its
// file the first time. The kernel's kallsyms text is read once: the first
// time only the symbols of the addresses are kept (KallsymsText.For, one scan),
// the next time all of them, for every later address.
func (s *Symbols) resolveKey(k int, opts symbolize.Options, dwarf bool) {
	r := &s.results[k]
	addrs := s.addrs[k][len(r.Locations):]
	res := s.open[k]
	if res == nil {
		var err error
		switch {
		case s.keys[k].Path != symbolize.KernelPath:
			if p := s.preloaded[s.keys[k]]; p != nil && !dwarf {
				res, err = p.Wait()
			} else {
				res, err = s.opener(s.keys[k], opts, dwarf)()
			}
			s.open[k] = res
		case len(r.Locations) == 0:
			res, err = s.kernel(addrs)
		default:
			res, err = s.kernel(nil)
			s.open[k] = res
		}
		if err != nil {
			r.Err = err
			s.objs.noteRefused(err) // a refusal is warned of with the others (Objects.Refused)
			return
		}
	}
	if locs := res.Symbolize(addrs); r.Locations == nil {
		r.Locations = locs
	} else {
		r.Locations = append(r.Locations, locs...)
	}
}

// opener returns the work of opening the symbols of one key, which reads
// the files alone (another goroutine may run it).
func (s *Symbols) opener(key symbolize.ObjectKey, opts symbolize.Options, dwarf bool) func() (symbolize.Resolver, error) {
	switch {
	case IsPerfMap(key.Path):
		return func() (symbolize.Resolver, error) {
			m, err := opts.PerfMap(key.Path)
			if err != nil {
				return nil, err
			}
			return m, nil
		}
	case IsJITDump(key.Path):
		return func() (symbolize.Resolver, error) { return s.objs.jitDump(key.Path) }
	case s.objs.isLocal(key.Path):
		opts = symbolize.Options{DebugDirs: opts.DebugDirs, Refused: opts.Refused}
	case s.objs.rootOf(key.Path) != "":
		opts.SymFS = s.objs.rootOf(key.Path) // a process's own root: see Objects.locateInRoot
	}
	open := symbolize.OpenSymbols
	if dwarf {
		open = symbolize.Open
	}
	return func() (symbolize.Resolver, error) {
		o, err := open(key, opts)
		if err != nil {
			return nil, err
		}
		return o, nil
	}
}

// kernel returns a resolver of the kernel addresses addrs: the symbols of
// the kallsyms text that contain them, or all its symbols for nil addrs,
// from the text preloaded or read now (once).
func (s *Symbols) kernel(addrs []addrspace.ObjAddr) (symbolize.Resolver, error) {
	path, _ := s.objs.Kernel()
	if path == "" {
		return nil, ErrNoKernelSymbols
	}
	if !s.kernelRead {
		if s.kallsyms != nil {
			s.kernelText, s.kernelErr = s.kallsyms.Wait()
		} else {
			if s.onRead != nil {
				s.onRead(false)
			}
			s.kernelText, s.kernelErr = symbolize.ReadKallsyms(path)
		}
		s.kernelRead = true
	}
	if s.kernelErr != nil {
		return nil, s.kernelErr
	}
	// The kernel may have been elsewhere when the kallsyms was taken (a
	// saved one, from another boot: KASLR): its own addresses are looked
	// up where they were in the kallsyms, and its symbols moved to where
	// the recording has them, as perf relocates by its reference symbol.
	var delta uint64
	ref, ok := s.objs.kernelMap()
	if ok {
		if at, found := s.kernelText.RefAddr(ref.sym); found {
			delta = ref.addr - uint64(at)
		}
	}
	var k *symbolize.Kallsyms
	var err error
	if addrs == nil {
		k, err = s.kernelText.All()
	} else {
		if delta != 0 {
			moved := make([]addrspace.ObjAddr, len(addrs))
			for i, a := range addrs {
				moved[i] = a
				if uint64(a) >= ref.start && uint64(a) < ref.end {
					moved[i] = a - addrspace.ObjAddr(delta)
				}
			}
			addrs = moved
		}
		k, err = s.kernelText.For(addrs)
	}
	if err != nil {
		return nil, err
	}
	k.Relocate(delta)
	return k, nil
}

// Location returns the location of h after Resolve; false when h names
// nothing, or its object could not be read.
func (s *Symbols) Location(h Handle) (symbolize.Location, bool) {
	if h.key < 0 || int(h.key) >= len(s.results) {
		return symbolize.Location{}, false
	}
	r := s.results[h.key]
	if r.Err != nil || int(h.idx) >= len(r.Locations) {
		return symbolize.Location{}, false
	}
	return r.Locations[h.idx], true
}

// KernelAsked says whether an address of the kernel was added.
func (s *Symbols) KernelAsked() bool {
	_, ok := s.keyIdx[symbolize.ObjectKey{Path: symbolize.KernelPath}]
	return ok
}

// IsPerfMap says whether a key's path is a perf map /tmp/perf-PID.map.
func IsPerfMap(path string) bool { return strings.HasPrefix(path, "/tmp/perf-") }
