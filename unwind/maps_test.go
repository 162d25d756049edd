package unwind

import "github.com/hwprof/hwprof/internal/procmap"

// hwprof's process model is a Maps.
var _ Maps = (*procmap.Map)(nil)

// lookupObject adapts a Lookup of the process model's types to Maps.
func lookupObject(mp procmap.Mapping, oa procmap.ObjAddr, ok bool) (Object, uint64, bool) {
	if !ok || mp.Object == nil {
		return nil, 0, false
	}
	return mp.Object, uint64(oa), true
}

func (f fakeMaps) LookupObject(pid, tid uint32, t, a uint64) (Object, uint64, bool) {
	return lookupObject(f.Lookup(pid, tid, t, procmap.Addr(a)))
}

func (j jitMaps) LookupObject(pid, tid uint32, t, a uint64) (Object, uint64, bool) {
	return lookupObject(j.Lookup(pid, tid, t, procmap.Addr(a)))
}

// path is the recorded path of a frame's object, "" when it has none.
func objPath(f Frame) string {
	if f.Object == nil {
		return ""
	}
	p, _, _ := f.Object.CFIFile()
	return p
}
