package record

import (
	"testing"
	"time"

	"github.com/hwprof/hwprof/internal/testenv"
)

// TestPerfClockNow: the perf clock read twice moves forward by about the
// time between, as the monotonic clock does over the same span (a 50 ms
// sleep; at most a second more on a busy machine).
func TestPerfClockNow(t *testing.T) {
	testenv.PerfEvents(t)
	a, err := perfClockNow()
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	time.Sleep(50 * time.Millisecond)
	b, err := perfClockNow()
	if err != nil {
		t.Fatal(err)
	}
	m := time.Since(t0)
	d := time.Duration(b) - time.Duration(a)
	t.Logf("perf clock moved %v while the monotonic clock moved %v", d, m)
	if d < 50*time.Millisecond || d > m+time.Second {
		t.Errorf("perf clock moved %v over a 50 ms sleep (monotonic clock %v)", d, m)
	}
}
