package ring

import "github.com/hwprof/hwprof/perf"

// When the kernel wakes a reader (Linux 6.x, kernel/events/ring_buffer.c
// and core.c), which is what makes epoll report the ring's fd readable:
//
//   - The ring has a byte watermark W: attr.wakeup_watermark when
//     attr.watermark is set and non-zero (capped at data_size), otherwise
//     data_size/2 (ring_buffer_init). Each time a record is reserved and
//     the new data_head exceeds the last wake-up mark by more than W, the
//     mark moves forward by W and a wake-up is sent once the record is
//     complete. W counts bytes written, not bytes unread: a reader that is
//     behind is still woken every W bytes, and a reader that has drained
//     everything still waits for the next W bytes.
//   - Without attr.watermark, attr.wakeup_events = N > 0 also wakes every
//     N PERF_RECORD_SAMPLEs, right after the Nth (only samples count, not
//     MMAP, COMM, LOST, ...), in addition to the data_size/2 rule. The
//     field is a union: with attr.watermark set it is wakeup_watermark.
//   - With neither (wakeup_events = 0, no watermark) the reader is woken
//     each time another data_size/2 bytes have been written: twice per lap
//     of the ring.
//   - epoll reports the fd readable once per wake-up, not while data is
//     pending: perf_poll hands out the flag and clears it.
//   - A per-task event also wakes with POLLHUP when its task exits, and
//     poll reports POLLHUP at once on an event that has no ring mapped.
//
// The live tests observe each rule against data_head on the running
// kernel: with 32-byte samples a 4 KiB ring wakes at data_head 2080 by
// default, at 1056, 2080 and 3104 with a 1 KiB watermark, and at 320,
// 640, ... with wakeup_events = 10.
//
// perf record 6.1 sets none of these on its sampling events, so it is
// woken at every half ring (its side-band dummy event uses watermark = 1
// byte, a wake-up per record). Its default ring as root is 128 data pages
// (512 KiB) per CPU.
//
// Records below the watermark never cause a wake-up: a reader must also
// drain every ring on a timer and once more after disabling the events.

// DefaultDataPages is the ring size hwprof uses per CPU unless told
// otherwise: 128 pages, 512 KiB with 4 KiB pages, the same as perf record
// as root and within the default perf_event_mlock_kb (516 KiB per CPU,
// metadata page included) for unprivileged users.
const DefaultDataPages = 128

// DefaultWatermark is the wake-up watermark for a data area of dataBytes:
// a quarter of it.
//
// The reasoning, for a recorder that must not lose samples at 10 kHz per
// CPU with callchains: a sample with IP, TID, TIME, CPU, PERIOD and a
// callchain of up to 127 frames is at most ~1.1 KiB, ~2 KiB with a 32-deep
// LBR branch stack, so the worst case is ~10-20 MB/s per CPU. The kernel
// drops (and later reports in PERF_RECORD_LOST) whatever does not fit, so
// what matters is the room left after a wake-up, which the reader needs to
// get scheduled, through a GC pause and through the other CPUs' rings. At
// the kernel's default of half a ring, a 512 KiB ring has 256 KiB ≈
// 13-25 ms of room; at a quarter it has 384 KiB ≈ 19-38 ms. The cost is
// ~80-160 wake-ups per second per CPU at that worst rate, a few
// microseconds each, which is negligible; typical samples (~300 bytes,
// ~3 MB/s) give ~25 per second. Going much lower (wakeup_events = 1, or a
// watermark of a few records) would mean up to 10,000 wake-ups and reads
// per second per CPU for no gain in safety once the reader keeps up.
// A byte watermark is used instead of wakeup_events because record sizes
// vary tenfold with stack depth: bytes are what fill the ring.
func DefaultWatermark(dataBytes int) uint32 {
	if dataBytes <= 0 {
		return 0
	}
	return uint32(min(dataBytes/4, 1<<31))
}

// SetWakeup makes the kernel wake the ring's reader (epoll) each time
// another watermarkBytes bytes have been written: it sets FlagWatermark
// and stores watermarkBytes in a.WakeupEvents (the wakeup_watermark side
// of the union). The kernel caps a watermark above the data area at
// data_size, and treats 0 as data_size/2, its default.
func SetWakeup(a *perf.Attr, watermarkBytes uint32) {
	a.Flags |= perf.FlagWatermark
	a.WakeupEvents = watermarkBytes
}
