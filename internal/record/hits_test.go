package record

import (
	"slices"
	"testing"
)

// hitPaths are the paths marked, sorted.
func hitPaths(h *hits) []string {
	var p []string
	for k := range h.hit {
		p = append(p, k)
	}
	slices.Sort(p)
	return p
}

// TestHitsMark: an address marks the object its process had mapped
// there, or its parent (fork) had; stack words outside every mapping,
// addresses of other processes and of gaps mark nothing.
func TestHitsMark(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(h *hits)
		want []string
	}{
		{"program and library", func(h *hits) {
			h.addMapping(10, 0x400000, 0x1000, "/bin/prog")
			h.addMapping(10, 0x7f0000000000, 0x20000, "/lib/libc.so.6")
			h.addMapping(10, 0x7f1000000000, 0x20000, "/lib/libunused.so")
			h.mark(10, 0x400800)
			h.mark(10, 0x7f0000010000)
		}, []string{"/bin/prog", "/lib/libc.so.6"}},
		{"end is outside, gap marks nothing", func(h *hits) {
			h.addMapping(10, 0x400000, 0x1000, "/bin/prog")
			h.addMapping(10, 0x500000, 0x1000, "/bin/other")
			h.mark(10, 0x401000)
			h.mark(10, 0x4fffff)
			h.mark(10, 0x3fffff)
		}, nil},
		{"another process's mapping", func(h *hits) {
			h.addMapping(10, 0x400000, 0x1000, "/bin/prog")
			h.mark(11, 0x400800)
		}, nil},
		{"forked child inherits", func(h *hits) {
			h.addMapping(10, 0x400000, 0x1000, "/bin/prog")
			h.addFork(11, 10)
			h.addFork(12, 11)
			h.addMapping(12, 0x600000, 0x1000, "/bin/exec")
			h.mark(12, 0x400010)
		}, []string{"/bin/prog"}},
		{"a mapping within a larger one", func(h *hits) {
			h.addMapping(10, 0x400000, 0x100000, "/bin/big")
			h.addMapping(10, 0x410000, 0x1000, "/bin/small")
			h.mark(10, 0x480000) // after small, in big
		}, []string{"/bin/big"}},
		{"stack words", func(h *hits) {
			h.addMapping(10, 0x400000, 0x1000, "/bin/prog")
			for _, w := range []uint64{0, 42, 0x7ffc00001000, 0x400123} {
				h.markWord(10, w)
			}
		}, []string{"/bin/prog"}},
	} {
		h := newHits()
		tc.run(h)
		if got := hitPaths(h); !slices.Equal(got, tc.want) {
			t.Errorf("%s: marked %v, want %v", tc.name, got, tc.want)
		}
	}
}
