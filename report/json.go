package report

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/hwprof/hwprof/ccmap"
	"github.com/hwprof/hwprof/profile"
)

// JSONVersion is the value of "hwprof_json": the version of the format
// of docs/REPORT-JSON.md this package writes.
const JSONVersion = 1

// The JSON report, field by field in docs/REPORT-JSON.md's order.
type jsonReport struct {
	Version   int           `json:"hwprof_json"`
	Recording jsonRecording `json:"recording"`
	Functions []jsonFunc    `json:"functions"`
	Edges     []jsonEdge    `json:"edges"`
	Contexts  []jsonContext `json:"contexts"`
}

type jsonRecording struct {
	File       string       `json:"file"`
	Command    []string     `json:"command"` // null when the recording has no command line
	Source     string       `json:"source"`
	Events     []jsonEvent  `json:"events"`
	Samples    uint64       `json:"samples"`
	Lost       uint64       `json:"lost"`
	Throttled  uint64       `json:"throttled"`
	DurationNS uint64       `json:"duration_ns"`
	Periods    []jsonPeriod `json:"periods"`
	Processes  []jsonProc   `json:"processes"`
	// the repair of frameless first frames; absent when no sample had a
	// stack copy to check it with
	Leaf *jsonLeaf `json:"leaf,omitempty"`
	// every warning printed while reading, once each; incomplete: records
	// were lost, skipped or cut off (the exit status is then 1)
	Warnings   []string `json:"warnings"`
	Incomplete bool     `json:"incomplete"`
	// the time off the CPU (record --off-cpu); null without switch records
	OffCPUNS *uint64     `json:"offcpu_ns"`
	OffCPU   *jsonOffCPU `json:"offcpu"`
	// what the profile's weights measure: "samples", "off-cpu" or "wall"
	// (report --weight)
	Measure string `json:"measure"`
}

type jsonOffCPU struct {
	Intervals   uint64 `json:"intervals"`
	PreemptedNS uint64 `json:"preempted_ns"`
	NoStack     uint64 `json:"no_stack"`
	NoStackNS   uint64 `json:"no_stack_ns"`
	StackLost   uint64 `json:"stack_lost"`
	OpenAtStart uint64 `json:"open_at_start"`
	OpenAtEnd   uint64 `json:"open_at_end"`
	EndedByExit uint64 `json:"ended_by_exit"`
	Unmatched   uint64 `json:"unmatched"`
	// records lost from the ring of the switch records
	SwitchesLost uint64 `json:"switches_lost"`
	// the time off the CPU by why threads left it, most first
	Reasons []jsonReason `json:"reasons"`
	Threads []jsonThread `json:"threads"`
}

type jsonReason struct {
	Reason    string `json:"reason"`
	NS        uint64 `json:"ns"`
	Intervals uint64 `json:"intervals"`
}

type jsonThread struct {
	PID    uint32  `json:"pid"`
	TID    uint32  `json:"tid"`
	Comm   *string `json:"comm"`
	LifeNS uint64  `json:"life_ns"`
	OnNS   uint64  `json:"on_ns"`
	OffNS  uint64  `json:"off_ns"`
}

type jsonProc struct {
	PID     uint32  `json:"pid"`
	Comm    *string `json:"comm"` // null when the recording names none
	Samples uint64  `json:"samples"`
	Share   float64 `json:"share"`
}

type jsonLeaf struct {
	Checked  uint64 `json:"checked"`
	Inserted uint64 `json:"inserted"`
	Unknown  uint64 `json:"unknown"`
}

type jsonEvent struct {
	Name   string `json:"name"`
	Period uint64 `json:"period"`
	Freq   uint64 `json:"freq"`
	// the off-CPU event, and the event that carries the switch records
	// (profile.Event.OffCPU and Switches)
	OffCPU   bool `json:"offcpu"`
	Switches bool `json:"switches"`
}

type jsonPeriod struct {
	TimeNS uint64 `json:"time_ns"`
	Event  string `json:"event"`
	Period uint64 `json:"period"`
}

type jsonFunc struct {
	Name   string  `json:"name"`
	Object *string `json:"object"` // null when unknown
	Self   float64 `json:"self"`
	Total  float64 `json:"total"`
	Calls  *uint64 `json:"calls"` // null without call counts (timer)
	// the calls' share of all calls counted; null without call counts
	CallsShare *float64 `json:"calls_share"`
	// the time off the CPU in the function itself and in it and its
	// callees; null without time off the CPU (record --off-cpu)
	OffCPUSelfNS  *uint64 `json:"offcpu_self_ns"`
	OffCPUTotalNS *uint64 `json:"offcpu_total_ns"`
}

type jsonEdge struct {
	Caller   string    `json:"caller"`
	Callee   string    `json:"callee"`
	Callsite *jsonSite `json:"callsite"` // null when the profile does not describe it
	Count    *uint64   `json:"count"`    // null without call counts (timer)
	Weight   float64   `json:"weight"`
	// the share of the sampled weight whose stack holds the edge; null
	// without sampled stacks
	SamplesShare *float64 `json:"samples_share"`
}

type jsonSite struct {
	Object *string `json:"object"` // null when unknown
	Offset string  `json:"offset"` // "0x…" in the object
	File   *string `json:"file"`   // null without debug information
	Line   *int    `json:"line"`   // null with file
}

type jsonContext struct {
	Path   []string `json:"path"`
	Count  *uint64  `json:"count"` // null without call counts (timer)
	Weight float64  `json:"weight"`
	// parallel to Path: the call site in each frame of the call into the
	// next; null for the last frame, and where the profile does not
	// describe the site
	Callsites []*jsonSite `json:"callsites"`
	// the time off the CPU of stacks that are this context; null without
	// time off the CPU
	OffCPUNS *uint64 `json:"offcpu_ns"`
}

// JSON writes p as the JSON report of docs/REPORT-JSON.md.
func JSON(w io.Writer, p *profile.Profile, o Options) error {
	s, err := summarize(p, o, false)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // C++ names have < and >
	enc.SetIndent("", "  ")
	if err := enc.Encode(s.json()); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

func (s *summary) json() *jsonReport {
	r := &jsonReport{
		Version:   JSONVersion,
		Recording: recordingJSON(s.p, s.p.Warnings),
		Functions: make([]jsonFunc, 0, len(s.funcs)),
		Edges:     make([]jsonEdge, 0, len(s.edges)),
		Contexts:  make([]jsonContext, 0, len(s.contexts)),
	}
	for _, f := range s.funcs {
		jf := jsonFunc{Name: f.Name, Object: str(f.Object),
			Self: f.selfShare, Total: f.totShare, Calls: s.count(f.calls), CallsShare: s.callShare(f.callShare)}
		if off := s.p.OffCPU; off != nil {
			fw, _ := off.Function(f.id)
			jf.OffCPUSelfNS, jf.OffCPUTotalNS = &fw.Self, &fw.Total
		}
		r.Functions = append(r.Functions, jf)
	}
	for _, e := range s.edges {
		je := jsonEdge{Caller: e.caller.Name, Callee: e.callee.Name, Count: s.count(e.weight), Weight: e.share}
		if s.stacks() {
			je.SamplesShare = &e.stackShare
		}
		if e.info != nil {
			je.Callsite = siteJSON(*e.info)
		}
		r.Edges = append(r.Edges, je)
	}
	for _, c := range s.contexts {
		jc := jsonContext{Path: c.names, Count: s.count(c.weight), Weight: c.share, Callsites: s.pathSites(c.path)}
		if off := s.p.OffCPU; off != nil && c.path != nil {
			ns := off.PathWeights(c.path).Self
			jc.OffCPUNS = &ns
		}
		r.Contexts = append(r.Contexts, jc)
	}
	return r
}

func siteJSON(info profile.Site) *jsonSite {
	js := &jsonSite{Object: str(info.Object), Offset: fmt.Sprintf("%#x", info.Offset)}
	if info.File != "" {
		line := info.Line
		js.File, js.Line = &info.File, &line
	}
	return js
}

// pathSites returns the call site of each frame of path into the next
// (nil for the last frame and for a site the profile does not describe).
func (s *summary) pathSites(path []ccmap.Frame) []*jsonSite {
	out := make([]*jsonSite, len(path))
	for i, f := range path[:max(len(path)-1, 0)] {
		if info, ok := s.p.Sites[ccmap.CallSite{Caller: f.Func, Addr: f.Site}]; ok {
			out[i] = siteJSON(info)
		}
	}
	return out
}

func recordingJSON(p *profile.Profile, warnings []string) jsonRecording {
	rec := &p.Recording
	r := jsonRecording{
		Measure:  p.Measure.String(),
		Warnings: append([]string{}, warnings...), Incomplete: rec.Incomplete,
		File: rec.File, Command: rec.Command, Source: rec.Source.String(),
		Events:  make([]jsonEvent, 0, len(rec.Events)),
		Samples: rec.Samples, Lost: rec.Lost, Throttled: rec.Throttled, DurationNS: rec.DurationNS,
		Periods:   make([]jsonPeriod, 0, len(rec.Periods)),
		Processes: make([]jsonProc, 0, len(rec.Processes)),
	}
	for _, p := range rec.Processes {
		r.Processes = append(r.Processes, jsonProc{PID: p.PID, Comm: str(p.Comm), Samples: p.Samples, Share: p.Share})
	}
	for _, e := range rec.Events {
		r.Events = append(r.Events, jsonEvent(e))
	}
	for _, p := range rec.Periods {
		r.Periods = append(r.Periods, jsonPeriod(p))
	}
	if rec.Leaf.Checked > 0 {
		r.Leaf = &jsonLeaf{Checked: rec.Leaf.Checked, Inserted: rec.Leaf.Inserted, Unknown: rec.Leaf.Unknown}
	}
	if st := &rec.OffCPU; st.Recorded {
		ns := st.NS
		r.OffCPUNS = &ns
		o := &jsonOffCPU{Intervals: st.Intervals, PreemptedNS: st.PreemptedNS, NoStack: st.NoStack, NoStackNS: st.NoStackNS, StackLost: st.StackLost,
			OpenAtStart: st.OpenAtStart, OpenAtEnd: st.OpenAtEnd, EndedByExit: st.EndedByExit, Unmatched: st.Unmatched, SwitchesLost: st.SwitchesLost,
			Reasons: []jsonReason{}, Threads: make([]jsonThread, 0, len(st.Threads))}
		for _, rr := range offCPUReasons(p) {
			o.Reasons = append(o.Reasons, jsonReason{Reason: rr.reason, NS: rr.ns, Intervals: rr.intervals})
		}
		for _, t := range st.Threads {
			o.Threads = append(o.Threads, jsonThread{PID: t.PID, TID: t.TID, Comm: str(t.Comm), LifeNS: t.LifeNS, OnNS: t.OnNS, OffNS: t.OffNS})
		}
		r.OffCPU = o
	}
	return r
}

// count returns n as a call count, or nil (null) if the profile has none.
func (s *summary) count(n uint64) *uint64 {
	if !s.p.HasCalls {
		return nil
	}
	return &n
}

// callShare returns v as a share of the calls, or nil (null) if the
// profile has no call counts.
func (s *summary) callShare(v float64) *float64 {
	if !s.p.HasCalls {
		return nil
	}
	return &v
}

func str(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
