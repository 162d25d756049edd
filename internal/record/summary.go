package record

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/tuning"
)

// WriteSummary prints what a recording did, for the user: the samples per
// event, the records and bytes written to o.Output, the loss (always: loss
// is never silent), hwprof's own CPU time, the events' attach and release
// (o.ShareRing, the exact source) and the adaptive period's history
// (o.Adaptive). o.Events are the events as opened (Stats.Events when set).
func WriteSummary(w io.Writer, o Options, st Stats) {
	fmt.Fprintf(w, "hwprof: recorded %d samples (%s) in %.2fs: %d records, %.1f MB in %s\n",
		st.Samples, EventCounts(o.Events, st.EventSamples), st.Duration.Seconds(), st.Records,
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
	perSample := ""
	if st.Samples > 0 {
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

// EventCounts lists the samples of each event; past a few events (the
// exact source opens one per probed function) the busiest ones and a
// count of the rest.
func EventCounts(events []perf.Event, samples []uint64) string {
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
func writePeriods(w io.Writer, o Options, st Stats) {
	for i, ev := range o.Events {
		if o.Tuned != nil && !o.Tuned[i] {
			continue
		}
		fmt.Fprintf(w, "hwprof: %s: adaptive period, started at %d\n", ev.Name, ev.Attr.SamplePeriod)
	}
	last := map[int]uint64{}
	for _, c := range st.Periods {
		fmt.Fprintf(w, "hwprof:   %7.3fs %s period %d: %s\n", c.Time.Seconds(), o.Events[c.Event].Name, c.Period, c.Reason)
		last[c.Event] = c.Period
	}
	for i, ev := range o.Events {
		p, ok := last[i]
		if !ok {
			continue
		}
		hz := ""
		if KindOf(&ev.Attr) == tuning.Time && p > 0 {
			hz = fmt.Sprintf(" (%.0f Hz)", 1e9/float64(p))
		}
		fmt.Fprintf(w, "hwprof: %s: period %d%s in force at the end for the task and threads started after the last change; "+
			"threads that existed at a change keep the period they inherited (the report lists each period seen)\n", ev.Name, p, hz)
	}
	if st.AdaptiveErr != nil {
		fmt.Fprintf(w, "hwprof: warning: the kernel refused a period change: %v\n", st.AdaptiveErr)
	}
}

// writeAttach reports how long opening the events took (thousands of
// uprobes for the exact source) and how they were released.
func writeAttach(w io.Writer, st Stats) {
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

// PrintErrors prints the errors err holds (one line each when joined) but
// told, already printed.
func PrintErrors(w io.Writer, err, told error) {
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		if e != told {
			fmt.Fprintf(w, "hwprof: %v\n", e)
		}
	}
}
