package symbolize

import (
	"runtime"
	"sync"
)

// Ahead is a reading started on a goroutine of its own, while its caller
// goes on (ReadKallsymsAhead, OpenAhead): Wait returns what it read.
type Ahead[T any] struct {
	done chan struct{}
	v    T
	err  error
}

// ahead starts read on a goroutine of its own.
func ahead[T any](read func() (T, error)) *Ahead[T] {
	a := &Ahead[T]{done: make(chan struct{})}
	go func() {
		defer close(a.done)
		a.v, a.err = read()
	}()
	return a
}

// Wait returns the reading's result once it has ended; any number of
// goroutines may wait, any number of times.
func (a *Ahead[T]) Wait() (T, error) {
	<-a.done
	return a.v, a.err
}

// ReadKallsymsAhead starts ReadKallsyms(path) on a goroutine of its own
// (slow for /proc/kallsyms: the kernel formats every line).
func ReadKallsymsAhead(path string) *Ahead[*KallsymsText] {
	return ahead(func() (*KallsymsText, error) { return ReadKallsyms(path) })
}

// OpenAhead starts open, the opening of one object's symbols (the work
// of Open, OpenSymbols or a PerfMap: files read alone), on a goroutine
// of its own.
func OpenAhead(open func() (Resolver, error)) *Ahead[Resolver] {
	return ahead(open)
}

// EachObject calls resolve(i) for every i in [0, n), at most GOMAXPROCS
// at a time on goroutines of their own, and returns when all have
// returned: the objects of a recording symbolized in parallel, each by
// one call, which must touch nothing another call does.
func EachObject(n int, resolve func(i int)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			resolve(i)
		}()
	}
	wg.Wait()
}
