package tuning_test

import (
	"fmt"
	"time"

	"github.com/hwprof/hwprof/tuning"
)

// The caller's loop for one cpu-clock event: count repeated top frames
// per sample, observe each interval, apply the decision to every CPU's
// event (PERF_EVENT_IOC_PERIOD with a pointer to the new u64 period).
// With a budget (--adaptive=1%,15%,2%) the repetition share moves the
// period; the default holds it near perf's rate.
func ExampleController() {
	p, err := tuning.ParsePolicy("1%,15%,2%")
	if err != nil {
		panic(err)
	}
	c, err := tuning.New(p, tuning.Time, 1_000_000) // cpu-clock every 1ms
	if err != nil {
		panic(err)
	}
	rc := tuning.NewRepeatCounter(64)

	// First interval: one thread, a different top frame every sample.
	for i := range 1000 {
		rc.Add(42, uint64(0x401000+i))
	}
	samples, repeats := rc.Take()
	d := c.Observe(tuning.Observation{Duration: time.Second, CPUs: 1, Samples: samples, Repeats: repeats, SelfCPU: time.Millisecond})
	fmt.Println(d.Changed, d.Rule, d.Reason)

	// Second interval, at the new period: every 25th sample finds the
	// previous sample's frame still on top.
	for i := range 1000 {
		top := uint64(0x402000 + i)
		if i%25 == 0 {
			top--
		}
		rc.Add(42, top)
	}
	samples, repeats = rc.Take()
	d = c.Observe(tuning.Observation{Duration: 347 * time.Millisecond, CPUs: 1, Samples: samples, Repeats: repeats, SelfCPU: time.Millisecond})
	fmt.Println(d.Changed, d.Rule, d.Reason)
	// Output:
	// true repetition repetition 0% < 1%: shrink period 1ms → 347µs
	// false stable repetition 3.9% in 1%–15%: keep period 347µs
}
