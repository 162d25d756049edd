package tuning

import "math"

// RepeatCounter counts the samples whose top frame equals the previous
// sample's top frame on the same thread, the CC-Map paper's repetition
// measure. It remembers the last top frame of a fixed number of threads
// in an open-addressed table, so Add never allocates; when more threads
// than that are live, some of their repeats are missed (counted as not
// repeating), which errs towards a finer period that the budget bounds.
//
// What a "top frame" is belongs to the caller; see the package
// documentation. Use one RepeatCounter per tuned event.
//
// Several threads share one period, and a period that suits their pooled
// repetition suits none of them when their activations differ: a thread
// in one long loop repeats at any period and would lengthen the period of
// a thread of short calls, which then loses accuracy that nothing caps.
// So Take reports the repetition of the least repeating thread (among
// those that hold a fair share of the samples), the one whose accuracy
// the period decides; a finer period costs overhead, which the budget
// caps. A single thread's count is unchanged.
type RepeatCounter struct {
	slots            []repeatSlot
	mask             uint32
	samples, repeats uint64
}

type repeatSlot struct {
	key uint64 // tid+1; 0 marks a free slot
	top uint64
	// the thread's samples and repeats since the last Take
	samples, repeats uint64
}

// A thread's repetition speaks for the period in Take when it holds at
// least 1/threadShare of the samples and minThreadSamples of them.
const (
	threadShare      = 8
	minThreadSamples = 16
)

// repeatProbe is how many slots Add looks at before evicting.
const repeatProbe = 8

// NewRepeatCounter returns a counter that remembers at least threads
// threads (the table has at least twice as many slots, and 64 at least).
func NewRepeatCounter(threads int) *RepeatCounter {
	n := 64
	for n < 2*threads && n < 1<<30 {
		n *= 2
	}
	return &RepeatCounter{slots: make([]repeatSlot, n), mask: uint32(n - 1)}
}

// Add counts one sample of thread tid whose top frame is top, and reports
// whether it repeats the thread's previous top frame.
func (rc *RepeatCounter) Add(tid uint32, top uint64) bool {
	rc.samples++
	key := uint64(tid) + 1
	home := (tid * 0x9E3779B1) & rc.mask // Fibonacci hashing spreads sequential tids
	free := -1
	for i := range uint32(repeatProbe) {
		j := (home + i) & rc.mask
		s := &rc.slots[j]
		if s.key == key {
			repeat := s.top == top
			s.top = top
			s.samples++
			if repeat {
				rc.repeats++
				s.repeats++
			}
			return repeat
		}
		if s.key == 0 && free < 0 {
			free = int(j)
		}
	}
	if free < 0 {
		free = int(home) // evict the home slot's thread
	}
	rc.slots[free] = repeatSlot{key: key, top: top, samples: 1}
	return false
}

// Forget drops thread tid, for example on its PERF_RECORD_EXIT, so its
// slot can serve another thread.
func (rc *RepeatCounter) Forget(tid uint32) {
	key := uint64(tid) + 1
	home := (tid * 0x9E3779B1) & rc.mask
	for i := range uint32(repeatProbe) {
		if s := &rc.slots[(home+i)&rc.mask]; s.key == key {
			*s = repeatSlot{}
			return
		}
	}
}

// Take returns the samples counted since the last Take and the repeats:
// the pooled count, or, when a thread that holds a fair share of the
// samples repeats less than the pool, the count at that thread's share
// (the least repeating such thread's). It starts counting afresh; the
// threads' last top frames are kept, so a repeat across the boundary
// still counts.
func (rc *RepeatCounter) Take() (samples, repeats uint64) {
	samples, repeats = rc.samples, rc.repeats
	rc.samples, rc.repeats = 0, 0
	least := -1.0
	for i := range rc.slots {
		s := &rc.slots[i]
		if s.samples >= minThreadSamples && threadShare*s.samples >= samples {
			if r := float64(s.repeats) / float64(s.samples); least < 0 || r < least {
				least = r
			}
		}
		s.samples, s.repeats = 0, 0
	}
	if least >= 0 && least*float64(samples) < float64(repeats) {
		repeats = uint64(math.Round(least * float64(samples)))
	}
	return samples, repeats
}
