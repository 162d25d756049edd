package autofdo

import (
	"strings"
	"testing"
)

// TestDiscriminators: discriminators as clang 19 wrote them into the line
// table of testdata/c/fdobench.c (-O2 -fdebug-info-for-profiling), with
// the base discriminator and duplication factor of each
// (llvm-dwarfdump --debug-line; the loop of polygon is unrolled 8 times).
func TestDiscriminators(t *testing.T) {
	for _, c := range []struct {
		d          uint32
		base       uint32
		dup        uint64
		whatItWrit string
	}{
		{0, 0, 1, "no discriminator"},
		{2, 1, 1, "base 1 (a second block of a line)"},
		{4, 2, 1, "base 2"},
		{33, 0, 8, "base 0 in an 8-times unrolled loop"},
		{2050, 1, 8, "base 1 in an 8-times unrolled loop"},
	} {
		if b, d := baseDiscriminator(c.d), duplication(c.d); b != c.base || d != c.dup {
			t.Errorf("discriminator %d (%s): base %d, duplication %d; want %d, %d", c.d, c.whatItWrit, b, d, c.base, c.dup)
		}
	}
}

func TestCanonical(t *testing.T) {
	for in, want := range map[string]string{
		"_ZN6shapes6Square4areaEi":   "_ZN6shapes6Square4areaEi",
		"classify.cold":              "classify",
		"foo.part.0":                 "foo",
		"bar.constprop.0.isra.0":     "bar",
		"baz.llvm.1234567":           "baz",
		"clock_gettime@@GLIBC_2.17":  "clock_gettime",
		"memcpy@GLIBC_2.2.5":         "memcpy",
		"_ZL7helperv.__uniq.1234567": "_ZL7helperv.__uniq.1234567",
	} {
		if got := canonical(in); got != want {
			t.Errorf("canonical(%q) = %q, want %q", in, got, want)
		}
	}
}

// sampleProfile is round_shapes of fdobench with square inlined, as
// a timer recording gives it: samples.
func sampleProfile() *Profile {
	p := NewProfile()
	f := p.fn("round_shapes")
	f.Body[Loc{0, 0}] = 1
	f.Body[Loc{2, 1}] = 103
	f.Body[Loc{3, 0}] = 300
	f.Body[Loc{4, 0}] = 100
	f.Sampled = 520
	f.addTarget(Loc{3, 0}, "polygon", 700)
	sq := f.inlined(Loc{3, 0}, "square")
	sq.Body[Loc{0, 0}] = 50
	sq.Sampled = 50
	return p
}

func TestWriteText(t *testing.T) {
	var b strings.Builder
	if err := WriteText(&b, sampleProfile()); err != nil {
		t.Fatal(err)
	}
	want := `round_shapes:570:0
 0: 1
 2.1: 103
 3: 300 polygon:700
 4: 100
 3: square:50
  0: 50
`
	if b.String() != want {
		t.Errorf("WriteText:\n%s\nwant:\n%s", b.String(), want)
	}
}

// shapeCalls are the exact calls of the tests' program: round_shapes,
// called 100 times, calls square 99000 times and polygon 1000 at line 3
// and classify 100000 times at line 4; polygon is called 1000 times.
func shapeCalls() *Profile {
	c := NewProfile()
	f := c.fn("round_shapes")
	f.Head = 100
	f.addTarget(Loc{3, 0}, "square", 99000)
	f.addTarget(Loc{3, 0}, "polygon", 1000)
	f.addTarget(Loc{4, 0}, "classify", 100000)
	callLines(f)
	c.fn("polygon").Head = 1000
	return c
}

// TestCombine: the calls of an exact recording give the heads and call
// targets; the samples are scaled to executions by the calls on the
// lines that call (here 200000 calls on lines with 400 samples: 500 a
// sample); a line that calls counts at least its calls.
func TestCombine(t *testing.T) {
	c := shapeCalls()
	p := Combine([]Counts{{Samples: sampleProfile()}, {Calls: c}})
	r := p.Funcs["round_shapes"]
	if r == nil || p.Funcs["polygon"] == nil {
		t.Fatalf("Combine lost a function: %v", p.Funcs)
	}
	if r.Head != 100 {
		t.Errorf("head %d, want the calls' 100", r.Head)
	}
	want := map[Loc]uint64{{0, 0}: 500, {2, 1}: 51500, {3, 0}: 150000, {4, 0}: 100000}
	for l, n := range want {
		if r.Body[l] != n {
			t.Errorf("line %v: %d, want %d", l, r.Body[l], n)
		}
	}
	if ts := r.Targets[Loc{3, 0}]; ts["square"] != 99000 || ts["polygon"] != 1000 || len(ts) != 2 {
		t.Errorf("call targets at line 3: %v, want the exact calls", ts)
	}
	if sq := r.Inlined[Loc{3, 0}]["square"]; sq == nil || sq.Body[Loc{0, 0}] != 25000 {
		t.Errorf("inlined square: %+v, want its 50 samples scaled to 25000", sq)
	}
	if p.Funcs["polygon"].Head != 1000 || p.Funcs["polygon"].Body[Loc{0, 0}] != 0 {
		t.Errorf("polygon (calls only): %+v", p.Funcs["polygon"])
	}
}

// TestCombinePartial: calls of part of the run (an exact recording
// stopped early) give no heads and no per-function scale: the samples
// are scaled by the program's ratio (here 500 a sample, as in
// TestCombine), and the calls only share out each site's samples.
func TestCombinePartial(t *testing.T) {
	c := shapeCalls()
	p := Combine([]Counts{{Samples: sampleProfile()}, {Calls: c, Partial: true}})
	r := p.Funcs["round_shapes"]
	if r == nil || len(p.Funcs) != 1 {
		t.Fatalf("Combine made %v, want round_shapes alone (the samples' functions)", p.Funcs)
	}
	if r.Head != 0 {
		t.Errorf("head %d, want the samples' 0, not the partial calls' 100", r.Head)
	}
	want := map[Loc]uint64{{0, 0}: 500, {2, 1}: 51500, {3, 0}: 150000, {4, 0}: 50000}
	for l, n := range want {
		if r.Body[l] != n {
			t.Errorf("line %v: %d, want %d", l, r.Body[l], n)
		}
	}
	if ts := r.Targets[Loc{3, 0}]; ts["square"] != 346500 || ts["polygon"] != 3500 || len(ts) != 2 {
		t.Errorf("call targets at line 3: %v, want the 350000 sampled shared 99:1", ts)
	}
}
