package perfdata

import (
	"fmt"
	"github.com/hwprof/hwprof/internal/fixtures"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// perfHeaderLines returns the lines perf report --header-only -I prints
// for what f holds, in perf's words (print_* in tools/perf/util/header.c,
// perf 6.1).
func perfHeaderLines(r *Reader) []string {
	f := r.Features()
	var want []string
	add := func(format string, args ...any) { want = append(want, fmt.Sprintf(format, args...)) }
	if f.Has(FeatHostname) {
		add("# hostname : %s", f.Hostname)
	}
	if f.Has(FeatOSRelease) {
		add("# os release : %s", f.OSRelease)
	}
	if f.Has(FeatVersion) {
		add("# perf version : %s", f.Version)
	}
	if f.Has(FeatArch) {
		add("# arch : %s", f.Arch)
	}
	if f.Has(FeatNrCPUs) {
		add("# nrcpus online : %d", f.NrCPUsOnline)
		add("# nrcpus avail : %d", f.NrCPUsAvail)
	}
	if f.Has(FeatCPUDesc) && f.CPUDesc != "" {
		add("# cpudesc : %s", f.CPUDesc)
	}
	if f.Has(FeatCPUID) {
		add("# cpuid : %s", f.CPUID)
	}
	if f.Has(FeatTotalMem) {
		add("# total memory : %d kB", f.TotalMemKB)
	}
	if f.Has(FeatCmdline) {
		add("# cmdline : %s ", strings.Join(f.Cmdline, " "))
	}
	for _, e := range f.EventDesc {
		add("# event : name = %s, ", e.Name)
	}
	if t := f.CPUTopology; t != nil {
		for _, s := range t.CoreSiblings {
			add("# sibling sockets : %s", s)
		}
		for _, s := range t.DieSiblings {
			add("# sibling dies    : %s", s)
		}
		for _, s := range t.ThreadSiblings {
			add("# sibling threads : %s", s)
		}
		for i, c := range t.CPUs {
			if c.Die >= 0 && len(t.DieSiblings) > 0 {
				add("# CPU %d: Core ID %d, Die ID %d, Socket ID %d", i, c.Core, c.Die, c.Socket)
			} else if c.Core >= 0 {
				add("# CPU %d: Core ID %d, Socket ID %d", i, c.Core, c.Socket)
			}
		}
	}
	for _, n := range f.NUMATopology {
		add("# node%d meminfo  : total = %d kB, free = %d kB", n.Node, n.MemTotal, n.MemFree)
		add("# node%d cpu list : %s", n.Node, n.CPUs)
	}
	if len(f.PMUMappings) > 0 {
		var parts []string
		for _, m := range f.PMUMappings {
			parts = append(parts, fmt.Sprintf("%s = %d", m.Name, m.Type))
		}
		add("# pmu mappings: %s", strings.Join(parts, ", "))
	}
	for _, h := range f.HybridTopology {
		add("# %s cpu list : %s", h.PMU, h.CPUs)
	}
	if f.Has(FeatSampleTime) && f.SampleTimeFirst != 0 {
		add("# time of first sample : %d.%06d", f.SampleTimeFirst/1e9, f.SampleTimeFirst%1e9/1e3)
		add("# time of last sample : %d.%06d", f.SampleTimeLast/1e9, f.SampleTimeLast%1e9/1e3)
	}
	if c := f.Compression; c != nil {
		add("# compressed : Zstd, level = %d, ratio = %d", c.Level, c.Ratio)
	}
	return want
}

// perfStopsAt: perf 6.1 stops reading the feature sections of these files
// at a section it cannot read; hwprof reads on. Only the lines before it
// (in perfHeaderLines order) are compared.
var perfStopsAt = map[string]int{
	// An empty CPUDESC section (perf 3.8 on armv7): perf prints "(null)"
	// and nothing for the sections after it.
	"perf_data_converter/perf.data.armv7.perf_3.14-3.8": 6,
}

// TestFeaturesMatchPerfHeader holds every decoded feature section of
// every readable fixture against perf report --header-only -I, and the
// build-id table against perf buildid-list.
func TestFeaturesMatchPerfHeader(t *testing.T) {
	dir := fixtures.Dir(t)
	perfTool(t)
	for _, row := range readExpected(t, dir) {
		if row.samples < 0 {
			continue
		}
		t.Run(row.file, func(t *testing.T) {
			path := filepath.Join(dir, row.file)
			r, _, err, _ := readAll(t, path)
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("perf", "report", "--header-only", "-I", "-i", path)
			out, _ := cmd.Output() // perf exits non-zero on some old files but prints the header
			header := string(out)
			lines := perfHeaderLines(r)
			if cut, ok := perfStopsAt[row.file]; ok {
				lines = lines[:cut]
			}
			cpuLines := strings.Contains(header, "# CPU 0: ")
			for _, line := range lines {
				if strings.HasPrefix(line, "# CPU ") && !cpuLines {
					continue // perf 6.1 drops the per-CPU ids of some files ("not available")
				}
				if !strings.Contains(header, line) {
					t.Errorf("perf does not print %q", line)
				}
			}
			if len(r.Features().GroupDesc) != strings.Count(header, "# group: ") {
				t.Errorf("%d groups, perf prints %d", len(r.Features().GroupDesc), strings.Count(header, "# group: "))
			}
			if r.Header().Pipe {
				return // perf buildid-list reads no pipe files
			}
			bl, err := exec.Command("perf", "buildid-list", "-i", path).Output()
			if err != nil {
				return
			}
			// perf buildid-list also lists objects without a build-id
			// (blank): compare the set of those with one.
			perfIDs := map[string]bool{}
			for _, l := range strings.Split(string(bl), "\n") {
				if id, _, ok := strings.Cut(l, " "); ok && id != "" {
					perfIDs[l] = true
				}
			}
			ours := map[string]bool{}
			for _, b := range r.Features().BuildIDs {
				ours[fmt.Sprintf("%x %s", b.ID, b.Path)] = true
			}
			for l := range ours {
				if !perfIDs[l] {
					t.Errorf("perf buildid-list does not list %q", l)
				}
			}
			for l := range perfIDs {
				if !ours[l] {
					t.Errorf("perf buildid-list lists %q, hwprof does not", l)
				}
			}
		})
	}
}
