package pipeline

import (
	"math/rand/v2"
	"runtime"
	"sync"

	"github.com/hwprof/hwprof/ccmap"
)

// DefaultPacketSize is the number of samples per packet when
// FoldOptions.PacketSize is 0.
const DefaultPacketSize = 4096

// FoldOptions configure a Folder.
type FoldOptions struct {
	Workers    int     // folding goroutines; 0 = runtime.GOMAXPROCS(0)
	PacketSize int     // samples (stacks and edges) per packet; 0 = DefaultPacketSize
	DedupRatio float64 // redundancy skipping: 0 or 1 = off; else in (0,1), the re-enable ratio RR
	Seed       uint64  // for the dedup draws
}

// Stats count what the producer handed to the folder.
type Stats struct {
	Samples uint64 // samples given to Add and AddStacks (skipped ones included)
	Edges   uint64 // call-edge events given to AddEdge
	Packets uint64 // packets handed to the workers
	Skipped uint64 // stacks not folded by redundancy skipping
	Stalls  uint64 // times the producer waited for a full queue
}

// A Folder folds samples into a CC-Map on a pool of worker goroutines, in
// shard maps merged at Close: the fold and merge stages of the pipeline.
//
// Add, AddEdge, Snapshot, Stats and Close must be called from one
// goroutine (the producer), or with the caller ordering them; workers are
// the only other goroutines and touch only packets and their own shards.
type Folder struct {
	size  int
	cur   *packet
	send  func(*packet) // hands a full packet over; tests capture packets
	dedup *deduper      // nil when skipping is off
	stats Stats

	work     chan *packet
	free     chan *packet
	shards   []*ccmap.Map
	pends    []*pending     // per shard: its stacks' sums not folded yet
	inflight sync.WaitGroup // packets sent and not yet folded
	workers  sync.WaitGroup
	result   *ccmap.Map // set by Close
}

// NewFolder starts a folder with its workers. Invalid options are taken as
// their defaults: a negative count as 0, a DedupRatio outside (0, 1) as
// off.
func NewFolder(o FoldOptions) *Folder {
	n := o.Workers
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	p := newProducer(o)
	p.work = make(chan *packet, 2*n)
	p.free = make(chan *packet, 3*n+1)
	p.send = p.submit
	p.shards = make([]*ccmap.Map, n)
	p.pends = make([]*pending, n)
	for i := range p.shards {
		p.shards[i] = ccmap.New()
		p.pends[i] = newPending()
		p.workers.Add(1)
		go p.worker(p.shards[i], p.pends[i])
	}
	return p
}

// newProducer returns a folder's producer side without workers and
// without send: tests set send to capture packets.
func newProducer(o FoldOptions) *Folder {
	size := o.PacketSize
	if size <= 0 {
		size = DefaultPacketSize
	}
	p := &Folder{size: size}
	if r := o.DedupRatio; r > 0 && r < 1 {
		p.dedup = &deduper{
			ratio:      r,
			seen:       make(map[uint64]struct{}),
			rng:        rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15)),
			compensate: ccmap.Compensate,
		}
	}
	p.cur = newPacket(size)
	return p
}

// Add hands over one sampled stack, innermost frame first, weighted by
// weight (the sample's period). The frames are copied; the caller may
// reuse them. It blocks while the queue is full.
func (p *Folder) Add(frames []ccmap.Frame, weight uint64) { p.AddStacks(frames, weight, 1) }

// AddStacks hands over count samples of one stack whose weights sum to
// weight (a caller that sums repeated stacks; ccmap.AddStacks). With
// DedupRatio the samples are admitted or skipped together: a caller that
// skips redundant stacks hands them over one at a time.
func (p *Folder) AddStacks(frames []ccmap.Frame, weight, count uint64) {
	p.mustRun()
	p.stats.Samples += count
	if len(frames) == 0 {
		return // ccmap ignores empty stacks; no signature to keep either
	}
	if p.dedup != nil {
		w, ok := p.dedup.admit(frames, weight)
		if !ok {
			p.stats.Skipped += count
			return
		}
		weight = w
	}
	p.cur.addStack(frames, weight, count)
	p.full()
}

// AddEdge hands over one call-edge event: weight calls from site to
// callee. With a nil ctx it is folded by ccmap's AddEdge; otherwise ctx
// holds the caller's frames, innermost first, and it is folded by
// AddEdgeInContext (an empty, non-nil ctx makes the caller a root). The
// frames are copied. It blocks while the queue is full.
func (p *Folder) AddEdge(ctx []ccmap.Frame, site ccmap.CallSite, callee ccmap.FuncID, weight uint64) {
	p.mustRun()
	p.stats.Edges++
	p.cur.addEdge(ctx, site, callee, weight)
	p.full()
}

func (p *Folder) mustRun() {
	if p.result != nil {
		panic("pipeline: sample added after Close")
	}
}

// full hands the current packet over when it holds PacketSize samples,
// or when its frames grew past 64 per sample on average (deep stacks),
// to bound the memory of one packet.
func (p *Folder) full() {
	if len(p.cur.items) >= p.size || len(p.cur.frames) >= 64*p.size {
		p.flush()
	}
}

// flush hands the current packet over if it holds anything.
func (p *Folder) flush() {
	if len(p.cur.items) == 0 {
		return
	}
	p.stats.Packets++
	p.send(p.cur)
	p.cur = p.newPacket()
}

func (p *Folder) newPacket() *packet {
	select {
	case pk := <-p.free:
		return pk
	default:
		return newPacket(p.size)
	}
}

// submit queues pk for the workers, waiting while the queue is full.
func (p *Folder) submit(pk *packet) {
	p.inflight.Add(1)
	select {
	case p.work <- pk:
	default:
		p.stats.Stalls++
		p.work <- pk
	}
}

// worker folds packets into its shard (stacks through its pending sums)
// until the queue is closed.
func (p *Folder) worker(shard *ccmap.Map, pend *pending) {
	defer p.workers.Done()
	for pk := range p.work {
		pk.fold(shard, pend)
		pk.reset()
		select {
		case p.free <- pk:
		default:
		}
		p.inflight.Done()
	}
}

// Snapshot returns a new map holding exactly everything added before the
// call, while the folder keeps running. It hands over the current
// packet, waits until the workers have folded every packet sent (at most
// the queue's worth) and merges copies of the shards; the producer is
// held for that time.
func (p *Folder) Snapshot() *ccmap.Map {
	if p.result != nil {
		return p.result.Clone()
	}
	p.flush()
	p.inflight.Wait()
	p.flushPending()
	return ccmap.Merge(p.shards...)
}

// Close hands over the last packet, stops the workers and returns the
// merged map. Later calls return the same map; Add after Close panics.
func (p *Folder) Close() *ccmap.Map {
	if p.result != nil {
		return p.result
	}
	p.flush()
	close(p.work)
	p.workers.Wait()
	p.flushPending()
	m := p.shards[0]
	for _, s := range p.shards[1:] {
		m.Merge(s)
	}
	p.result = m
	p.shards, p.pends = nil, nil
	return m
}

// flushPending folds the workers' pending sums into their shards; the
// workers must be idle.
func (p *Folder) flushPending() {
	for i, pend := range p.pends {
		pend.flush(p.shards[i])
	}
}

// Stats returns the counts so far.
func (p *Folder) Stats() Stats { return p.stats }
