package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"

	"github.com/hwprof/hwprof/ccmap"
	"github.com/hwprof/hwprof/internal/profile"
)

// cmdReport reads a recording into a profile (internal/profile.Load) and
// prints it: text by default, or JSON (REPORT-JSON.md). A file that ends
// early or holds a corrupt record is reported up to there, with a warning
// and exit status 1.
func cmdReport(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("report", "[-i FILE] [--format text|json] [--top N] [--contexts N] [--srcline] [--symfs DIR] [--debug-dir DIR] [-j N] [--dedup-ratio RR]", stderr)
	input := fs.String("i", "hwprof.data", "read the recording from `FILE`")
	format := fs.String("format", "text", "output `format`: text or json")
	top := fs.Int("top", 20, "show the `N` hottest functions and edges (0: all)")
	contexts := fs.Int("contexts", 10, "show the `N` hottest calling contexts (0: none)")
	srcline := fs.Bool("srcline", false, "give every call site its source file and line from DWARF (slower with large debug packages)")
	symfs := fs.String("symfs", "", "look for every object under `DIR`, as perf's --symfs")
	debugDir := fs.String("debug-dir", "", "a `DIR` of binaries and debug files named by build-id")
	workers := fs.Int("j", 0, "fold with `N` workers (0: one per CPU)")
	dedup := fs.Float64("dedup-ratio", 0, "fold only this share `RR` in (0,1] of stacks already seen, weighted 1/RR (0: all)")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "hwprof report: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(stderr, "hwprof report: unknown --format %q (text or json)\n", *format)
		return exitUsage
	}
	if *top < 0 || *contexts < 0 || *workers < 0 {
		fmt.Fprintln(stderr, "hwprof report: --top, --contexts and -j must not be negative")
		return exitUsage
	}
	if *dedup < 0 || *dedup > 1 {
		fmt.Fprintf(stderr, "hwprof report: --dedup-ratio %v is not in (0, 1]\n", *dedup)
		return exitUsage
	}
	o := profile.LoadOptions{SymFS: *symfs, SiteLines: *srcline, Workers: *workers, DedupRatio: *dedup}
	if *debugDir != "" {
		o.DebugDirs = []string{*debugDir}
	}
	p, err := profile.Load(*input, o)
	if p == nil {
		return fail(stderr, err)
	}
	status := 0
	if err != nil {
		fmt.Fprintf(stderr, "hwprof: warning: %v (reporting the %d samples read before it)\n", err, p.Recording.Samples)
		status = exitError
	}
	for _, w := range p.Warnings {
		fmt.Fprintf(stderr, "hwprof: warning: %s\n", w)
	}
	w := bufio.NewWriterSize(stdout, 1<<16)
	ro := reportOptions{top: *top, contexts: *contexts}
	if *format == "json" {
		err = writeJSON(w, p, ro)
	} else {
		err = writeText(w, p, ro)
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		return fail(stderr, err)
	}
	return status
}

type reportOptions struct{ top, contexts int }

// The printing below is a minimal stand-in until internal/report lands.

type jsonReport struct {
	Version   int            `json:"hwprof_json"`
	Recording jsonRecording  `json:"recording"`
	Functions []jsonFunction `json:"functions"`
	Edges     []jsonEdge     `json:"edges"`
	Contexts  []jsonContext  `json:"contexts"`
}

type jsonRecording struct {
	File       string              `json:"file"`
	Command    []string            `json:"command"`
	Source     string              `json:"source"`
	Events     []jsonEvent         `json:"events"`
	Samples    uint64              `json:"samples"`
	Lost       uint64              `json:"lost"`
	Throttled  uint64              `json:"throttled"`
	DurationNS uint64              `json:"duration_ns"`
	Periods    []jsonPeriodChanges `json:"periods"`
}

type jsonEvent struct {
	Name   string `json:"name"`
	Period uint64 `json:"period"`
	Freq   uint64 `json:"freq"`
}

type jsonPeriodChanges struct {
	TimeNS uint64 `json:"time_ns"`
	Event  string `json:"event"`
	Period uint64 `json:"period"`
}

type jsonFunction struct {
	Name   string  `json:"name"`
	Object string  `json:"object"`
	Self   float64 `json:"self"`
	Total  float64 `json:"total"`
	Calls  *uint64 `json:"calls"`
}

type jsonSite struct {
	Object string `json:"object"`
	Offset string `json:"offset"`
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
}

type jsonEdge struct {
	Caller   string   `json:"caller"`
	Callee   string   `json:"callee"`
	Callsite jsonSite `json:"callsite"`
	Count    *uint64  `json:"count"`
	Weight   float64  `json:"weight"`
}

type jsonContext struct {
	Path   []string `json:"path"`
	Count  *uint64  `json:"count"`
	Weight float64  `json:"weight"`
}

func share(w, total uint64) float64 {
	if total == 0 {
		return 0
	}
	return float64(w) / float64(total)
}

func limit[T any](s []T, n int) []T {
	if n > 0 && len(s) > n {
		return s[:n]
	}
	return s
}

func buildJSON(p *profile.Profile, o reportOptions) jsonReport {
	r := jsonReport{Version: 1}
	rec := p.Recording
	r.Recording = jsonRecording{File: rec.File, Command: rec.Command, Source: rec.Source, Samples: rec.Samples,
		Lost: rec.Lost, Throttled: rec.Throttled, DurationNS: rec.DurationNS,
		Events: []jsonEvent{}, Periods: []jsonPeriodChanges{}}
	for _, e := range rec.Events {
		r.Recording.Events = append(r.Recording.Events, jsonEvent(e))
	}
	for _, c := range rec.Periods {
		r.Recording.Periods = append(r.Recording.Periods, jsonPeriodChanges(c))
	}
	name := func(f ccmap.FuncID) string {
		if int(f) < len(p.Funcs) {
			return p.Funcs[f].Name
		}
		return "[unknown]"
	}
	tot := p.Map.Totals()
	r.Functions = []jsonFunction{}
	for _, f := range p.Map.Functions(ccmap.Self) {
		jf := jsonFunction{Name: name(f.Func), Self: share(f.Self, tot.Samples), Total: share(f.Total, tot.Samples)}
		if int(f.Func) < len(p.Funcs) {
			jf.Object = p.Funcs[f.Func].Object
		}
		if p.HasCalls {
			c := f.Calls
			jf.Calls = &c
		}
		if jf.Self == 0 && jf.Total == 0 && (jf.Calls == nil || *jf.Calls == 0) {
			continue
		}
		r.Functions = append(r.Functions, jf)
	}
	sort.SliceStable(r.Functions, func(i, j int) bool {
		a, b := r.Functions[i], r.Functions[j]
		if a.Self != b.Self {
			return a.Self > b.Self
		}
		if a.Total != b.Total {
			return a.Total > b.Total
		}
		return a.Name < b.Name
	})
	r.Functions = limit(r.Functions, o.top)
	by := ccmap.Total
	if p.HasCalls {
		by = ccmap.Calls
	}
	dcg := p.Map.DCG(by)
	r.Edges = []jsonEdge{}
	for _, e := range limit(dcg.Edges, o.top) {
		s := p.Sites[e.Site]
		je := jsonEdge{Caller: name(e.Site.Caller), Callee: name(e.Callee), Weight: share(e.Weight, dcg.Total),
			Callsite: jsonSite{Object: s.Object, Offset: fmt.Sprintf("%#x", s.Offset), File: s.File, Line: s.Line}}
		if p.HasCalls {
			c := e.Weight
			je.Count = &c
		}
		r.Edges = append(r.Edges, je)
	}
	r.Contexts = []jsonContext{}
	cby := ccmap.Self
	ctot := tot.Samples
	if p.HasCalls {
		cby, ctot = ccmap.Calls, tot.ContextCalls
	}
	if o.contexts > 0 {
		for _, c := range p.Map.HotContexts(cby, o.contexts) {
			jc := jsonContext{Weight: share(c.Get(cby), ctot)}
			for _, f := range p.Map.Path(c.ID) {
				jc.Path = append(jc.Path, name(f.Func))
			}
			if p.HasCalls {
				n := c.Calls
				jc.Count = &n
			}
			r.Contexts = append(r.Contexts, jc)
		}
	}
	return r
}

func writeJSON(w io.Writer, p *profile.Profile, o reportOptions) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(buildJSON(p, o))
}

func writeText(w io.Writer, p *profile.Profile, o reportOptions) error {
	r := buildJSON(p, o)
	rec := r.Recording
	fmt.Fprintf(w, "# %s: source %s, %d samples, %d lost, %d throttled, %.3fs\n", rec.File, rec.Source, rec.Samples, rec.Lost, rec.Throttled, float64(rec.DurationNS)/1e9)
	for _, c := range rec.Periods {
		fmt.Fprintf(w, "# period of %s from %.3fs: %d\n", c.Event, float64(c.TimeNS)/1e9, c.Period)
	}
	fmt.Fprintf(w, "\n%8s %8s  %s\n", "self", "total", "function")
	for _, f := range r.Functions {
		fmt.Fprintf(w, "%7.2f%% %7.2f%%  %s\n", 100*f.Self, 100*f.Total, f.Name)
	}
	fmt.Fprintf(w, "\n%8s  %s\n", "weight", "edge")
	for _, e := range r.Edges {
		fmt.Fprintf(w, "%7.2f%%  %s -> %s", 100*e.Weight, e.Caller, e.Callee)
		if e.Count != nil {
			fmt.Fprintf(w, "  %d calls", *e.Count)
		}
		fmt.Fprintln(w)
	}
	if len(r.Contexts) > 0 {
		fmt.Fprintf(w, "\n%8s  %s\n", "weight", "context")
		for _, c := range r.Contexts {
			fmt.Fprintf(w, "%7.2f%%  %v\n", 100*c.Weight, c.Path)
		}
	}
	return nil
}
