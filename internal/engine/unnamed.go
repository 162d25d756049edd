package engine

import "github.com/hwprof/hwprof/symbolize"

// Unnamed returns the keys of object files that were read but named none
// of the addresses looked up in them (a stripped object whose debug file
// was found nowhere), in the order they were first added: their
// functions show as [object+0xoffset]. The kernel and JIT code are left
// out (their own warnings, or none, say why).
func (s *Symbols) Unnamed() []symbolize.ObjectKey {
	var out []symbolize.ObjectKey
	for k, r := range s.results {
		key := s.keys[k]
		if r.Err != nil || len(r.Locations) == 0 || key.Path == symbolize.KernelPath || IsPerfMap(key.Path) || IsJITDump(key.Path) {
			continue
		}
		named := false
		for i := range r.Locations {
			if r.Locations[i].Symbol != nil {
				named = true
				break
			}
		}
		if !named {
			out = append(out, key)
		}
	}
	return out
}
