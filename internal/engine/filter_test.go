package engine

import (
	"path/filepath"
	"testing"

	"github.com/hwprof/hwprof/internal/fixtures"
)

// With a filter, Recording.Sampled counts every sample of the recording
// once, kept or not, by thread and command name (a sample whose stack the
// stack cache lacks goes from the fast fold to the slow one, and is
// still counted once), so that a filter that keeps nothing can say what
// there is. Without a filter it is empty.
func TestFilterSampled(t *testing.T) {
	dir := fixtures.Dir(t)
	for _, name := range []string{"perf.data.callgraph-3.8", "perf.data.forkexit-3.8"} {
		t.Run(name, func(t *testing.T) {
			rec := filepath.Join(dir, "perf_data_converter", name)
			all, err := Load(rec, LoadOptions{Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			if len(all.Recording.Sampled) != 0 || len(all.Recording.Processes) == 0 {
				t.Fatalf("without a filter: %d sampled threads, %d processes", len(all.Recording.Sampled), len(all.Recording.Processes))
			}
			top := all.Recording.Processes[0]
			for _, pids := range [][]int{{1 << 30}, {int(top.PID)}} {
				p, err := Load(rec, LoadOptions{Workers: 1, PIDs: pids})
				if err != nil {
					t.Fatal(err)
				}
				var sum, ofPID uint64
				for _, s := range p.Recording.Sampled {
					sum += s.Samples
					if int(s.PID) == pids[0] {
						ofPID += s.Samples
					}
				}
				if sum != all.Recording.Samples || ofPID != p.Recording.Samples {
					t.Errorf("--pid %d: sampled threads sum to %d samples, %d of the pid; the recording has %d, the filter kept %d",
						pids[0], sum, ofPID, all.Recording.Samples, p.Recording.Samples)
				}
			}
		})
	}
}
