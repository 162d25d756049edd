package perfdata_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/hwprof/hwprof/buildid"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/perfdata"
)

// A recorder creates the file with its events, writes the records it reads
// from the ring buffers, a FINISHED_ROUND after each pass over the rings,
// checkpoints about once a second and closes with the host facts and the
// build-ids of the objects it saw.
func ExampleCreate() {
	dir, err := os.MkdirTemp("", "perfdata-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	attr := perf.Attr{
		Type:         perf.TypeSoftware,
		Config:       perf.SWCPUClock,
		SamplePeriod: 1_000_000,
		SampleType:   perf.SampleIP | perf.SampleTID | perf.SampleTime | perf.SamplePeriod,
		Flags:        perf.FlagDisabled | perf.FlagComm | perf.FlagMmap2 | perf.FlagSampleIDAll | perf.FlagExcludeKernel,
	}
	w, err := perfdata.Create(filepath.Join(dir, "perf.data"), []perfdata.EventAttr{
		{Attr: attr, IDs: []uint64{42}, Name: "cpu-clock:u"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	// for each pass over the rings: w.WriteRecord(rec) for every record, then
	if err := w.WriteFinishedRound(); err != nil {
		fmt.Println(err)
	}
	// about once a second:
	if err := w.Checkpoint(); err != nil {
		fmt.Println(err)
	}
	f := perfdata.CollectFeatures()
	if id, err := buildid.Read("/usr/bin/true"); err == nil {
		f.BuildIDs = append(f.BuildIDs, perfdata.BuildID{PID: -1, Misc: perf.MiscUser, ID: id, Path: "/usr/bin/true"})
	}
	fmt.Println(w.Records(), w.Close(f))
	// Output: 0 <nil>
}
