package report

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/hwprof/hwprof/profile"
)

// Text writes p as the short text report: what was recorded and what was
// lost, the period changes, then the top functions, edges and contexts.
func Text(w io.Writer, p *profile.Profile, o Options) error {
	s, err := summarize(p, o, true)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	s.header(&b)
	if err := s.tables(&b); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	// tablewriter pads the last column; drop trailing blanks.
	lines := strings.Split(b.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	if _, err := io.WriteString(w, strings.Join(lines, "\n")); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

func (s *summary) header(b *bytes.Buffer) {
	r := &s.p.Recording
	fmt.Fprintf(b, "recording: %s\n", orDash(r.File))
	if len(r.Command) > 0 {
		fmt.Fprintf(b, "command:   %s\n", strings.Join(r.Command, " "))
	}
	var evs []string
	for _, e := range r.Events {
		switch {
		case e.Freq != 0:
			evs = append(evs, fmt.Sprintf("%s (%d Hz)", e.Name, e.Freq))
		case e.Period != 0:
			evs = append(evs, fmt.Sprintf("%s (period %d)", e.Name, e.Period))
		default:
			evs = append(evs, e.Name)
		}
	}
	fmt.Fprintf(b, "source:    %s; events: %s\n", r.Source, orDash(strings.Join(evs, ", ")))
	fmt.Fprintf(b, "samples:   %d in %v; lost %d, throttled %d\n", r.Samples, time.Duration(r.DurationNS).Round(time.Millisecond), r.Lost, r.Throttled)
	if r.Lost > 0 {
		fmt.Fprintf(b, "lost %d samples (%.2f%%): weights are of what was kept\n", r.Lost, 100*share(r.Lost, r.Samples+r.Lost))
	}
	if r.Throttled > 0 {
		fmt.Fprintf(b, "the kernel throttled sampling %d times\n", r.Throttled)
	}
	if len(r.Processes) > 1 {
		s.processes(b)
	}
	if r.OffCPU.Recorded {
		var o strings.Builder
		offCPUText(&o, s.p)
		b.WriteString(o.String())
	}
	if l := r.Leaf; l.Inserted+l.Unknown > 0 {
		fmt.Fprintf(b, "leaf frames: %d of %d stacks had skipped the caller of a function without its frame (restored from the stack copy); %d could not be checked\n",
			l.Inserted, l.Checked, l.Unknown)
	}
	if changed(r.Periods) {
		b.WriteString("period changes:\n")
		for _, c := range r.Periods {
			fmt.Fprintf(b, "  %-12v %s period %d\n", time.Duration(c.TimeNS).Round(time.Microsecond), c.Event, c.Period)
		}
		fmt.Fprintf(b, "period of each thread's last sample: %s\n", r.PeriodsInForce())
	}
}

// maxProcesses bounds the processes the text header lists.
const maxProcesses = 10

// processes lists the recording's processes with their shares of the
// sampled weight, busiest first.
func (s *summary) processes(b *bytes.Buffer) {
	ps := s.p.Recording.Processes
	fmt.Fprintf(b, "processes: %d (shares of the sampled weight; report --pid/--comm shows one)\n", len(ps))
	for i, p := range ps {
		if i == maxProcesses {
			var rest uint64
			for _, q := range ps[i:] {
				rest += q.Samples
			}
			fmt.Fprintf(b, "  ... %d more processes, %d samples\n", len(ps)-i, rest)
			break
		}
		fmt.Fprintf(b, "  %6.2f%% %8d samples  pid %-7d %s\n", 100*p.Share, p.Samples, p.PID, orDash(p.Comm))
	}
}

// changed reports whether some event's period changed during the
// recording (Periods holds each event's first period too).
func changed(ps []profile.PeriodChange) bool {
	seen := make(map[string]bool)
	for _, c := range ps {
		if seen[c.Event] {
			return true
		}
		seen[c.Event] = true
	}
	return false
}

func (s *summary) tables(b *bytes.Buffer) error {
	calls := s.p.HasCalls
	if err := s.funcTable(b); err != nil {
		return err
	}

	var t *tablewriter.Table
	if calls {
		b.WriteString("\ncall edges (by calls; of calls: the edge's share of the calls along all edges)\n")
		t = newTable(b, "RRLL")
		t.Header("of calls", "count", "caller → callee", "call site")
	} else {
		b.WriteString("\ncall edges (from adjacent frames of sampled stacks; no call counts)\n" +
			"  of edges: the edge's share of all adjacent caller → callee frames; of stacks: the share of the sampled weight\n" +
			"  whose stack holds the edge (as total for functions: an edge on every stack has 100%)\n")
		t = newTable(b, "RRRLL")
		t.Header("of edges", "of stacks", "count", "caller → callee", "call site")
	}
	sites := edgeSites(s.edges)
	for i, e := range s.edges {
		row := []string{pct(e.share)}
		if calls {
			row = append(row, fmt.Sprint(e.weight))
		} else {
			row = append(row, pct(e.stackShare), "-")
		}
		if err := t.Append(append(row, e.caller.Name+" → "+e.callee.Name, sites[i])); err != nil {
			return err
		}
	}
	if err := render(b, t, len(s.edges)); err != nil {
		return err
	}

	if calls {
		b.WriteString("\ncontexts (by calls in the context; a path reached through several call sites is one row: --format json lists them apart)\n")
	} else {
		b.WriteString("\ncontexts (whole stacks, by samples; a path reached through several call sites is one row: --format json lists them apart)\n")
	}
	t = newTable(b, "RRL")
	t.Header("share", "count", "path (outermost first)")
	for _, c := range s.contexts {
		n := "-"
		if calls {
			n = fmt.Sprint(c.weight)
		}
		if err := t.Append(pct(c.share), n, pathText(c.names)); err != nil {
			return err
		}
	}
	return render(b, t, len(s.contexts))
}

// funcTable writes the functions: with sampled weight, their self and
// total shares of it (and their calls when counted); a profile of calls
// alone (exact) by the calls into each and their share of all calls.
func (s *summary) funcTable(b *bytes.Buffer) error {
	if s.callsOnly() {
		fmt.Fprintf(b, "\nfunctions (calls into each, and their share of all %d calls counted)\n", s.p.Map.Totals().Calls)
		t := newTable(b, "RRLL")
		t.Header("calls", "share", "function", "object")
		for _, f := range s.funcs {
			if err := t.Append(fmt.Sprint(f.calls), pct(f.callShare), f.Name, base(f.Object)); err != nil {
				return err
			}
		}
		return render(b, t, len(s.funcs))
	}
	fmt.Fprintf(b, "\nfunctions (self and total: shares of %d %s)\n", s.p.Map.Totals().Samples, measureName(s.p.Measure))
	t := newTable(b, "RRRLL")
	t.Header("self", "total", "calls", "function", "object")
	for _, f := range s.funcs {
		c := "-"
		if s.p.HasCalls {
			c = fmt.Sprint(f.calls)
		}
		if err := t.Append(pct(f.selfShare), pct(f.totShare), c, f.Name, base(f.Object)); err != nil {
			return err
		}
	}
	return render(b, t, len(s.funcs))
}

// newTable returns a borderless table whose columns are aligned by
// align: R right, L left.
func newTable(w io.Writer, align string) *tablewriter.Table {
	al := make([]tw.Align, len(align))
	for i, c := range align {
		al[i] = tw.AlignLeft
		if c == 'R' {
			al[i] = tw.AlignRight
		}
	}
	return tablewriter.NewTable(w,
		tablewriter.WithRendition(tw.Rendition{
			Borders: tw.BorderNone,
			Symbols: tw.NewSymbols(tw.StyleNone),
			Settings: tw.Settings{
				Separators: tw.Separators{BetweenColumns: tw.Off, BetweenRows: tw.Off, ShowHeader: tw.Off},
				Lines:      tw.Lines{ShowHeaderLine: tw.Off},
			},
		}),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignmentConfig(tw.CellAlignment{PerColumn: al}),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: al}),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
	)
}

func render(b *bytes.Buffer, t *tablewriter.Table, rows int) error {
	if rows == 0 {
		b.WriteString("  (none)\n")
		return nil
	}
	return t.Render()
}

func pct(f float64) string { return fmt.Sprintf("%.2f%%", 100*f) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func base(path string) string {
	if path == "" {
		return "-"
	}
	return filepath.Base(path)
}

// edgeSites returns the call-site text of each edge row (siteText). Rows
// that would read alike, one caller calling one callee from two call
// sites on one source line, also show each call's offset (offsetText),
// which tells them apart.
func edgeSites(rows []edgeRow) []string {
	type key struct{ caller, callee, site string }
	texts := make([]string, len(rows))
	seen := map[key]int{}
	for i, e := range rows {
		texts[i] = siteText(e)
		seen[key{e.caller.Name, e.callee.Name, texts[i]}]++
	}
	for i, e := range rows {
		if seen[key{e.caller.Name, e.callee.Name, texts[i]}] > 1 {
			if o := offsetText(e); o != texts[i] {
				texts[i] += " (" + o + ")"
			}
		}
	}
	return texts
}

// siteText shows a call site as file:line when debug information has
// it, else as offsetText does.
func siteText(e edgeRow) string {
	if e.info != nil && e.info.File != "" {
		return fmt.Sprintf("%s:%d", filepath.Base(e.info.File), e.info.Line)
	}
	return offsetText(e)
}

// offsetText shows a call site as the caller's symbol+0xoffset (perf's
// sym+off), else as object+0xoffset, else as the address the map holds.
func offsetText(e edgeRow) string {
	switch {
	case e.info == nil:
		return fmt.Sprintf("%#x", e.site.Addr)
	case symbolized(e.caller) && e.info.Offset >= e.caller.Start:
		return fmt.Sprintf("%s+%#x", e.caller.Name, e.info.Offset-e.caller.Start)
	default:
		return fmt.Sprintf("%s+%#x", base(e.info.Object), e.info.Offset)
	}
}

// symbolized says whether f is named by a symbol whose start f.Start is
// known: not "[object+0x…]", "[unknown]" or another bracketed name.
func symbolized(f profile.Func) bool {
	return f.Name != "" && !strings.HasPrefix(f.Name, "[") && f.Start != 0
}

// pathText joins a context's names; a path deeper than 6 frames shows
// its two outermost and three innermost frames around the count left out.
func pathText(names []string) string {
	if len(names) > 6 {
		n := len(names)
		mid := fmt.Sprintf("…%d…", n-5)
		names = append(append(append([]string(nil), names[:2]...), mid), names[n-3:]...)
	}
	return strings.Join(names, " → ")
}
