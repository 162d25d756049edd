package engine

import (
	"slices"

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/ccmap"
	"github.com/hwprof/hwprof/lbr"
	"github.com/hwprof/hwprof/perf"
)

// lbrState is the decoding of branch stacks and call samples: the LBR
// decoder, the current sample (for its code reads), per edge the sum of
// the periods of its appearances, and call samples whose edge could not
// be derived.
type lbrState struct {
	dec          *lbr.Decoder
	cur          *perf.Sample
	edges        lbrEdges         // per edge the sum of the periods of its appearances
	calls        []lbr.Call       // buffer
	chain        []addrspace.Addr // buffer: a call sample's user callchain
	callsUnknown uint64
}

type lbrKey struct {
	caller, callee ccmap.FuncID
	site           uint64
}

type lbrSum struct {
	periods uint64 // sum of the periods of the appearances with a known period
	plain   uint64 // appearances without a known period
}

// branches folds the call edges of s's branch stack into the per-edge
// period sums.
func (l *loader) branches(s *perf.Sample, period uint64) {
	if len(s.Branches) == 0 {
		return
	}
	l.lbr.cur = s
	l.lbr.calls = l.lbr.dec.Decode(l.lbr.calls[:0], s.PID, s.Branches)
	for _, c := range l.lbr.calls {
		rk := lbrRuntime{s.PID, c.Site, c.Callee}
		i, ok := l.lbr.edges.find(rk)
		if !ok {
			site := l.runtimeKey(s, c.Site)
			callee := l.runtimeKey(s, c.Callee)
			i = l.lbr.edges.put(rk, lbrKey{caller: l.addrs.id(site), callee: l.addrs.id(callee), site: uint64(site.addr)})
		}
		sum := &l.lbr.edges.sums[i]
		if period > 0 {
			sum.periods += period
		} else {
			sum.plain++
		}
	}
	l.lbr.cur = nil
}

// runtimeKey interns a runtime address of s's process.
func (l *loader) runtimeKey(s *perf.Sample, a addrspace.Addr) addrKey {
	if m, oa, ok := l.maps.Lookup(s.PID, s.TID, s.Time, a); ok {
		return newAddrKey(m.Object, s.PID, oa)
	}
	return addrKey{obj: nil, addr: addrspace.Unmapped(a)}
}

// flushLBR turns the per-edge sums into estimated call counts: each
// appearance weighs P/D (lbr.Estimator, mode EveryEntry), the sum over an
// edge is rounded up or down at random in proportion to its fraction, so
// the integer count keeps the estimate's expectation.
func (l *loader) flushLBR() {
	e := &l.lbr.edges
	if len(e.keys) == 0 {
		return
	}
	est := lbr.Estimator{Depth: l.lbr.dec.MaxWindow(), Mode: lbr.EveryEntry}
	keys := slices.Clone(e.keys)
	sortLBRKeys(keys) // the random rounding must not depend on the order edges were seen in
	for _, k := range keys {
		sum := e.sums[e.index[k]]
		calls := float64(sum.plain)
		if sum.periods > 0 {
			calls += est.Weight(sum.periods, 0)
		}
		n := uint64(calls)
		if frac := calls - float64(n); frac > 0 && l.rng.Float64() < frac {
			n++
		}
		if n > 0 {
			l.fold.AddEdge(nil, ccmap.CallSite{Caller: k.caller, Addr: k.site}, k.callee, n)
		}
	}
}

// callSample folds the call edge a sample of a calls-retired event stands
// for, weighted by its period (each sample stands for period calls):
// lbr.CallFromSample derives its call site and callee from what the IP
// means at the event's precise level (see lbr/calls.go), the callchain
// and the code.
func (l *loader) callSample(s *perf.Sample, ev int, weight uint64) {
	a := l.r.Format().Attr(ev)
	cs := lbr.CallSample{PID: s.PID, IP: addrspace.Addr(s.IP), Meaning: lbr.SampleIPMeaning(a.PreciseIP, s.Misc), Chain: l.lbr.chain[:0]}
	if s.Has(perf.SampleCallchain) {
		for _, r := range perf.SplitCallchain(s.Callchain).User {
			cs.Chain = append(cs.Chain, addrspace.Addr(r))
		}
	}
	l.lbr.chain = cs.Chain
	l.lbr.cur = s
	e, ok := lbr.CallFromSample(cs, lbrCode{l})
	l.lbr.cur = nil
	if !ok || e.Site == 0 || e.Callee == 0 {
		l.lbr.callsUnknown++
		return
	}
	site := l.runtimeKey(s, e.Site)
	callee := l.runtimeKey(s, e.Callee)
	l.fold.AddEdge(nil, ccmap.CallSite{Caller: l.addrs.id(site), Addr: uint64(site.addr)}, l.addrs.id(callee), weight)
}

// lbrCode reads code for the LBR decoder through the process model at
// the current sample's thread and time.
type lbrCode struct{ l *loader }

func (c lbrCode) Code(pid uint32, addr addrspace.Addr) ([]byte, bool) {
	s := c.l.lbr.cur
	if s == nil {
		return nil, false
	}
	m, oa, ok := c.l.maps.Lookup(pid, s.TID, s.Time, addr)
	if !ok || m.Object == nil {
		return nil, false
	}
	return c.l.code.read(m.Object, oa, lbr.MaxInstLen)
}
