package pipeline

import "github.com/hwprof/hwprof/ccmap"

// A packet is a batch of samples that can be folded on its own: the frames
// of all its stacks and edge contexts in one backing array, and per
// sample the range of its frames and its weight.
type packet struct {
	frames []ccmap.Frame
	items  []item
}

type itemKind uint8

const (
	stackItem   itemKind = iota // AddStacks(frames[lo:hi], weight, count)
	edgeItem                    // AddEdge(site, callee, weight)
	edgeCtxItem                 // AddEdgeInContext(frames[lo:hi], site, callee, weight)
)

type item struct {
	kind   itemKind
	callee ccmap.FuncID
	lo, hi int
	site   ccmap.CallSite
	weight uint64
	count  uint64 // samples of a stack item
}

// newPacket returns an empty packet with room for size samples of 16
// frames (at most DefaultPacketSize; a larger packet grows as it fills).
func newPacket(size int) *packet {
	size = min(size, DefaultPacketSize)
	return &packet{
		frames: make([]ccmap.Frame, 0, 16*size),
		items:  make([]item, 0, size),
	}
}

func (pk *packet) addStack(frames []ccmap.Frame, weight, count uint64) {
	lo := len(pk.frames)
	pk.frames = append(pk.frames, frames...)
	pk.items = append(pk.items, item{kind: stackItem, lo: lo, hi: len(pk.frames), weight: weight, count: count})
}

func (pk *packet) addEdge(ctx []ccmap.Frame, site ccmap.CallSite, callee ccmap.FuncID, weight uint64) {
	it := item{kind: edgeItem, site: site, callee: callee, weight: weight}
	if ctx != nil {
		it.kind = edgeCtxItem
		it.lo = len(pk.frames)
		pk.frames = append(pk.frames, ctx...)
		it.hi = len(pk.frames)
	}
	pk.items = append(pk.items, it)
}

// fold adds every sample of the packet to m, stacks through pend when it
// is not nil (then m lacks them until pend is flushed).
func (pk *packet) fold(m *ccmap.Map, pend *pending) {
	for i := range pk.items {
		it := &pk.items[i]
		switch it.kind {
		case stackItem:
			if pend != nil && it.hi > it.lo {
				pend.add(m, pk.frames[it.lo:it.hi], it.weight, it.count)
				continue
			}
			m.AddStacks(pk.frames[it.lo:it.hi], it.weight, it.count)
		case edgeItem:
			m.AddEdge(it.site, it.callee, it.weight)
		case edgeCtxItem:
			m.AddEdgeInContext(pk.frames[it.lo:it.hi:it.hi], it.site, it.callee, it.weight)
		}
	}
}

func (pk *packet) reset() {
	pk.frames = pk.frames[:0]
	pk.items = pk.items[:0]
}
