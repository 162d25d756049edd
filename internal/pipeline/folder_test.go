package pipeline

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/hwprof/hwprof/ccmap"
)

func TestWorkers(t *testing.T) {
	evs := events(1, 20000)
	want := direct(evs)
	for _, workers := range []int{1, 2, 3, 8} {
		for _, size := range []int{1, 37, 0} {
			t.Run(fmt.Sprintf("workers=%d,packet=%d", workers, size), func(t *testing.T) {
				p := NewFolder(FoldOptions{Workers: workers, PacketSize: size})
				feed(p, evs)
				got := p.Close()
				if err := got.Check(); err != nil {
					t.Fatal(err)
				}
				if !ccmap.Equal(got, want) {
					t.Fatalf("pipeline map differs from the direct fold (totals %+v, want %+v)", got.Totals(), want.Totals())
				}
				st := p.Stats()
				if st.Samples+st.Edges != uint64(len(evs)) || st.Skipped != 0 {
					t.Errorf("stats %+v for %d events", st, len(evs))
				}
				if size == 37 && st.Packets != uint64((len(evs)+36)/37) {
					t.Errorf("%d packets of 37 for %d events", st.Packets, len(evs))
				}
			})
		}
	}
}

// TestPacketOrder folds the packets the producer makes in shuffled orders,
// spread over several shards, and compares with the direct fold.
func TestPacketOrder(t *testing.T) {
	evs := events(2, 10000)
	want := direct(evs)
	var pkts []*packet
	p := newProducer(FoldOptions{PacketSize: 50})
	p.send = func(pk *packet) { pkts = append(pkts, pk) }
	feed(p, evs)
	p.flush()
	if len(pkts) != 200 {
		t.Fatalf("%d packets, want 200", len(pkts))
	}
	r := rand.New(rand.NewPCG(3, 3))
	for trial := range 5 {
		order := r.Perm(len(pkts))
		shards := make([]*ccmap.Map, 1+trial)
		pends := make([]*pending, len(shards))
		for i := range shards {
			shards[i] = ccmap.New()
			if trial%2 == 1 { // stacks summed before folding
				pends[i] = newPending()
			}
		}
		for k, i := range order {
			pkts[i].fold(shards[k%len(shards)], pends[k%len(shards)])
		}
		for i, pend := range pends {
			if pend != nil {
				pend.flush(shards[i])
			}
		}
		r.Shuffle(len(shards), func(i, j int) { shards[i], shards[j] = shards[j], shards[i] })
		if got := ccmap.Merge(shards...); !ccmap.Equal(got, want) {
			t.Fatalf("trial %d: packets folded in order %v… into %d shards differ from the direct fold", trial, order[:5], len(shards))
		}
	}
}

func TestSnapshot(t *testing.T) {
	evs := events(4, 9000)
	p := NewFolder(FoldOptions{Workers: 3, PacketSize: 100})
	prev := 0
	for _, cut := range []int{0, 1234, 1234, 5050, 9000} {
		feed(p, evs[prev:cut])
		prev = cut
		s := p.Snapshot()
		if !ccmap.Equal(s, direct(evs[:cut])) {
			t.Fatalf("snapshot after %d events differs from their direct fold", cut)
		}
		// The snapshot is the caller's: folding into it leaves the pipeline alone.
		s.AddStack([]ccmap.Frame{{Func: 999}}, 1)
	}
	got := p.Close()
	if !ccmap.Equal(got, direct(evs)) {
		t.Fatal("map after snapshots differs from the direct fold")
	}
	if s := p.Snapshot(); !ccmap.Equal(s, got) || s == got {
		t.Fatal("snapshot after Close is not a copy of the result")
	}
	if p.Close() != got {
		t.Fatal("second Close returned another map")
	}
}

// TestFramesCopied reuses the caller's frame buffer after every call.
func TestFramesCopied(t *testing.T) {
	evs := events(5, 3000)
	p := NewFolder(FoldOptions{Workers: 2, PacketSize: 64})
	buf := make([]ccmap.Frame, 0, 32)
	for _, e := range evs {
		buf = append(buf[:0], e.frames...)
		if e.edge {
			ctx := buf
			if e.frames == nil {
				ctx = nil
			}
			p.AddEdge(ctx, e.site, e.callee, e.weight)
		} else {
			p.Add(buf, e.weight)
		}
		for i := range buf {
			buf[i] = ccmap.Frame{Func: 12345, Site: 0xdead}
		}
	}
	if !ccmap.Equal(p.Close(), direct(evs)) {
		t.Fatal("pipeline kept references to the caller's frames")
	}
}

// TestBackpressure: with no worker taking packets, the producer stops
// after the queue is full, and goes on when a packet is taken.
func TestBackpressure(t *testing.T) {
	p := newProducer(FoldOptions{PacketSize: 1})
	p.work = make(chan *packet, 2)
	p.free = make(chan *packet, 1)
	p.send = p.submit
	added := make(chan int, 10)
	go func() {
		for i := range 4 {
			p.Add([]ccmap.Frame{{Func: ccmap.FuncID(i)}}, 1)
			added <- i
		}
		close(added)
	}()
	for i := range 2 {
		if got := <-added; got != i {
			t.Fatalf("added %d, want %d", got, i)
		}
	}
	select {
	case i := <-added:
		t.Fatalf("sample %d was added with the queue full", i)
	case <-time.After(200 * time.Millisecond):
	}
	for i := 2; i < 4; i++ {
		pk := <-p.work
		p.inflight.Done()
		if len(pk.items) != 1 {
			t.Fatalf("packet with %d samples", len(pk.items))
		}
		if got := <-added; got != i {
			t.Fatalf("added %d, want %d", got, i)
		}
	}
	if _, ok := <-added; ok {
		t.Fatal("more samples than added")
	}
	if st := p.Stats(); st.Stalls == 0 || st.Packets != 4 {
		t.Errorf("stats %+v: want 4 packets and a stall", st)
	}
}

func TestAddAfterClose(t *testing.T) {
	p := NewFolder(FoldOptions{Workers: 1})
	p.Close()
	defer func() {
		if recover() == nil {
			t.Fatal("Add after Close did not panic")
		}
	}()
	p.Add([]ccmap.Frame{{Func: 1}}, 1)
}

// TestFoldOptionsDefaults: NewFolder takes bad values as defaults rather than
// failing.
func TestFoldOptionsDefaults(t *testing.T) {
	p := NewFolder(FoldOptions{Workers: -1, PacketSize: -1, DedupRatio: 7})
	p.Add([]ccmap.Frame{{Func: 1}}, 5)
	if m := p.Close(); m.Totals().Samples != 5 || p.Stats().Skipped != 0 {
		t.Fatalf("totals %+v, stats %+v", m.Totals(), p.Stats())
	}
}
