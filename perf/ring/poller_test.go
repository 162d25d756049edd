package ring

import (
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func newPoller(t *testing.T) *Poller {
	t.Helper()
	p, err := NewPoller()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func pipe(t *testing.T) (r, w int) {
	t.Helper()
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	return fds[0], fds[1]
}

func TestPollerTimeout(t *testing.T) {
	p := newPoller(t)
	for _, d := range []time.Duration{0, 30 * time.Millisecond} {
		start := time.Now()
		ready, hup, woken, err := p.Wait(d)
		if err != nil || len(ready) != 0 || len(hup) != 0 || woken {
			t.Fatalf("Wait(%v) = %v %v %v %v, want nothing", d, ready, hup, woken, err)
		}
		if el := time.Since(start); el < d {
			t.Errorf("Wait(%v) returned after %v", d, el)
		}
	}
}

func TestPollerWake(t *testing.T) {
	p := newPoller(t)
	// Wake before Wait: the next Wait returns at once, and only that one.
	p.Wake()
	p.Wake()
	if _, _, woken, err := p.Wait(time.Second); !woken || err != nil {
		t.Fatalf("Wait after Wake: woken %v err %v", woken, err)
	}
	if _, _, woken, _ := p.Wait(0); woken {
		t.Fatal("a second Wait is woken too: the eventfd was not reset")
	}
	// Wake from another goroutine while Wait blocks.
	go func() {
		time.Sleep(20 * time.Millisecond)
		p.Wake()
	}()
	start := time.Now()
	_, _, woken, err := p.Wait(-1)
	if !woken || err != nil {
		t.Fatalf("blocked Wait: woken %v err %v", woken, err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("Wake took %v to end Wait", el)
	}
}

func TestPollerReadyAndHangup(t *testing.T) {
	p := newPoller(t)
	r1, w1 := pipe(t)
	r2, w2 := pipe(t)
	for _, fd := range []int{r1, r2} {
		if err := p.Add(fd); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Add(r1); err == nil {
		t.Error("adding an fd twice succeeded")
	}
	unix.Write(w2, []byte("x"))
	ready, hup, _, err := p.Wait(time.Second)
	if err != nil || !slices.Equal(ready, []int{r2}) || len(hup) != 0 {
		t.Fatalf("Wait = ready %v hup %v err %v; want ready [%d]", ready, hup, err, r2)
	}
	unix.Write(w1, []byte("x"))
	unix.Close(w2) // r2: still readable, and now hung up
	ready, hup, _, err = p.Wait(time.Second)
	slices.Sort(ready)
	want := []int{r1, r2}
	slices.Sort(want)
	if err != nil || !slices.Equal(ready, want) || !slices.Equal(hup, []int{r2}) {
		t.Fatalf("Wait = ready %v hup %v err %v; want ready %v hup [%d]", ready, hup, err, want, r2)
	}
	if err := p.Remove(r2); err != nil {
		t.Fatal(err)
	}
	ready, hup, _, _ = p.Wait(0)
	if !slices.Equal(ready, []int{r1}) || len(hup) != 0 {
		t.Errorf("after Remove: ready %v hup %v; want [%d] and none", ready, hup, r1)
	}
}

func TestPollerEINTR(t *testing.T) {
	p := newPoller(t)
	real := epollWait
	t.Cleanup(func() { epollWait = real })
	calls := 0
	epollWait = func(epfd int, events []unix.EpollEvent, msec int) (int, error) {
		calls++
		if calls <= 2 {
			time.Sleep(10 * time.Millisecond)
			return 0, unix.EINTR
		}
		return real(epfd, events, msec)
	}
	start := time.Now()
	_, _, woken, err := p.Wait(60 * time.Millisecond)
	el := time.Since(start)
	// Three calls at least: the two EINTRs made here, then the real wait,
	// which a real signal can interrupt too (the Go runtime preempts with
	// SIGURG, often on a loaded machine) and Wait then retries again.
	if err != nil || woken || calls < 3 {
		t.Fatalf("Wait: err %v woken %v after %d calls; want EINTR retried", err, woken, calls)
	}
	if el < 60*time.Millisecond || el > 2*time.Second {
		t.Errorf("Wait took %v, want the 60ms timeout kept across EINTR", el)
	}
}

func TestPollerClosed(t *testing.T) {
	p, err := NewPoller()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := p.Wake(); err == nil {
		t.Error("Wake after Close succeeded")
	}
	if _, _, _, err := p.Wait(0); err == nil {
		t.Error("Wait after Close succeeded")
	}
	if err := p.Add(0); err == nil {
		t.Error("Add after Close succeeded")
	}
}

func TestMsec(t *testing.T) {
	tests := []struct {
		name string
		d    time.Duration
		want int
	}{
		{"forever", -1, -1},
		{"poll", 0, 0},
		{"1ns rounds up", 1, 1},
		{"exact", 5 * time.Millisecond, 5},
		{"fraction rounds up", 5*time.Millisecond + 1, 6},
		{"huge clamps", 1 << 62, 1<<31 - 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := msec(tc.d); got != tc.want {
				t.Errorf("msec(%v) = %d, want %d", tc.d, got, tc.want)
			}
		})
	}
}
