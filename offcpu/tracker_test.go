package offcpu

import (
	"testing"
)

// step is one input of a tracker test: a stack (key != ""), a switch, or
// an exit.
type step struct {
	kind byte // 's' stack, 'o' out, 'p' preempted out, 'i' in, 'x' exit
	tid  uint32
	t    uint64
	key  string
}

func run(start, end uint64, steps []step) (ivs []Interval[string], tr *Tracker[string]) {
	tr = NewTracker[string](start)
	for _, s := range steps {
		switch s.kind {
		case 's':
			tr.Stack(1, s.tid, s.t, s.key)
		case 'o', 'p', 'i':
			if iv, ok := tr.Switch(1, s.tid, s.t, s.kind != 'i', s.kind == 'p'); ok {
				ivs = append(ivs, iv)
			}
		case 'x':
			if iv, ok := tr.Exit(s.tid, s.t); ok {
				ivs = append(ivs, iv)
			}
		case 'f':
			tr.Fork(1, s.tid, s.t)
		}
	}
	tr.End(end, func(iv Interval[string]) { ivs = append(ivs, iv) })
	return ivs, tr
}

func TestTracker(t *testing.T) {
	type want struct {
		tid        uint32
		start, end uint64
		key        string // "" : no stack
		preempted  bool
		cut        Cut
	}
	tests := []struct {
		name      string
		steps     []step
		want      []want
		unmatched uint64
	}{
		{"block and wake", []step{{'s', 7, 100, "read"}, {'o', 7, 101, ""}, {'i', 7, 500, ""}},
			[]want{{7, 101, 500, "read", false, Whole}}, 0},
		{"stack after the out at the same time", []step{{'o', 7, 100, ""}, {'s', 7, 100, "read"}, {'i', 7, 300, ""}},
			[]want{{7, 100, 300, "read", false, Whole}}, 0},
		{"preempted", []step{{'s', 7, 100, "spin"}, {'p', 7, 100, ""}, {'i', 7, 150, ""}},
			[]want{{7, 100, 150, "spin", true, Whole}}, 0},
		{"no stack (paranoid 2)", []step{{'o', 7, 100, ""}, {'i', 7, 200, ""}, {'o', 7, 250, ""}, {'i', 7, 400, ""}},
			[]want{{7, 100, 200, "", false, Whole}, {7, 250, 400, "", false, Whole}}, 0},
		{"first seen coming in", []step{{'i', 7, 300, ""}, {'s', 7, 350, "poll"}, {'o', 7, 351, ""}, {'i', 7, 360, ""}},
			[]want{{7, 10, 300, "", false, CutAtStart}, {7, 351, 360, "poll", false, Whole}}, 0},
		{"open at the end", []step{{'s', 7, 100, "futex"}, {'o', 7, 101, ""}},
			[]want{{7, 101, 1000, "futex", false, CutAtEnd}}, 0},
		{"ended by exit", []step{{'s', 7, 100, "exit"}, {'o', 7, 101, ""}, {'x', 7, 120, ""}},
			[]want{{7, 101, 120, "exit", false, CutAtExit}}, 0},
		{"a lost switch out: the stack waits, then is replaced", []step{{'s', 7, 100, "a"}, {'s', 7, 200, "b"}, {'o', 7, 201, ""}, {'i', 7, 300, ""}},
			[]want{{7, 201, 300, "b", false, Whole}}, 1},
		{"a lost switch in: the first out holds", []step{{'s', 7, 100, "a"}, {'o', 7, 101, ""}, {'o', 7, 200, ""}, {'i', 7, 300, ""}},
			[]want{{7, 101, 300, "a", false, Whole}}, 0},
		{"threads apart", []step{{'s', 7, 100, "a"}, {'o', 7, 101, ""}, {'s', 8, 102, "b"}, {'o', 8, 103, ""}, {'i', 7, 110, ""}, {'i', 8, 120, ""}},
			[]want{{7, 101, 110, "a", false, Whole}, {8, 103, 120, "b", false, Whole}}, 0},
		{"a stack is not kept past its interval", []step{{'s', 7, 100, "a"}, {'o', 7, 101, ""}, {'i', 7, 110, ""}, {'o', 7, 200, ""}, {'i', 7, 210, ""}},
			[]want{{7, 101, 110, "a", false, Whole}, {7, 200, 210, "", false, Whole}}, 0},
		{"a stack no switch out took", []step{{'s', 7, 100, "a"}}, nil, 1},
		{"switches after the exit (-a) start no interval", []step{{'s', 7, 100, "read"}, {'o', 7, 101, ""}, {'i', 7, 150, ""}, {'x', 7, 160, ""},
			{'s', 7, 161, "exit_mm"}, {'o', 7, 161, ""}, {'i', 7, 170, ""}, {'s', 7, 180, "do_task_dead"}, {'o', 7, 180, ""}},
			[]want{{7, 101, 150, "read", false, Whole}}, 0},
		{"a tid reused after the exit is a new thread", []step{{'x', 7, 160, ""}, {'o', 7, 161, ""}, {'f', 7, 200, ""}, {'i', 7, 230, ""}, {'s', 7, 300, "w"}, {'o', 7, 300, ""}},
			[]want{{7, 200, 230, "", true, Whole}, {7, 300, 1000, "w", false, CutAtEnd}}, 0},
		{"a new thread waits for its first turn", []step{{'f', 9, 100, ""}, {'i', 9, 130, ""}, {'s', 9, 200, "w"}, {'o', 9, 200, ""}, {'i', 9, 260, ""}},
			[]want{{9, 100, 130, "", true, Whole}, {9, 200, 260, "w", false, Whole}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ivs, tr := run(10, 1000, tt.steps)
			if len(ivs) != len(tt.want) {
				t.Fatalf("%d intervals %+v, want %d", len(ivs), ivs, len(tt.want))
			}
			for i, w := range tt.want {
				iv := ivs[i]
				got := want{iv.TID, iv.Start, iv.End, iv.Stack, iv.Preempted, iv.Cut}
				if iv.HasStack != (w.key != "") {
					t.Errorf("interval %d: HasStack %v with key %q", i, iv.HasStack, iv.Stack)
				}
				if got != w {
					t.Errorf("interval %d: %+v, want %+v", i, got, w)
				}
			}
			if tr.Unmatched != tt.unmatched {
				t.Errorf("unmatched %d, want %d", tr.Unmatched, tt.unmatched)
			}
		})
	}
}

// TestTrackerAccounts: a thread's time on and off the CPU covers its
// whole life: one that ran from the start, one forked later that exits,
// and one first seen coming in.
func TestTrackerAccounts(t *testing.T) {
	var steps []step
	now := uint64(1000)
	var on3 uint64
	steps = append(steps, step{'i', 5, 1003, ""}) // thread 5: off since the start
	for i := range 100 {
		run := uint64(10 + i%7)
		now += run
		on3 += run
		steps = append(steps, step{'s', 3, now, "k"}, step{'o', 3, now, ""})
		if i == 10 {
			steps = append(steps, step{'f', 4, now + 1, ""}, step{'i', 4, now + 5, ""})
		}
		if i == 50 {
			steps = append(steps, step{'o', 4, now + 2, ""}, step{'x', 4, now + 3, ""})
		}
		now += uint64(100 + i*13%50)
		steps = append(steps, step{'i', 3, now, ""})
	}
	end := now + 7
	ivs, tr := run(1000, end, steps)
	var off3 uint64
	for _, iv := range ivs {
		if iv.TID == 3 {
			off3 += iv.NS()
		}
	}
	th := tr.Threads()
	if len(th) != 3 {
		t.Fatalf("threads %+v, want 3", th)
	}
	for _, x := range th {
		if x.OnNS+x.OffNS != x.Last-x.First {
			t.Errorf("thread %d: on %d + off %d = %d, want its life %d (%d to %d)", x.TID, x.OnNS, x.OffNS, x.OnNS+x.OffNS, x.Last-x.First, x.First, x.Last)
		}
	}
	if th[0].TID != 3 || th[0].OnNS != on3+7 || th[0].OffNS != off3 || th[0].First != 1000 || th[0].Last != end {
		t.Errorf("thread 3: %+v, want on %d off %d from 1000 to %d", th[0], on3+7, off3, end)
	}
	if th[2].TID != 5 || th[2].First != 1000 || th[2].OffNS != 3 {
		t.Errorf("thread 5: %+v, want off 3 ns from the start", th[2])
	}
}

func TestReason(t *testing.T) {
	tests := []struct {
		frames []string
		want   string
	}{
		{[]string{"__schedule", "schedule", "futex_wait_queue", "futex_wait", "do_futex", "__x64_sys_futex", "do_syscall_64"}, "futex"},
		{[]string{"schedule", "do_nanosleep", "hrtimer_nanosleep", "common_nsleep", "__x64_sys_clock_nanosleep"}, "sleep"},
		{[]string{"schedule", "do_wait", "kernel_wait4", "__do_sys_wait4"}, "child"},
		{[]string{"schedule", "pipe_read", "vfs_read", "ksys_read", "__x64_sys_read"}, "pipe"},
		{[]string{"schedule", "io_schedule", "folio_wait_bit_common", "filemap_fault", "handle_mm_fault", "exc_page_fault", "asm_exc_page_fault"}, "page fault"},
		{[]string{"schedule", "io_schedule", "blk_mq_get_tag", "vfs_read", "ksys_read"}, "I/O"},
		{[]string{"schedule", "schedule_timeout", "unix_stream_read_generic", "sock_read_iter", "vfs_read"}, "socket"},
		{[]string{"schedule", "schedule_hrtimeout_range", "do_sys_poll", "__x64_sys_poll"}, "poll"},
		{[]string{"schedule", "irqentry_exit_to_user_mode", "asm_sysvec_apic_timer_interrupt"}, "preempted"},
		{[]string{"schedule", "something_new", "__x64_sys_membarrier"}, "membarrier"},
		{[]string{"[unknown]"}, ""},
		{nil, ""},
	}
	for _, tt := range tests {
		if got := Reason(tt.frames); got != tt.want {
			t.Errorf("Reason(%q) = %q, want %q", tt.frames, got, tt.want)
		}
	}
}
