package record

import (
	"os"
	"testing"
	"time"
)

// cpuTimes reads this process's user time as it burns CPU, and fails
// for a process that does not exist.
func TestCPUTimes(t *testing.T) {
	u0, _, ok := cpuTimes(os.Getpid())
	if !ok {
		t.Fatal("cannot read this process's /proc/PID/stat")
	}
	end := time.Now().Add(100 * time.Millisecond)
	n := 0
	for time.Now().Before(end) {
		n++
	}
	u1, s1, _ := cpuTimes(os.Getpid())
	if u1 <= u0 && s1 == 0 {
		t.Errorf("user time %v then %v (system %v) after 100 ms of spinning", u0, u1, s1)
	}
	if _, _, ok := cpuTimes(-1); ok {
		t.Error("cpuTimes(-1) read something")
	}
}
