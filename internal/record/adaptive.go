package record

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/tuning"
	"github.com/hwprof/hwprof/unwind/clobber"
	"golang.org/x/sys/unix"
)

// PeriodChange is one decision of the adaptive controller that changed an
// event's sampling period.
type PeriodChange struct {
	Time   time.Duration // since the recording started
	Event  int           // index in Options.Events
	Period uint64
	Reason string
}

// tuner applies a controller's decisions to every fd of one event.
type tuner struct {
	ctl     *tuning.Controller
	repeats *tuning.RepeatCounter
	fds     []int
	// this interval's counts
	samples, lost, throttled uint64
	lbrPairs                 uint64
	lbrOverlap               float64 // sum over the pairs
	// each thread's last LBR window
	windows map[uint32][]tuning.Branch
	scratch []tuning.Branch
	// each thread's period in its latest sample and its samples
	threads map[uint32]threadPeriod
	// the sum of this interval's samples' periods: for a clock event,
	// the program CPU time they stand for, whatever period each thread
	// samples at
	periodSum uint64

	// For a clock event, the PERIOD correction: the ids of the events
	// opened on fds (their samples' STREAM_ID; inherited copies have
	// other ids), the offsets of STREAM_ID and PERIOD in a sample, and
	// per ring the positions from which each new period holds.
	fix                  bool
	ids                  map[uint64]bool
	streamOff, periodOff int
	marks                [][]periodMark
}

// threadPeriod is one thread's period in its latest sample of an event.
type threadPeriod struct {
	period, samples uint64
}

// ThreadPeriod is the period of one thread's last sample of a tuned event.
type ThreadPeriod struct {
	Event   int // index in Options.Events
	TID     uint32
	Period  uint64
	Samples uint64 // the thread's samples of the event
}

// periodMark says that the records of a ring from Pos on were written
// after the period became Period.
type periodMark struct {
	Pos    uint64
	Period uint64
}

// adaptive is the live side of the tuning package: it counts what the
// controller needs from the records as they are drained and, about ten
// times a second, asks each event's controller for a period and applies
// it with PERF_EVENT_IOC_PERIOD.
//
// Two kernel facts limit what a change does (found on Linux 6.18):
//
//   - PERF_EVENT_IOC_PERIOD changes the event a fd names, not the copies
//     it already inherited into existing threads (_perf_ioctl calls
//     _perf_event_period on the event alone); threads created later
//     inherit the new period. But that does not make a thread that existed
//     at the change keep the old period: when a CPU switches from one
//     thread of the process to another, the kernel swaps their event
//     contexts instead of scheduling the events out and in (the contexts
//     are clones: perf_event_context_sched_out), so a thread runs with the
//     changed events at some times and with an inherited copy at others.
//     Each event keeps its own period; a thread's samples may mix them
//     (TestAdaptivePeriodExistingThreads, after a change from 250 µs to
//     2 ms: on a loaded machine both threads of a two-thread program were
//     sampled by both kinds; with a CPU each, each thread kept its own).
//     So the period in force is a property of the event that took a
//     sample (its STREAM_ID), not of the thread.
//   - For the software clock events (cpu-clock, task-clock: hrtimer based)
//     the sampling interval changes, but the PERIOD field of the samples
//     keeps the period the event was created with (hw.last_period is set
//     only when the hrtimer is initialised). Hardware count events set it
//     at every overflow and report the new period. So hwprof corrects the
//     field of clock events as it drains them: right after the ioctls it
//     notes each ring's write position (data_head), and a later sample of
//     an event it changed (told from inherited copies by its STREAM_ID,
//     which is the id of the event itself, not of its parent, whichever
//     thread it sampled) gets the new period written into its PERIOD
//     field before it goes to the file. Samples of inherited copies keep
//     both their old period and their old field, which agree. Each
//     sample's PERIOD field is thus the period of the event that took it.
type adaptive struct {
	tuners []tuner
	tuned  int // how many tuners have a controller: hwprof's CPU is split among them
	sample perf.Sample
	frame  tuning.Frame // countSample's activation key
	// the code analyses of the activation key's Kept, by process
	clobberers map[uint32]*clobber.Analyzer
	last       time.Time
	lastCPU    time.Duration
	start      time.Time
	cpus       int
	changes    []PeriodChange
	applyErr   error
	// PERIOD correction of clock events (fixPeriod)
	fixing    bool // a clock event's period changed: samples need fixPeriod
	buf       []byte
	corrected uint64
	// hwprof's CPU time on the records (drain, by the thread's CPU
	// clock): this interval's and all of it
	drainCPU, drainTotal time.Duration
	drained              uint64 // samples of every event this interval
}

// noteDrain adds the CPU time of one drain that found records.
func (ad *adaptive) noteDrain(d time.Duration) {
	if d > 0 { // a thread CPU clock that failed reads 0
		ad.drainCPU += d
		ad.drainTotal += d
	}
}

const adaptiveInterval = 100 * time.Millisecond

func (r *recorder) startAdaptive() error {
	if r.o.Adaptive == nil {
		return nil
	}
	ad := &adaptive{tuners: make([]tuner, len(r.o.Events)), cpus: len(r.cpus)}
	for i := range r.o.Events {
		if r.o.Tuned != nil && !r.o.Tuned[i] {
			continue
		}
		a := &r.o.Events[i].Attr
		c, err := tuning.New(*r.o.Adaptive, KindOf(a), a.SamplePeriod)
		if err != nil {
			return fmt.Errorf("record: adaptive period: %w", err)
		}
		ad.tuners[i] = tuner{ctl: c, repeats: tuning.NewRepeatCounter(256)}
		ad.tuned++
	}
	for _, e := range r.events {
		ad.tuners[e.event].fds = append(ad.tuners[e.event].fds, e.fd)
	}
	for i := range ad.tuners {
		t := &ad.tuners[i]
		a := &r.o.Events[i].Attr
		if t.ctl == nil || KindOf(a) != tuning.Time || a.SampleType&(perf.SampleStreamID|perf.SamplePeriod) != perf.SampleStreamID|perf.SamplePeriod {
			continue
		}
		t.ids = map[uint64]bool{}
		for _, fd := range t.fds {
			id, err := perf.EventID(fd)
			if err != nil {
				return fmt.Errorf("record: adaptive period: %w", err)
			}
			t.ids[id] = true
		}
		t.fix = true
		t.streamOff = sampleOffset(a.SampleType, perf.SampleStreamID)
		t.periodOff = sampleOffset(a.SampleType, perf.SamplePeriod)
	}
	ad.start, ad.last = time.Now(), time.Now()
	ad.lastCPU = selfCPU()
	r.adaptive = ad
	return nil
}

// countSample feeds the repetition counter. The top frame of a sample is
// its activation key (tuning.ActivationKey) when the sample carries the
// user registers and stack copy the sources record (source.AddLeafCopy);
// otherwise the return address of its innermost user frame (the call
// site of the running function), or the IP when it has no callchain.
func (ad *adaptive) countSample(f *perf.SampleFormat, ei int, rec []byte) {
	ad.drained++ // tuned or not: the drains' CPU is shared by all samples
	t := &ad.tuners[ei]
	if t.ctl == nil {
		return
	}
	t.samples++
	if f.DecodeSample(rec, &ad.sample) != nil {
		return
	}
	if ad.sample.Has(perf.SamplePeriod) {
		t.notePeriod(ad.sample.TID, ad.sample.Period)
		t.periodSum += ad.sample.Period
	}
	if len(ad.sample.Branches) > 0 {
		t.noteWindow(ad.sample.TID, ad.sample.Branches)
	}
	if key, ok := ad.activationKey(&ad.sample); ok {
		t.repeats.Add(ad.sample.TID, key)
		return
	}
	top := ad.sample.IP
	if ad.sample.Has(perf.SampleCallchain) {
		user := perf.SplitCallchain(ad.sample.Callchain).User
		if len(user) >= 2 {
			top = user[1]
		} else if len(user) == 1 {
			top = user[0]
		}
	}
	t.repeats.Add(ad.sample.TID, top)
}

// savedRegs are the callee-saved registers of tuning.Frame, in its order.
var savedRegs = [6]int{perf.RegBX, perf.RegBP, perf.RegR8 + 4, perf.RegR8 + 5, perf.RegR8 + 6, perf.RegR8 + 7}

// scratchRegs are the caller-saved registers of tuning.Frame, in its order.
var scratchRegs = [9]int{perf.RegAX, perf.RegCX, perf.RegDX, perf.RegSI, perf.RegDI, perf.RegR8, perf.RegR8 + 1, perf.RegR8 + 2, perf.RegR8 + 3}

// maxClobberProcs bounds the processes whose code the activation key
// reads (clobberers); past it the analyses start again.
const maxClobberProcs = 256

// forgetCode drops what was read of process pid's code, after an exec
// or a new executable mapping.
func (ad *adaptive) forgetCode(pid uint32) {
	delete(ad.clobberers, pid)
}

// kept is tuning.Frame.Kept for a sample of process pid at user
// instruction ip: the caller-saved registers that no code still to run
// in the activation can write, read from the process's code
// (unwind/clobber; each instruction's analysis is kept). 0 when the code
// cannot be read (the process has exited, hwprof may not read its
// memory) or read through.
func (ad *adaptive) kept(pid uint32, ip uint64) uint16 {
	a := ad.clobberers[pid]
	if a == nil {
		if len(ad.clobberers) >= maxClobberProcs {
			clear(ad.clobberers)
		}
		if ad.clobberers == nil {
			ad.clobberers = map[uint32]*clobber.Analyzer{}
		}
		a = clobber.New(clobber.ProcessCode(int(pid)))
		ad.clobberers[pid] = a
	}
	written, ok := a.Clobbers(ip)
	if !ok {
		return 0
	}
	var kept uint16
	for i, r := range scratchRegs {
		if written&(1<<r) == 0 {
			kept |= 1 << i
		}
	}
	return kept
}

// activationKey is tuning.ActivationKey of s, if s has a user callchain,
// its stack pointer and a stack copy.
func (ad *adaptive) activationKey(s *perf.Sample) (uint64, bool) {
	if !s.Has(perf.SampleCallchain | perf.SampleRegsUser | perf.SampleStackUser) {
		return 0, false
	}
	sp, ok := s.RegsUser.Get(perf.RegSP)
	stack := s.StackUser.Valid()
	user := perf.SplitCallchain(s.Callchain).User
	if !ok || len(stack) < 8 || len(user) == 0 {
		return 0, false
	}
	fr := &ad.frame
	fr.SP, fr.TopWord, fr.Returns = sp, le.Uint64(stack), user[1:]
	for i, r := range savedRegs {
		fr.Saved[i], _ = s.RegsUser.Get(r)
	}
	fr.Kept = 0
	// (x86-64 code only: a 32-bit process's code decodes otherwise)
	if ip, ok := s.RegsUser.Get(perf.RegIP); ok && s.Has(perf.SampleTID) && s.RegsUser.ABI == perf.RegsABI64 &&
		s.RegsUser.Mask&ScratchRegsUser == ScratchRegsUser {
		for i, r := range scratchRegs {
			fr.Scratch[i], _ = s.RegsUser.Get(r)
		}
		fr.Kept = ad.kept(s.PID, ip)
	}
	return tuning.ActivationKey(fr), true
}

// notePeriod keeps the period of thread tid's latest sample (its PERIOD
// field, corrected by fixPeriod for the clock events hwprof changed).
// Threads past maxWindows are not followed.
func (t *tuner) notePeriod(tid uint32, period uint64) {
	if t.threads == nil {
		t.threads = map[uint32]threadPeriod{}
	}
	tp, ok := t.threads[tid]
	if !ok && len(t.threads) >= maxWindows {
		return
	}
	t.threads[tid] = threadPeriod{period: period, samples: tp.samples + 1}
}

// threadPeriods lists every tuned event's threads with the period of
// their last sample, by event and thread id.
func (ad *adaptive) threadPeriods() []ThreadPeriod {
	var out []ThreadPeriod
	for ei := range ad.tuners {
		for tid, tp := range ad.tuners[ei].threads {
			out = append(out, ThreadPeriod{Event: ei, TID: tid, Period: tp.period, Samples: tp.samples})
		}
	}
	slices.SortFunc(out, func(a, b ThreadPeriod) int {
		return cmp.Or(cmp.Compare(a.Event, b.Event), cmp.Compare(a.TID, b.TID))
	})
	return out
}

// trades says per event how its rate compares with perf's default
// (tuning.Controller.Trade), "" for an event not tuned.
func (ad *adaptive) trades() []string {
	out := make([]string, len(ad.tuners))
	for i, t := range ad.tuners {
		if t.ctl != nil {
			out[i] = t.ctl.Trade()
		}
	}
	return out
}

// maxWindows bounds the threads whose last LBR window a tuner keeps.
const maxWindows = 4096

// noteWindow compares a thread's LBR window with its previous one (the
// controller's overlap rule for lbr) and keeps it for the next.
func (t *tuner) noteWindow(tid uint32, entries []perf.BranchEntry) {
	if t.windows == nil {
		t.windows = map[uint32][]tuning.Branch{}
	}
	prev, ok := t.windows[tid]
	cur := t.scratch[:0]
	for _, e := range entries {
		cur = append(cur, tuning.Branch{From: e.From, To: e.To})
	}
	if ok {
		t.lbrPairs++
		t.lbrOverlap += tuning.WindowOverlap(prev, cur)
	} else if len(t.windows) >= maxWindows {
		clear(t.windows)
	}
	t.windows[tid] = append(prev[:0], cur...)
	t.scratch = cur
}

// observe runs the controllers once an interval has passed.
func (r *recorder) observe(now time.Time) {
	ad := r.adaptive
	if ad == nil || now.Sub(ad.last) < adaptiveInterval {
		return
	}
	cpu := selfCPU()
	self := (cpu - ad.lastCPU) / time.Duration(max(ad.tuned, 1))
	dur := now.Sub(ad.last)
	ad.last, ad.lastCPU = now, cpu
	// The drains' CPU goes to the events by their share of the samples.
	drain, all := ad.drainCPU, ad.drained
	ad.drainCPU, ad.drained = 0, 0
	for i := range ad.tuners {
		t := &ad.tuners[i]
		if t.ctl == nil {
			continue
		}
		_, repeats := t.repeats.Take()
		// A clock event's samples stand for their periods of CPU time:
		// the program's CPU time even where copies inherited before a
		// change still sample at the old period.
		var programCPU time.Duration
		if t.ctl.Kind() == tuning.Time {
			programCPU = time.Duration(t.periodSum)
		}
		d := t.ctl.Observe(tuning.Observation{
			Duration: dur, CPUs: ad.cpus, Samples: t.samples, Lost: t.lost,
			Throttled: t.throttled, SelfCPU: self, SampleCPU: share(drain, t.samples, all), ProgramCPU: programCPU, Repeats: repeats,
			LBRPairs: t.lbrPairs, LBROverlap: meanOverlap(t.lbrOverlap, t.lbrPairs),
		})
		t.samples, t.lost, t.throttled, t.periodSum = 0, 0, 0, 0
		t.lbrPairs, t.lbrOverlap = 0, 0
		if !d.Changed {
			continue
		}
		for _, fd := range t.fds {
			if err := perf.SetPeriod(fd, d.Period); err != nil && ad.applyErr == nil {
				ad.applyErr = err
			}
		}
		ad.changes = append(ad.changes, PeriodChange{Time: now.Sub(ad.start), Event: i, Period: d.Period, Reason: d.Reason})
		if t.fix {
			for len(t.marks) < len(r.rings) {
				t.marks = append(t.marks, nil)
			}
			for ri, rg := range r.rings {
				tail := rg.Head() - rg.Pending()
				t.marks[ri] = append(pruneMarks(t.marks[ri], tail), periodMark{Pos: rg.Head(), Period: d.Period})
			}
			ad.fixing = true
		}
	}
}

// pruneMarks drops the marks of a ring that no record still to be read
// needs: every record from tail on sits at or after the last mark at or
// before tail, so the marks before that one are spent. A recording that
// changes the period often keeps a few marks per ring, not one per change.
func pruneMarks(marks []periodMark, tail uint64) []periodMark {
	j := 0
	for i, m := range marks {
		if m.Pos <= tail {
			j = i
		}
	}
	if j == 0 {
		return marks
	}
	return append(marks[:0], marks[j:]...)
}

// sampleOffset is the offset in a sample record (header included) of
// field, one of the fixed u64 fields that precede PERIOD
// (IDENTIFIER, IP, TID, TIME, ADDR, ID, STREAM_ID, CPU, PERIOD).
func sampleOffset(st, field perf.SampleType) int {
	off := 8 // struct perf_event_header
	for _, f := range []perf.SampleType{perf.SampleIdentifier, perf.SampleIP, perf.SampleTID,
		perf.SampleTime, perf.SampleAddr, perf.SampleID, perf.SampleStreamID, perf.SampleCPU, perf.SamplePeriod} {
		if f == field {
			return off
		}
		if st&f != 0 {
			off += 8
		}
	}
	return -1
}

// fixPeriod returns rec with the PERIOD field a clock event's sample
// should have: the period in force where the sample sits in ring ri (at
// pos), if it is a sample of an event whose period hwprof changed.
// Otherwise, and for every other record, rec itself.
func (ad *adaptive) fixPeriod(f *perf.SampleFormat, ri int, pos uint64, rec []byte) []byte {
	if !ad.fixing || perf.RecordType(le.Uint32(rec)) != perf.RecordSample {
		return rec
	}
	ei, err := f.EventOf(rec)
	if err != nil || ei < 0 || ei >= len(ad.tuners) {
		return rec
	}
	t := &ad.tuners[ei]
	if !t.fix || ri >= len(t.marks) || len(rec) < t.periodOff+8 {
		return rec
	}
	marks := t.marks[ri]
	k := len(marks) - 1
	for k >= 0 && marks[k].Pos > pos {
		k--
	}
	if k < 0 || !t.ids[le.Uint64(rec[t.streamOff:])] {
		return rec
	}
	ad.buf = append(ad.buf[:0], rec...)
	le.PutUint64(ad.buf[t.periodOff:], marks[k].Period)
	ad.corrected++
	return ad.buf
}

// share is d × n/all.
func share(d time.Duration, n, all uint64) time.Duration {
	if all == 0 {
		return 0
	}
	return time.Duration(float64(d) * float64(n) / float64(all))
}

func meanOverlap(sum float64, n uint64) float64 {
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// threadCPU is the calling thread's CPU time (the caller is locked to its
// thread), 0 if the clock cannot be read.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

func selfCPU() time.Duration {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
