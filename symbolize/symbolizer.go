package symbolize

import (
	"fmt"
	"regexp"
	"runtime"
	"sync"
)

// Symbolizer opens each object once and keeps it, keyed by (path,
// build-id). It is safe for concurrent use.
type Symbolizer struct {
	opts Options
	mu   sync.Mutex
	objs map[ObjectKey]*cached
}

type cached struct {
	once sync.Once
	r    Resolver
	err  error
}

// New returns an empty Symbolizer that looks for files as opts says.
func New(opts Options) *Symbolizer {
	return &Symbolizer{opts: opts, objs: map[ObjectKey]*cached{}}
}

var perfMapName = regexp.MustCompile(`^/tmp/perf-[0-9]+\.map$`)

// Resolver returns the resolver for key, opening it on first use; a
// failure is cached too. key.Path KernelPath reads kallsyms
// (Options.Kallsyms); a path like /tmp/perf-PID.map reads that perf map;
// anything else is an ELF [Object].
func (s *Symbolizer) Resolver(key ObjectKey) (Resolver, error) {
	s.mu.Lock()
	c := s.objs[key]
	if c == nil {
		c = &cached{}
		s.objs[key] = c
	}
	s.mu.Unlock()
	c.once.Do(func() { c.r, c.err = s.open(key) })
	return c.r, c.err
}

func (s *Symbolizer) open(key ObjectKey) (Resolver, error) {
	switch {
	case key.Path == KernelPath:
		p := s.opts.Kallsyms
		if p == "" {
			var why string
			if p, why = s.opts.localKallsyms(); p == "" {
				return nil, fmt.Errorf("read kallsyms: %s", why)
			}
		}
		return LoadKallsyms(p)
	case perfMapName.MatchString(key.Path):
		return s.opts.PerfMap(key.Path)
	}
	open := Open
	if s.opts.SymbolsOnly {
		open = OpenSymbols
	}
	o, err := open(key, s.opts)
	if err != nil {
		return nil, err
	}
	return o, nil
}

// Result is what SymbolizeAll gives for one object: the locations,
// parallel to the addresses asked for, or why the object could not be read.
type Result struct {
	Locations []Location
	Err       error
}

// SymbolizeAll resolves each object's addresses (instruction pointers;
// convert return addresses with [RetAddr.Lookup] first). Objects are
// opened and resolved in parallel, at most GOMAXPROCS at a time; this is
// the one function of the package that starts goroutines, and all of them
// have ended when it returns.
func (s *Symbolizer) SymbolizeAll(req map[ObjectKey][]Addr) map[ObjectKey]Result {
	out := make(map[ObjectKey]Result, len(req))
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for key, addrs := range req {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			var res Result
			r, err := s.Resolver(key)
			if err != nil {
				res.Err = err
			} else {
				res.Locations = r.Symbolize(addrs)
			}
			mu.Lock()
			out[key] = res
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}
