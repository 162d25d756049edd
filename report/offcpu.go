package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/hwprof/hwprof/ccmap"
	"github.com/hwprof/hwprof/offcpu"
	"github.com/hwprof/hwprof/profile"
)

// reasonRow is the time off the CPU spent for one reason.
type reasonRow struct {
	reason    string
	ns        uint64
	intervals uint64
}

// Reasons a stack off the CPU gives when the kernel's frames do not say.
const (
	reasonPreempted = "preempted"
	reasonNoStack   = "no stack"
	reasonUnknown   = "other"
)

// offCPUReasons sums p's time off the CPU by why the threads left it:
// the reason the kernel frames of each stack give (offcpu.Reason),
// "preempted" for a thread switched out while runnable, "no stack"
// without a stack; most time first. Nil without time off the CPU.
func offCPUReasons(p *profile.Profile) []reasonRow {
	if p.OffCPU == nil {
		return nil
	}
	cct := p.OffCPU.CCT(ccmap.Self)
	by := map[string]*reasonRow{}
	var names []string
	for i := range cct.Nodes {
		n := &cct.Nodes[i]
		if n.Self == 0 || n.Pruned {
			continue
		}
		names = names[:0]
		for j := i; j >= 0; j = cct.Nodes[j].Parent {
			if f := cct.Nodes[j].Func; int(f) < len(p.Funcs) && !cct.Nodes[j].Pruned {
				names = append(names, p.Funcs[f].Name)
			}
		}
		var r string
		switch {
		case len(names) > 0 && names[0] == profile.Preempted:
			r = reasonPreempted
		case slices.Contains(names, profile.NoOffCPUStack):
			r = reasonNoStack
		default:
			r = cmp.Or(offcpu.Reason(names), reasonUnknown)
		}
		row := by[r]
		if row == nil {
			row = &reasonRow{reason: r}
			by[r] = row
		}
		row.ns += n.Self
		row.intervals += n.Stacks
	}
	rows := make([]reasonRow, 0, len(by))
	for _, r := range by {
		rows = append(rows, *r)
	}
	slices.SortFunc(rows, func(a, b reasonRow) int { return cmp.Or(cmp.Compare(b.ns, a.ns), cmp.Compare(a.reason, b.reason)) })
	return rows
}

// offCPUText writes what the recording says of the time off the CPU:
// the totals and the time by reason (the text report, a recording made
// with --off-cpu).
func offCPUText(b *strings.Builder, p *profile.Profile) {
	st := &p.Recording.OffCPU
	if !st.Recorded {
		return
	}
	fmt.Fprintf(b, "off-cpu:   %s in %d intervals", fmtNS(st.NS), st.Intervals)
	if st.NS > 0 {
		fmt.Fprintf(b, " (%.1f%% preempted while runnable)", 100*float64(st.PreemptedNS)/float64(st.NS))
	}
	var life, on, off uint64
	for _, t := range st.Threads {
		life, on, off = life+t.LifeNS, on+t.OnNS, off+t.OffNS
	}
	if life > 0 {
		fmt.Fprintf(b, "; threads' lives %s: %.1f%% on the CPU, %.1f%% off", fmtNS(life), 100*float64(on)/float64(life), 100*float64(off)/float64(life))
	}
	b.WriteString("\n")
	if st.NoStack == st.Intervals && !slices.ContainsFunc(p.Recording.Events, func(e profile.Event) bool { return e.OffCPU }) {
		b.WriteString("           without stacks: the recording has switch records and no off-CPU event (record --off-cpu, where the kernel may be sampled, has both)\n")
	}
	if p.Measure == profile.Sampled {
		b.WriteString("           report --weight off-cpu (or wall) shows where\n")
	}
	rows := offCPUReasons(p)
	if len(rows) == 0 || st.NS == 0 {
		return
	}
	b.WriteString("off-cpu by reason (from the kernel's frames):")
	for _, r := range rows {
		fmt.Fprintf(b, " %s %.1f%%", r.reason, 100*float64(r.ns)/float64(st.NS))
	}
	b.WriteString("\n")
}

// fmtNS writes nanoseconds as seconds or milliseconds.
func fmtNS(ns uint64) string {
	if ns >= 1e9 {
		return fmt.Sprintf("%.3fs", float64(ns)/1e9)
	}
	return fmt.Sprintf("%.3fms", float64(ns)/1e6)
}

// measureName says what shares of a profile measured by m are of.
func measureName(m profile.Measure) string {
	switch m {
	case profile.OffCPUTime:
		return "nanoseconds off the CPU"
	case profile.WallTime:
		return "nanoseconds on and off the CPU (wall time)"
	}
	return "sampled weight"
}
