package ring

import (
	"encoding/binary"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hwprof/hwprof/internal/testenv"
	"github.com/hwprof/hwprof/perf"
	"golang.org/x/sys/unix"
)

// openLive opens a software event, skipping the test only when this
// machine cannot open one at all (checked with a raw perf_event_open).
func openLive(t *testing.T, a *perf.Attr, pid, cpu int) int {
	t.Helper()
	testenv.PerfEvents(t)
	fd, err := perf.Open("cpu-clock", a, pid, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}

func mapLive(t *testing.T, fd, pages int) *Ring {
	t.Helper()
	r, err := Map(fd, pages)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestLiveSampling samples a busy thread with cpu-clock every 100us and
// reads the samples through epoll wake-ups while the thread runs.
func TestLiveSampling(t *testing.T) {
	tidc := make(chan int)
	start, done := make(chan struct{}), make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		tidc <- unix.Gettid()
		<-start
		burn(200 * time.Millisecond)
		close(done)
	}()
	tid := <-tidc

	a := perf.Attr{
		Type:         perf.TypeSoftware,
		Config:       perf.SWCPUClock,
		SamplePeriod: 100000, // ns: 100us
		SampleType:   perf.SampleIP | perf.SampleTID | perf.SampleTime,
		Flags:        perf.FlagDisabled | perf.FlagExcludeKernel | perf.FlagExcludeHV,
	}
	const pages = 16
	SetWakeup(&a, 4096) // ~128 samples of 32 bytes: epoll must wake many times
	fd := openLive(t, &a, tid, -1)
	r := mapLive(t, fd, pages)
	if r.fd != fd || len(r.data) != pages*os.Getpagesize() {
		t.Fatalf("fd %d, data area %d bytes", r.fd, len(r.data))
	}
	// perf_event_init_userpage fills these; size is offsetof(__reserved).
	if sz, off := binary.LittleEndian.Uint32(r.meta[offSize:]), binary.LittleEndian.Uint64(r.meta[offDataOffset:]); sz != 96 || off != uint64(os.Getpagesize()) {
		t.Errorf("perf_event_mmap_page size %d data_offset %d, want 96 and the page size", sz, off)
	}
	p := newPoller(t)
	if err := p.Add(fd); err != nil {
		t.Fatal(err)
	}

	var samples, lost, wakeups int
	var lastTime uint64
	read := func() {
		_, _, err := r.Read(func(rec []byte) error {
			h := parseHeader(rec)
			switch perf.RecordType(h.typ) {
			case perf.RecordSample:
				if len(rec) != 32 {
					t.Fatalf("sample of %d bytes, want 32 (header, ip, pid/tid, time)", len(rec))
				}
				pid := binary.LittleEndian.Uint32(rec[16:])
				stid := binary.LittleEndian.Uint32(rec[20:])
				tm := binary.LittleEndian.Uint64(rec[24:])
				if int(pid) != os.Getpid() || int(stid) != tid {
					t.Fatalf("sample pid/tid %d/%d, want %d/%d", pid, stid, os.Getpid(), tid)
				}
				if tm < lastTime {
					t.Errorf("sample time went back: %d after %d", tm, lastTime)
				}
				lastTime = tm
				samples++
			case perf.RecordLost:
				lost++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := perf.Enable(fd); err != nil {
		t.Fatal(err)
	}
	close(start)
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		ready, hup, _, err := p.Wait(50 * time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		if len(hup) != 0 {
			t.Fatalf("hang-up from a live thread's event: %v", hup)
		}
		if slices.Contains(ready, fd) {
			wakeups++
		}
		read()
	}
	if err := perf.Disable(fd); err != nil {
		t.Fatal(err)
	}
	read()
	t.Logf("%d samples in 200ms, %d epoll wake-ups, %d lost records", samples, wakeups, lost)
	if samples < 200 {
		t.Errorf("%d samples, want about 2000 (200ms at 100us)", samples)
	}
	if wakeups < 2 {
		t.Errorf("%d epoll wake-ups, want several with a 4 KiB watermark", wakeups)
	}
	if lost != 0 {
		t.Errorf("%d PERF_RECORD_LOST records", lost)
	}
	if r.Pending() != 0 {
		t.Errorf("%d bytes still pending", r.Pending())
	}
}

// burn works until the calling thread (locked to its goroutine) has used
// d of CPU time: the samples of a cpu-clock event on it do not thin out
// on a loaded machine.
func burn(d time.Duration) {
	x := uint64(1)
	var ts unix.Timespec
	start := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	end := time.Duration(ts.Nano()) + d
	for start == nil && unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) == nil && time.Duration(ts.Nano()) < end {
		for range 10000 {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	sink.Store(x)
}

var sink atomic.Uint64 // keeps the burn loop from being optimized away

// TestLiveHangup checks that the kernel reports POLLHUP on a per-task
// event's fd when the task exits, before it is reaped, and not before.
func TestLiveHangup(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skipf("no sleep command to follow: %v", err)
	}
	cpus, err := perf.OnlineCPUs()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(sleep, "0.4")
	begin := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })

	a := perf.Attr{
		Type:         perf.TypeSoftware,
		Config:       perf.SWCPUClock,
		SamplePeriod: 1000000,
		SampleType:   perf.SampleIP | perf.SampleTID,
	}
	p := newPoller(t)
	var fds []int
	for _, cpu := range cpus {
		fd := openLive(t, &a, cmd.Process.Pid, cpu)
		mapLive(t, fd, 1) // without a ring, poll reports POLLHUP at once
		if err := p.Add(fd); err != nil {
			t.Fatal(err)
		}
		fds = append(fds, fd)
	}
	if _, hup, _, err := p.Wait(0); err != nil || len(hup) != 0 {
		t.Fatalf("before the task exits: hup %v err %v", hup, err)
	}
	var hups []int
	var first time.Duration
	for deadline := time.Now().Add(10 * time.Second); len(hups) < len(fds) && time.Now().Before(deadline); {
		_, hup, _, err := p.Wait(100 * time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		for _, fd := range hup {
			if first == 0 {
				first = time.Since(begin)
			}
			hups = append(hups, fd)
			if err := p.Remove(fd); err != nil {
				t.Fatal(err)
			}
		}
	}
	slices.Sort(hups)
	if !slices.Equal(hups, fds) {
		t.Fatalf("hang-ups on %v, want every per-CPU fd %v", hups, fds)
	}
	if first < 350*time.Millisecond {
		t.Errorf("first hang-up %v after start, before the task could exit (sleep 0.4)", first)
	}
	t.Logf("POLLHUP on %d per-CPU fds %v after the child started", len(fds), first)
	if err := cmd.Wait(); err != nil {
		t.Errorf("child: %v", err)
	}
}

// TestLiveHangupWithoutRing documents a kernel rule the package relies on
// in its documentation: perf_poll reports POLLHUP for an event that has
// no ring mapped, even while its task runs.
func TestLiveHangupWithoutRing(t *testing.T) {
	a := perf.Attr{
		Type:         perf.TypeSoftware,
		Config:       perf.SWCPUClock,
		SamplePeriod: 1000000,
		SampleType:   perf.SampleIP,
		Flags:        perf.FlagDisabled | perf.FlagExcludeKernel,
	}
	fd := openLive(t, &a, 0, -1)
	p := newPoller(t)
	if err := p.Add(fd); err != nil {
		t.Fatal(err)
	}
	_, hup, _, err := p.Wait(0)
	if err != nil || !slices.Equal(hup, []int{fd}) {
		t.Fatalf("unmapped event: hup %v err %v, want [%d]", hup, err, fd)
	}
	r := mapLive(t, fd, 1)
	if _, hup, _, err = p.Wait(0); err != nil || len(hup) != 0 {
		t.Fatalf("mapped event: hup %v err %v, want none", hup, err)
	}
	r.Close()
}

func TestLiveMapErrors(t *testing.T) {
	a := perf.Attr{Type: perf.TypeSoftware, Config: perf.SWCPUClock, SamplePeriod: 1000000,
		SampleType: perf.SampleIP, Flags: perf.FlagDisabled | perf.FlagExcludeKernel}
	fd := openLive(t, &a, 0, -1)
	for _, pages := range []int{0, 3, -2, 1 << 40} {
		if _, err := Map(fd, pages); err == nil {
			t.Errorf("Map(%d pages) succeeded", pages)
		}
	}
	if _, err := Map(-1, 1); err == nil {
		t.Error("Map(-1) succeeded")
	}
	r, err := Map(fd, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Read(func([]byte) error { return nil }); err == nil || r.Pending() != 0 {
		t.Errorf("Read after Close: err %v pending %d; want an error and 0", err, r.Pending())
	}
}

// TestLiveWakeupRules checks the kernel's wake-up rules documented in
// wakeup.go by watching, without reading, when epoll reports the ring
// readable: only after data_head passes each multiple of the watermark
// (data_size/2 by default), or of wakeup_events samples, and once per
// wake-up (a level-triggered report repeated while data is pending would
// show up as a second report at the same data_head, which fails the
// "too early" check).
func TestLiveWakeupRules(t *testing.T) {
	const sample = 32 // header, ip, pid/tid, time
	tests := []struct {
		name   string
		pages  int
		setup  func(a *perf.Attr)
		step   uint64 // bytes between wake-ups
		atStep bool   // a wake-up comes with data_head exactly at a step
		stopAt uint64 // stop once this much is published
		minObs int    // wake-ups that must be seen even if some merge
	}{
		{"default: every half ring", 1, func(a *perf.Attr) {}, 2048, false, 3500, 1},
		// Eleven marks to pass, so that wake-ups merged on a busy
		// machine (the waiting thread not running) still leave two.
		{"watermark 1 KiB", 4, func(a *perf.Attr) { SetWakeup(a, 1024) }, 1024, false, 12000, 2},
		// Every 10th sample wakes, at once; the half-ring rule alone
		// would wake only past 8 KiB.
		{"wakeup_events 10", 4, func(a *perf.Attr) { a.WakeupEvents = 10 }, 10 * sample, true, 100 * sample, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := perf.Attr{
				Type:         perf.TypeSoftware,
				Config:       perf.SWCPUClock,
				SamplePeriod: 100000,
				SampleType:   perf.SampleIP | perf.SampleTID | perf.SampleTime,
				Flags:        perf.FlagDisabled | perf.FlagExcludeKernel | perf.FlagExcludeHV,
			}
			tc.setup(&a)
			obs, head := observeWakeups(t, &a, tc.pages, tc.stopAt)
			t.Logf("data_head at each wake-up: %v, at the end %d", obs, head)
			// The byte rule wakes once data_head exceeds the mark by more
			// than the watermark; the sample rule on the Nth sample.
			crossed := func(h uint64) int {
				if tc.atStep {
					return int(h / tc.step)
				}
				return int((h - 1) / tc.step)
			}
			for k, h := range obs {
				if crossed(h) < k+1 {
					t.Errorf("wake-up %d with data_head %d: too early for a step of %d", k+1, h, tc.step)
				}
			}
			// Wake-ups that come while the waiting thread is not running
			// merge into one report, so only a range can be checked.
			if len(obs) < tc.minObs || len(obs) > crossed(head) {
				t.Errorf("%d wake-ups up to data_head %d, want %d..%d", len(obs), head, tc.minObs, crossed(head))
			}
		})
	}
}

// observeWakeups samples a busy thread and waits on its ring, without
// consuming it, until stopAt bytes are published, then disables the
// event and polls once more. It returns data_head as seen right after
// each time epoll reported the ring readable, and data_head at the end.
func observeWakeups(t *testing.T, a *perf.Attr, pages int, stopAt uint64) ([]uint64, uint64) {
	tidc, stop, exited := make(chan int), make(chan struct{}), make(chan struct{})
	defer func() { close(stop); <-exited }()
	go func() {
		defer close(exited)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		tidc <- unix.Gettid()
		for {
			select {
			case <-stop:
				return
			default:
				burn(time.Millisecond)
			}
		}
	}()
	fd := openLive(t, a, <-tidc, -1)
	r := mapLive(t, fd, pages)
	p := newPoller(t)
	if err := p.Add(fd); err != nil {
		t.Fatal(err)
	}
	if err := perf.Enable(fd); err != nil {
		t.Fatal(err)
	}
	var obs []uint64
	wait := func(d time.Duration) {
		ready, _, _, err := p.Wait(d)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(ready, fd) {
			obs = append(obs, r.Pending()) // tail is 0: Pending is data_head
		}
	}
	for deadline := time.Now().Add(5 * time.Second); r.Pending() < stopAt; {
		if time.Now().After(deadline) {
			t.Fatalf("only %d bytes after 5s", r.Pending())
		}
		wait(10 * time.Millisecond)
	}
	if err := perf.Disable(fd); err != nil {
		t.Fatal(err)
	}
	wait(0)
	return obs, r.Pending()
}
