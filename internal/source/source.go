package source

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/hwprof/hwprof/internal/uprobe"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/event"
	"github.com/hwprof/hwprof/profile"
	"golang.org/x/sys/unix"
)

// Source is a way of sampling call edges: profile.Source, the one type
// that names a sample source everywhere in hwprof.
type Source = profile.Source

// The sources hwprof record offers (profile.Mixed names recordings only).
const (
	LBR   = profile.LBR
	Calls = profile.Calls
	Timer = profile.Timer
	Exact = profile.Exact
)

// All lists the sources in order of preference for call-edge accuracy per
// unit of cost (exact is last: it is the most accurate but slow).
var All = []Source{LBR, Calls, Timer, Exact}

// Parse returns the source named s, one of All.
func Parse(s string) (Source, error) {
	for _, src := range All {
		if src.String() == s {
			return src, nil
		}
	}
	return 0, fmt.Errorf("unknown source %q (want lbr, calls, timer or exact)", s)
}

// Facts are what the verdicts depend on.
type Facts struct {
	PMUs        map[string]*event.PMU // by name, from /sys/bus/event_source/devices
	PMUErr      error                 // reading the PMUs failed
	Paranoid    int                   // kernel.perf_event_paranoid
	ParanoidErr error
	Root        bool // effective uid 0
	CapPerfmon  bool // CAP_PERFMON (or CAP_SYS_ADMIN, which implies it)
	Kernel      string
	CPUModel    string      // "model name" of /proc/cpuinfo
	CPU         event.CPUID // vendor, family, model: which event tables apply
	CPUErr      error       // reading the CPU model failed
	// TracefsErr says why this process cannot define uprobes in tracefs
	// (nil: it can, or it may mount tracefs): uprobe.Access.
	TracefsErr error
}

// Gather reads the facts of this machine.
func Gather() Facts {
	var f Facts
	f.PMUs, f.PMUErr = event.DiscoverPMUs(event.SysfsPMURoot)
	f.Paranoid, f.ParanoidErr = perf.Paranoid()
	f.Root = os.Geteuid() == 0
	f.CapPerfmon = perf.HasCapability(perf.CapPerfmon) || perf.HasCapability(perf.CapSysAdmin)
	f.TracefsErr = uprobe.Access()
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		f.Kernel = unix.ByteSliceToString(u.Release[:])
	}
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		f.CPUErr = err
		return f
	}
	f.CPUModel = cpuModel(string(b))
	f.CPU, f.CPUErr = event.ParseCPUInfo(string(b))
	return f
}

func cpuModel(cpuinfo string) string {
	for line := range strings.Lines(cpuinfo) {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// CPUPMU is the core PMU, if any: "cpu" on most x86 machines, "cpu_core"
// (the performance cores) on hybrid Intel parts.
func (f *Facts) CPUPMU() *event.PMU {
	for _, name := range []string{"cpu", "cpu_core"} {
		if p := f.PMUs[name]; p != nil {
			return p
		}
	}
	return nil
}

// privileged: root or CAP_PERFMON bypass perf_event_paranoid.
func (f *Facts) privileged() bool { return f.Root || f.CapPerfmon }

// userProfilingAllowed: sampling one's own processes in user space.
func (f *Facts) userProfilingAllowed() (bool, string) {
	if f.privileged() {
		return true, ""
	}
	if f.ParanoidErr != nil {
		return false, fmt.Sprintf("cannot read %s (%v): perf events are probably disabled in this kernel", perf.ParanoidPath, f.ParanoidErr)
	}
	if f.Paranoid > 2 {
		return false, fmt.Sprintf("perf_event_paranoid is %d and hwprof runs without CAP_PERFMON: "+
			"lower it to 2 (sysctl kernel.perf_event_paranoid=2) or grant CAP_PERFMON", f.Paranoid)
	}
	return true, ""
}

// Verdict says whether a source works here, and if not why and what to
// use instead.
type Verdict struct {
	Source  Source
	OK      bool
	Why     string // what was found (working) or what is missing (not working)
	Instead string // for a source that does not work: what to use
	// UserOnly: the source's events would count the kernel, which
	// perf_event_paranoid forbids this process, so they fall back to
	// user space only (as perf record's do).
	UserOnly bool
}

// Assess judges every source, in the order of All.
func Assess(f Facts) []Verdict {
	vs := make([]Verdict, 0, len(All))
	for _, s := range All {
		vs = append(vs, assess(&f, s))
	}
	working := []string{}
	for _, v := range vs {
		if v.OK {
			working = append(working, v.Source.String())
		}
	}
	for i := range vs {
		if !vs[i].OK {
			vs[i].Instead = Instead(working)
		}
	}
	return vs
}

// Instead says what to use when a source does not work: the sources that
// work (by name), or that none does.
func Instead(working []string) string {
	if len(working) == 0 {
		return "no source works here: fix the permission problem above"
	}
	return "use --source " + strings.Join(working, " or --source ")
}

func assess(f *Facts, s Source) Verdict {
	v := Verdict{Source: s}
	if f.PMUErr != nil {
		v.Why = fmt.Sprintf("cannot read %s: %v", event.SysfsPMURoot, f.PMUErr)
		return v
	}
	if ok, why := f.userProfilingAllowed(); !ok {
		v.Why = why
		return v
	}
	switch s {
	case LBR, Calls:
		cpu := f.CPUPMU()
		if cpu == nil {
			v.Why = "no hardware PMU: " + event.SysfsPMURoot + " has no 'cpu' PMU (" +
				pmuList(f.PMUs) + "); virtual machines often expose none"
			return v
		}
		if s == Calls {
			if _, ok := event.NearCallEvent(f.CPU, cpu.Name); !ok {
				v.Why = fmt.Sprintf("hardware PMU %q, but no calls-retired event is known for CPU %s "+
					"(hwprof knows BR_INST_RETIRED.NEAR_CALL of Intel sandybridge, haswell, skylake, cascadelakex, icelake, sapphirerapids, alderlake)",
					cpu.Name, cpuLabel(*f))
				return v
			}
			v.OK = true
			v.Why = fmt.Sprintf("hardware PMU %q (type %d)%s", cpu.Name, cpu.Type, modelSuffix(cpu))
			return v
		}
		depth := cpu.BranchDepth()
		if depth == 0 {
			v.Why = fmt.Sprintf("the %q PMU has no LBR: %s/%s/caps/branches is missing or 0", cpu.Name, event.SysfsPMURoot, cpu.Name)
			return v
		}
		v.OK = true
		v.Why = fmt.Sprintf("LBR with %d entries on PMU %q%s", depth, cpu.Name, modelSuffix(cpu))
	case Timer:
		if f.PMUs["software"] == nil {
			v.Why = "no software PMU in " + event.SysfsPMURoot
			return v
		}
		v.OK = true
		v.Why = "software cpu-clock event"
		v.UserOnly = f.UserOnly()
	case Exact:
		up := f.PMUs["uprobe"]
		if up == nil {
			v.Why = "no uprobe PMU in " + event.SysfsPMURoot + " (kernel built without CONFIG_UPROBE_EVENTS)"
			return v
		}
		if f.TracefsErr != nil {
			v.Why = f.TracefsErr.Error()
			return v
		}
		v.OK = true
		v.Why = "uprobe events (defined in tracefs, opened as tracepoints)"
		v.UserOnly = f.UserOnly()
	}
	return v
}

// UserOnly: without CAP_PERFMON at perf_event_paranoid 2 the kernel
// refuses events that count the kernel, and hwprof falls back to user
// space as perf does.
func (f *Facts) UserOnly() bool {
	return !f.privileged() && f.ParanoidErr == nil && f.Paranoid > perf.ParanoidKernel
}

// Choose picks the default source: lbr where it works, else calls, else
// timer. It returns the choice and a sentence saying why, in full (hwprof
// check prints it; record's note names only the source).
func Choose(vs []Verdict) (Source, string) {
	byS := map[Source]Verdict{}
	for _, v := range vs {
		byS[v.Source] = v
	}
	if byS[LBR].OK {
		return LBR, byS[LBR].Why
	}
	if byS[Calls].OK {
		return Calls, "lbr unavailable: " + byS[LBR].Why
	}
	return Timer, "no hardware call sampling here: " + byS[LBR].Why
}

func modelSuffix(p *event.PMU) string {
	if n := p.CPUName(); n != "" {
		return ", " + n
	}
	return ""
}

func pmuList(pmus map[string]*event.PMU) string {
	names := make([]string, 0, len(pmus))
	for n := range pmus {
		names = append(names, n)
	}
	if len(names) == 0 {
		return "none at all"
	}
	slices.Sort(names)
	return "found: " + strings.Join(names, ", ")
}
