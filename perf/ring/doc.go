// Package ring reads perf_event ring buffers and waits on many of them.
//
// A Ring is one event's mmap'd buffer: the metadata page (struct
// perf_event_mmap_page in <linux/perf_event.h>) followed by 2^n data
// pages into which the kernel writes records, each a struct
// perf_event_header followed by its body. Ring.Read hands every complete
// record to a callback, in order and without copying unless the record
// wraps around the end of the data area, then advances data_tail so the
// kernel can reuse the space. The same code runs over plain memory (New),
// so wrap-around, short and corrupt rings are ordinary unit tests; Map
// only adds the mmap.
//
// A Poller waits with epoll on many ring fds at once, plus an eventfd that
// another goroutine can use to interrupt the wait (Wake). It reports which
// fds are readable and which hung up (a per-task event whose task exited).
// SetWakeup and DefaultWatermark choose when the kernel makes a ring
// readable; see wakeup.go for the kernel's exact rules.
//
// What it does not do: it starts no goroutines, takes no locks and
// decodes no record bodies (the record decoder does that from the bytes
// Read hands over). The caller drains: it calls Wait, then Read on every
// ready or hung-up ring, and also reads every ring on a timer and after
// disabling the events, because records below the wake-up watermark
// never make a ring readable. The caller provides the perf event fds
// (opened with perf_event_open, one per CPU for sampling) and keeps
// ownership of them: Ring.Close unmaps and Poller.Close closes only the
// epoll and eventfd descriptors.
//
// Mapping a ring needs the fd of a sampling event and locked memory:
// root, CAP_IPC_LOCK, or a ring within /proc/sys/kernel/perf_event_mlock_kb.
package ring
