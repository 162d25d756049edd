package tuning

import "testing"

func TestRepeatCounter(t *testing.T) {
	type add struct {
		tid    uint32
		top    uint64
		repeat bool
	}
	rows := []struct {
		name string
		adds []add
	}{
		{"one thread", []add{{1, 0xa, false}, {1, 0xa, true}, {1, 0xb, false}, {1, 0xb, true}, {1, 0xb, true}, {1, 0xa, false}}},
		{"threads apart", []add{{1, 0xa, false}, {2, 0xa, false}, {1, 0xa, true}, {2, 0xb, false}, {1, 0xb, false}, {2, 0xb, true}}},
		{"thread 0", []add{{0, 7, false}, {0, 7, true}}},
		{"the largest tid", []add{{^uint32(0), 7, false}, {^uint32(0), 7, true}, {0, 7, false}}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			rc := NewRepeatCounter(4)
			var want uint64
			for i, a := range row.adds {
				if got := rc.Add(a.tid, a.top); got != a.repeat {
					t.Errorf("add %d (%d, %#x) = %v", i, a.tid, a.top, got)
				}
				if a.repeat {
					want++
				}
			}
			if s, r := rc.Take(); s != uint64(len(row.adds)) || r != want {
				t.Errorf("Take() = %d, %d, want %d, %d", s, r, len(row.adds), want)
			}
		})
	}
}

func TestRepeatCounterTakeKeepsThreads(t *testing.T) {
	rc := NewRepeatCounter(1)
	rc.Add(5, 1)
	if s, r := rc.Take(); s != 1 || r != 0 {
		t.Fatalf("Take() = %d, %d", s, r)
	}
	if !rc.Add(5, 1) {
		t.Error("a repeat across Take was missed")
	}
	if s, r := rc.Take(); s != 1 || r != 1 {
		t.Errorf("Take() = %d, %d, want 1, 1", s, r)
	}
	rc.Forget(5)
	if rc.Add(5, 1) {
		t.Error("a forgotten thread repeated")
	}
	rc.Forget(12345) // unknown: nothing happens
}

// TestRepeatCounterManyThreads: more threads than slots lose some repeats
// but never invent one, and a thread that samples twice in a row is
// always counted.
func TestRepeatCounterManyThreads(t *testing.T) {
	rc := NewRepeatCounter(0) // 64 slots
	for tid := range uint32(10000) {
		rc.Add(tid, 1)
		if !rc.Add(tid, 1) {
			t.Fatalf("thread %d: back-to-back repeat missed", tid)
		}
	}
	for tid := range uint32(10000) { // round robin: most were evicted
		if rc.Add(tid, 2) {
			t.Fatalf("thread %d: a repeat invented", tid)
		}
	}
	if s, r := rc.Take(); s != 30000 || r != 10000 {
		t.Errorf("Take() = %d, %d", s, r)
	}
}

func TestRepeatCounterAllocs(t *testing.T) {
	rc := NewRepeatCounter(16)
	tid := uint32(0)
	allocs := testing.AllocsPerRun(1000, func() {
		tid = (tid + 7) % 100
		rc.Add(tid, uint64(tid%3))
	})
	if allocs != 0 {
		t.Errorf("Add allocates %v times", allocs)
	}
}

// TestRepeatCounterLeastThread: threads share the period, so Take reports
// the repetition of the least repeating thread that holds a fair share
// of the samples, not the pool's: a spinning thread (every sample the
// same activation) beside one of short calls (none) reads as the latter;
// a thread with too few samples does not decide; a thread repeating more
// than the pool never raises the count.
func TestRepeatCounterLeastThread(t *testing.T) {
	rows := []struct {
		name        string
		spin, calls int // samples of a thread that always repeats, and of one that never does
		late        int // samples of a third thread that never repeats
		want        uint64
	}{
		{"spin beside calls", 400, 400, 0, 0},
		{"calls thread too small to decide", 400, 10, 0, 399},
		{"calls thread under its fair share", 400, 40, 0, 399},
		{"three threads", 300, 0, 100, 0},
		{"spin alone", 400, 0, 0, 399},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			rc := NewRepeatCounter(4)
			for i := range row.spin {
				rc.Add(1, 0xa)
				if i < row.calls {
					rc.Add(2, uint64(i))
				}
				if i < row.late {
					rc.Add(3, uint64(i))
				}
			}
			n := uint64(row.spin + row.calls + row.late)
			if s, r := rc.Take(); s != n || r != row.want {
				t.Errorf("Take() = %d, %d, want %d, %d", s, r, n, row.want)
			}
			// the next interval starts afresh
			if s, r := rc.Take(); s != 0 || r != 0 {
				t.Errorf("second Take() = %d, %d, want 0, 0", s, r)
			}
		})
	}
}
