package tuning

import (
	"encoding/binary"
	"testing"
	"time"
)

// FuzzParsePolicy: no input panics; an accepted policy is valid and its
// String parses back to itself.
func FuzzParsePolicy(f *testing.F) {
	for _, s := range []string{"", "1%,15%,1%", ",20%", "0.5%,10%,2%", "0.02,0.1,0.005", "1,15,1", "%,%,%", "1e-3%,,", "NaN,Inf,-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePolicy(s)
		if err != nil {
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("ParsePolicy(%q) accepted an invalid policy: %v", s, err)
		}
		again, err := ParsePolicy(p.String())
		if err != nil {
			t.Fatalf("String %q of ParsePolicy(%q) does not parse: %v", p.String(), s, err)
		}
		if again.String() != p.String() {
			t.Fatalf("round trip %q → %q", p.String(), again.String())
		}
	})
}

// FuzzObserve drives a controller with arbitrary observations: it never
// panics, the period stays within bounds (prime for Count events, whole
// microseconds for Time events), and every decision is consistent.
func FuzzObserve(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	f.Add(make([]byte, 64))
	f.Add([]byte("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		kind := Time
		if len(data) > 0 && data[0]&1 == 1 {
			kind = Count
		}
		c, err := New(DefaultPolicy(), kind, 0)
		if err != nil {
			t.Fatal(err)
		}
		b := DefaultPolicy().Bounds(kind)
		for len(data) >= 16 {
			u := binary.LittleEndian.Uint64(data)
			v := binary.LittleEndian.Uint64(data[8:])
			data = data[16:]
			o := Observation{
				Duration:   time.Duration(u & 0xffffffff),
				CPUs:       int(u>>32) & 0xff,
				Samples:    (u >> 40) & 0xffff,
				Repeats:    v & 0xffff,
				Lost:       (v >> 16) & 0x3,
				Throttled:  (v >> 18) & 0x1,
				SelfCPU:    time.Duration((v >> 19) & 0xffffff),
				ProgramCPU: time.Duration((v>>43)&0xfff) * time.Millisecond,
				LBRPairs:   (v >> 55) & 0x7,
				LBROverlap: float64((u>>56)&0xff) / 200,
			}
			prev := c.Period()
			d := c.Observe(o)
			p := c.Period()
			switch {
			case d.Period != p || d.Changed != (p != prev) || d.Reason == "":
				t.Fatalf("decision %+v after period %d", d, prev)
			case p < b.Min || p > b.Max:
				t.Fatalf("period %d outside %d–%d", p, b.Min, b.Max)
			case kind == Count && !isPrime(p):
				t.Fatalf("count period %d is not prime", p)
			case kind == Time && p%1000 != 0:
				t.Fatalf("time period %d is not whole microseconds", p)
			}
		}
	})
}
