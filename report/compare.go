package report

import (
	"fmt"
	"io"
	"math"
	"path/filepath"

	"github.com/hwprof/hwprof/profile"
)

// Comparison writes the table of the reference's top edges with
// every source's share, then each source's agreement with the reference
// (profile.Alignment, whose first profile is the reference). scope, when
// not "", says what a restricted alignment (Alignment.Scope) compares on.
func Comparison(w io.Writer, names []string, a *profile.Alignment, top int, scope string) {
	rows := a.TopEdges(0, top)
	fmt.Fprintln(w, "each source's dynamic call graph (DCG), edges weighted by:")
	for i, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, dcgText(a.Kinds[i]))
	}
	if scope != "" {
		fmt.Fprintf(w, "\n%s\n", scope)
	}
	fmt.Fprintf(w, "\ntop %d call edges of %s, with each source's share of its own total:\n\n", len(rows), names[0])
	fmt.Fprintf(w, "%-52s %-28s", "caller -> callee", "call site")
	for _, n := range names {
		fmt.Fprintf(w, " %9s", n)
	}
	fmt.Fprintln(w)
	for _, r := range rows {
		fmt.Fprintf(w, "%-52s %-28s", clip(r.Edge.Caller+" -> "+r.Edge.Callee, 52), clip(siteLabel(r.Edge), 28))
		for i := range names {
			fmt.Fprintf(w, " %8.2f%%", 100*a.Shares[i][r.Edge])
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "\nagreement with %s (overlap: sum of min shares over common edges; hot: share of %s's edges >= %.1f x its hottest also hot in the source; correlation of calls per function over %d functions):\n\n",
		names[0], names[0], profile.HotThreshold, len(a.Counted))
	fmt.Fprintf(w, "%-10s %8s %16s %8s %8s %8s %6s\n", "source", "overlap", "overlap(no site)", "hot", "pearson", "spearman", "edges")
	for i := 1; i < len(names); i++ {
		s := a.Agreement(i)
		fmt.Fprintf(w, "%-10s %7.1f%% %15.1f%% %8.2f %8s %8s %6d\n", names[i], 100*s.Overlap, 100*s.OverlapNoSites,
			s.HotCoverage, fmtCorr(s.Pearson), fmtCorr(s.Spearman), s.Edges)
	}
}

// dcgText says what the edges of a DCG of kind k weigh.
func dcgText(k profile.DCGKind) string {
	switch k {
	case profile.CallCounts:
		return "the calls counted"
	case profile.TopEdges:
		return "at each sample, the edge into the running function (caller -> it), by period: the papers' timer DCG"
	case profile.AdjacentFrames:
		return "every adjacent caller -> callee pair of each sample's stack, by period (inclusive time, not calls; shown beside)"
	}
	return k.String()
}

func siteLabel(k profile.EdgeKey) string {
	if k.Object == "" {
		return fmt.Sprintf("%#x", k.Offset)
	}
	return fmt.Sprintf("%s+%#x", filepath.Base(k.Object), k.Offset)
}

func fmtCorr(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.3f", v)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}
