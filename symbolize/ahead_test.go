package symbolize

import (
	"errors"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// TestEachObject: every index is resolved once, at most GOMAXPROCS at a
// time, and all have returned when EachObject does.
func TestEachObject(t *testing.T) {
	const n = 50
	var mu sync.Mutex
	calls := make([]int, n)
	var running, most atomic.Int32
	EachObject(n, func(i int) {
		r := running.Add(1)
		for {
			m := most.Load()
			if r <= m || most.CompareAndSwap(m, r) {
				break
			}
		}
		runtime.Gosched()
		mu.Lock()
		calls[i]++
		mu.Unlock()
		running.Add(-1)
	})
	for i, c := range calls {
		if c != 1 {
			t.Errorf("index %d resolved %d times", i, c)
		}
	}
	if m := int(most.Load()); m > runtime.GOMAXPROCS(0) || m < 1 {
		t.Errorf("%d resolutions at once, GOMAXPROCS is %d", m, runtime.GOMAXPROCS(0))
	}
	if r := running.Load(); r != 0 {
		t.Errorf("%d resolutions still running after EachObject returned", r)
	}
}

// TestAheadWait: a reading's result and error are what every Wait
// returns, from any goroutine.
func TestAheadWait(t *testing.T) {
	errBad := errors.New("bad object")
	a := OpenAhead(func() (Resolver, error) { return nil, errBad })
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r, err := a.Wait(); r != nil || err != errBad {
				t.Errorf("Wait = %v, %v; want nil, %v", r, err, errBad)
			}
		}()
	}
	wg.Wait()
	want, err := ReadKallsyms("testdata/kallsyms.txt")
	if err != nil {
		t.Fatal(err)
	}
	if k, err := ReadKallsymsAhead("testdata/kallsyms.txt").Wait(); err != nil || !reflect.DeepEqual(k, want) {
		t.Errorf("kallsyms read ahead differs from ReadKallsyms's (error %v)", err)
	}
	if k, err := ReadKallsymsAhead("testdata/no-such-kallsyms").Wait(); k != nil || err == nil {
		t.Errorf("a missing kallsyms read ahead gave %v, %v", k, err)
	}
}
