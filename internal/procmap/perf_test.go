package procmap

import (
	"bufio"
	"bytes"
	"fmt"
	"github.com/hwprof/hwprof/internal/fixtures"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/perfdata"
)

// perfDSOs runs `perf script -F ip,dso --hide-call-graph` and returns the
// object perf names for every sample, in order.
func perfDSOs(t *testing.T, data string) []string {
	t.Helper()
	perfBin, err := exec.LookPath("perf")
	if err != nil {
		t.Skip("perf not installed: no independent process model to compare with")
	}
	out, err := exec.Command(perfBin, "script", "-F", "ip,dso", "--hide-call-graph", "-i", data).Output()
	if err != nil && len(out) == 0 {
		t.Fatalf("perf script -i %s: %v", data, err)
	}
	var dsos []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		dsos = append(dsos, strings.Trim(f[len(f)-1], "()"))
	}
	return dsos
}

// perfName is the name perf gives an object: [kernel.kallsyms] for the
// kernel, [unknown] for no mapping, /tmp/perf-PID.map for anonymous
// executable memory of process pid, the path otherwise (modules included).
func perfName(mp addrspace.Mapping, ok bool, pid uint32) string {
	if !ok {
		return "[unknown]"
	}
	switch mp.Object.Kind {
	case addrspace.KindKernel:
		return "[kernel.kallsyms]"
	case addrspace.KindJIT:
		return fmt.Sprintf("/tmp/perf-%d.map", pid) // perf names JIT code by its symbol map
	}
	return mp.Object.Path
}

// TestAgainstPerf builds the process model of real recordings (forks,
// exits, execs, a library unmapped and mapped again elsewhere, kernel
// modules, JIT code) and checks that the object holding every sample's IP
// at its time is the one perf 6.1 names for it. One difference is
// deliberate: perf looks an IP up in the address space of the sample's mode
// and says [unknown] when the IP is in the other half (skid across a kernel
// entry or exit); Lookup resolves the address where it is.
func TestAgainstPerf(t *testing.T) {
	fx := fixtures.Dir(t)
	for _, name := range []string{
		"perf.data.forkexit-3.8",
		"perf.data.remmap-3.2",
		"perf.data.proc.map.timeout-3.18",
		"perf.data.callgraph-3.8",
		"perf.data.systemwide.0-3.8",
		"perf.data.systemwide.5-3.8",
		"perf.data.busy.1-3.8",
		"perf.data.branch-4.14",
		"perf.data.group_desc-4.14",
		"perf.data.lost_samples-4.4",
	} {
		t.Run(name, func(t *testing.T) {
			data := filepath.Join(fx, "perf_data_converter", name)
			want := perfDSOs(t, data)
			r, err := perfdata.Open(data)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			m := New(NewSegments(t.TempDir())) // the recorded objects are not on this machine
			var s perf.Sample
			var n, differ, skid int
			for r.Next() {
				switch r.Record().Type() {
				case perf.RecordSample:
					if err := r.DecodeSample(&s); err != nil {
						t.Fatal(err)
					}
					mp, _, ok := m.Lookup(s.PID, s.TID, s.Time, addrspace.Addr(s.IP))
					g := perfName(mp, ok, s.PID)
					if n < len(want) && g != want[n] && want[n] == "[unknown]" && modeMismatch(&s) {
						// perf looks the IP up in the address space the sample's
						// mode names (skid across a kernel entry or exit); the
						// process model looks where the address is.
						skid++
					} else if n < len(want) && g != want[n] {
						if differ++; differ <= 5 {
							t.Errorf("sample %d (pid %d, time %d, ip %#x): %s, perf says %s", n, s.PID, s.Time, s.IP, g, want[n])
						}
					}
					n++
				case perf.RecordMmap, perf.RecordMmap2, perf.RecordComm, perf.RecordFork, perf.RecordExit:
					rec, err := r.Decode()
					if err != nil {
						t.Fatal(err)
					}
					if err := m.Apply(rec); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := r.Err(); err != nil {
				t.Fatal(err)
			}
			if n != len(want) {
				t.Errorf("%d samples, perf script printed %d", n, len(want))
			}
			if differ > 0 {
				t.Errorf("%d of %d samples in a different object than perf's", differ, n)
			}
			t.Logf("%d samples compared; %d whose mode disagrees with their address perf leaves [unknown]", n, skid)
		})
	}
}

// modeMismatch reports a sample whose cpumode (user or kernel) disagrees
// with the half of the address space its IP is in.
func modeMismatch(s *perf.Sample) bool {
	return (s.CPUMode() == perf.MiscKernel) != (s.IP >= 1<<63)
}
