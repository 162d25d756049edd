package summary

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hwprof/hwprof/internal/record"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/tuning"
	"golang.org/x/sys/unix"
)

// Write prints what a recording did, for the user: the samples per
// event, the records and bytes written to o.Output, the loss (always: loss
// is never silent), hwprof's own CPU time, the events' attach and release
// (o.ShareRing, the exact source) and the adaptive period's history
// (o.Adaptive). o.Events are the events as opened (Stats.Events when set).
func Write(w io.Writer, o record.Options, st record.Stats) {
	fmt.Fprintf(w, "hwprof: recorded %d samples (%s) in %.2fs: %d records, %.1f MB in %s\n",
		st.Samples, eventCounts(o.Events, st.EventSamples), st.Duration.Seconds(), st.Records,
		float64(st.Bytes)/1e6, o.Output)
	loss := fmt.Sprintf("hwprof: lost %d samples (ring full: %d, kernel: %d), throttled %d times, unthrottled %d",
		st.Lost+st.LostSamples, st.Lost, st.LostSamples, st.Throttle, st.Unthrottle)
	if st.Lost > 0 {
		loss += "; use a bigger ring (-m) or a longer period (-c/-F)"
	}
	if st.RingErrors > 0 {
		loss += fmt.Sprintf("; %d corrupted ring reads skipped", st.RingErrors)
	}
	if st.Undecoded > 0 {
		loss += fmt.Sprintf("; %d records could not be decoded (kept in the file)", st.Undecoded)
	}
	fmt.Fprintln(w, loss)
	// Per sample only where the samples, not the fixed cost of starting
	// and ending (tens of ms), make most of it.
	perSample := ""
	if st.Samples >= minSamplesPerCost {
		perSample = fmt.Sprintf(", %.1f ms per 100k samples", st.CPU.Seconds()*1e3*1e5/float64(st.Samples))
	}
	fmt.Fprintf(w, "hwprof: own CPU time %.1f ms%s\n", st.CPU.Seconds()*1e3, perSample)
	if o.ShareRing {
		writeAttach(w, st)
	}
	if o.Adaptive != nil {
		writePeriods(w, o, st)
	}
}

// eventCounts lists the samples of each event; past a few events (the
// exact source opens one per probed function) the busiest ones and a
// count of the rest.
func eventCounts(events []perf.Event, samples []uint64) string {
	const show = 6
	idx := make([]int, len(events))
	for i := range idx {
		idx[i] = i
	}
	if len(events) > show {
		sort.SliceStable(idx, func(a, b int) bool { return samples[idx[a]] > samples[idx[b]] })
	}
	var per []string
	for k, i := range idx {
		if k == show && len(events) > show {
			per = append(per, fmt.Sprintf("and %d more events", len(events)-show))
			break
		}
		per = append(per, fmt.Sprintf("%s %d", events[i].Name, samples[i]))
	}
	return strings.Join(per, ", ")
}

// writePeriods shows the adaptive period's history: where each tuned event
// started and every change, with the time and the reason.
func writePeriods(w io.Writer, o record.Options, st record.Stats) {
	for i, ev := range o.Events {
		if o.Tuned != nil && !o.Tuned[i] {
			continue
		}
		fmt.Fprintf(w, "hwprof: %s: adaptive period, started at %d\n", ev.Name, ev.Attr.SamplePeriod)
	}
	for _, c := range st.Periods {
		fmt.Fprintf(w, "hwprof:   %7.3fs %s period %d: %s\n", c.Time.Seconds(), o.Events[c.Event].Name, c.Period, c.Reason)
	}
	for i, ev := range o.Events {
		if o.Tuned != nil && !o.Tuned[i] {
			continue
		}
		if line := periodsInForce(ev, i, st.ThreadPeriods); line != "" {
			fmt.Fprintf(w, "hwprof: %s: period of each thread's last sample: %s\n", ev.Name, line)
		}
		if i < len(st.Trades) && st.Trades[i] != "" {
			fmt.Fprintf(w, "hwprof: %s: %s\n", ev.Name, st.Trades[i])
		}
	}
	if st.CPU > 0 {
		fmt.Fprintf(w, "hwprof: own CPU on the records %.1f ms (weighed with the kernel's work per sample), the rest %.1f ms fixed (not weighed: no period reduces it)\n",
			st.SampleCPU.Seconds()*1e3, max(st.CPU-st.SampleCPU, 0).Seconds()*1e3)
	}
	if st.AdaptiveErr != nil {
		fmt.Fprintf(w, "hwprof: warning: the kernel refused a period change: %v\n", st.AdaptiveErr)
	}
}

// writeAttach reports how long opening the events took (thousands of
// uprobes for the exact source) and how they were released.
func writeAttach(w io.Writer, st record.Stats) {
	release := fmt.Sprintf("closed in %.3fs", st.Detach.Seconds())
	if st.ReleasedInBackground > 0 {
		release = ("handed to a background process that closes them and removes the probes " +
			"(about 80 ms per tracepoint: the kernel waits for grace periods at each)")
	}
	fmt.Fprintf(w, "hwprof: attach: %d events opened in %.3fs (%d shared rings); %s\n", st.Opened, st.Attach.Seconds(), st.Rings, release)
	if st.CleanupErr != nil {
		fmt.Fprintf(w, "hwprof: warning: %v\n", st.CleanupErr)
	}
}

// periodsInForce says which period each thread of event ei sampled at
// last: "1ms (1000 Hz), every thread (3)" or, where threads differ,
// "2ms (500 Hz) on 1 thread (tid 412), 250µs (4000 Hz) on 4 threads
// (tids 413-416)", most samples first. A thread's last sample has the
// period of the event that took it: a change reaches the events hwprof
// opened, not the copies inherited by threads that existed then, and the
// kernel may let the threads take turns with both (see
// record.Stats.ThreadPeriods).
func periodsInForce(ev perf.Event, ei int, tps []record.ThreadPeriod) string {
	type group struct {
		period, samples uint64
		tids            []uint32
	}
	var gs []*group
	for _, tp := range tps {
		if tp.Event != ei {
			continue
		}
		i := slices.IndexFunc(gs, func(g *group) bool { return g.period == tp.Period })
		if i < 0 {
			gs = append(gs, &group{period: tp.Period})
			i = len(gs) - 1
		}
		gs[i].samples += tp.Samples
		gs[i].tids = append(gs[i].tids, tp.TID)
	}
	if len(gs) == 0 {
		return ""
	}
	slices.SortStableFunc(gs, func(a, b *group) int { return cmp.Compare(b.samples, a.samples) })
	format := func(p uint64) string {
		if record.KindOf(&ev.Attr) == tuning.Time && p > 0 {
			return fmt.Sprintf("%v (%.0f Hz)", time.Duration(p), 1e9/float64(p))
		}
		return strconv.FormatUint(p, 10)
	}
	if len(gs) == 1 {
		return fmt.Sprintf("%s, every thread (%d)", format(gs[0].period), len(gs[0].tids))
	}
	var parts []string
	for _, g := range gs {
		parts = append(parts, fmt.Sprintf("%s on %s (%s, %d samples)", format(g.period), plural(len(g.tids), "thread"), tidList(g.tids), g.samples))
	}
	return strings.Join(parts, ", ") + "; copies of the events inherited before a change keep the old period, and threads may sample through both in turns"
}

// plural is "1 thread", "4 threads".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// tidList shows up to four thread ids: "tid 412", "tids 413, 414, 415, 416, ...".
func tidList(tids []uint32) string {
	var s []string
	for i, t := range tids {
		if i == 4 {
			s = append(s, "...")
			break
		}
		s = append(s, strconv.FormatUint(uint64(t), 10))
	}
	if len(tids) == 1 {
		return "tid " + s[0]
	}
	return "tids " + strings.Join(s, ", ")
}

// minSamplesPerCost is the fewest samples for which the summary gives
// hwprof's own CPU time per 100k samples: below it the fixed cost of a
// recording (setting up and closing the events, reading the program's
// objects: 50-60 ms) would read as a cost per sample thousands of times
// the real one.
const minSamplesPerCost = 10000

// StopNote says what ended a recording that ended as asked
// (record.Stop.OnPurpose) and what became of its targets: "recording
// stopped after --duration 2s; the program was sent SIGTERM",
// "interrupted (SIGINT): recording stopped; the processes go on". It is ""
// for any other end.
func StopNote(o record.Options, st record.Stats) string {
	var why string
	switch st.Stop {
	case record.StopDuration:
		why = "recording stopped after --duration " + o.Duration.String()
	case record.StopLimit:
		why = "recording stopped: " + st.Limit
	case record.StopSignal:
		why = "recording stopped by a signal"
		if sig, ok := st.Signal.(syscall.Signal); ok {
			switch sig {
			case syscall.SIGINT:
				why = "interrupted (SIGINT): recording stopped"
			case syscall.SIGTERM:
				why = "terminated (SIGTERM): recording stopped"
			default:
				why = unix.SignalName(sig) + ": recording stopped"
			}
		}
	default:
		return ""
	}
	switch {
	case len(o.Argv) == 0:
		return why + "; the processes go on"
	case st.ExitCode == 128+int(syscall.SIGKILL):
		return why + "; the program was sent SIGTERM, then killed (a second interrupt)"
	}
	return why + "; the program was sent SIGTERM"
}
