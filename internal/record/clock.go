package record

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/ring"
)

// perfClockNow returns the time now on the clock the kernel stamps
// records with (perf_clock: the scheduler's clock, nanoseconds since
// boot, which no clock_gettime clock equals: CLOCK_MONOTONIC drifts from
// it under NTP). User space cannot read it directly, so the kernel is
// asked for a record stamped with it: a software dummy event on the
// calling thread that tracks comm changes, and the thread renamed to its
// own name (PR_SET_NAME), which writes a COMM record at once. The
// recorder takes it when its events start and stop counting: a recording
// of a process that did nothing meanwhile has no record to tell its
// span, and an idle thread's time off the CPU is that span.
func perfClockNow() (uint64, error) {
	runtime.LockOSThread() // the event and the rename are this thread's
	defer runtime.UnlockOSThread()
	a := perf.Attr{
		Type:         perf.TypeSoftware,
		Size:         perf.AttrSizeVer5,
		Config:       perf.SWDummy,
		SamplePeriod: 1,
		SampleType:   perf.SampleTime,
		Flags:        perf.FlagComm | perf.FlagSampleIDAll | perf.FlagExcludeKernel | perf.FlagExcludeHV,
	}
	fd, err := perf.Open("dummy", &a, 0, -1, -1, perf.FlagFDCloexec)
	if err != nil {
		return 0, fmt.Errorf("perf clock: %w", err)
	}
	defer unix.Close(fd)
	rg, err := ring.Map(fd, 1)
	if err != nil {
		return 0, fmt.Errorf("perf clock: %w", err)
	}
	defer rg.Close()
	name := make([]byte, 16)
	if err := unix.Prctl(unix.PR_GET_NAME, uintptr(unsafe.Pointer(&name[0])), 0, 0, 0); err != nil {
		return 0, fmt.Errorf("perf clock: thread name: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&name[0])), 0, 0, 0); err != nil {
		return 0, fmt.Errorf("perf clock: thread name: %w", err)
	}
	var t uint64
	_, _, err = rg.Read(func(rec []byte) error {
		// a COMM record with sample_id_all of TIME alone ends in the time
		if len(rec) >= 16 && perf.RecordType(binary.LittleEndian.Uint32(rec)) == perf.RecordComm && t == 0 {
			t = binary.LittleEndian.Uint64(rec[len(rec)-8:])
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("perf clock: %w", err)
	}
	if t == 0 {
		return 0, errors.New("perf clock: the kernel wrote no COMM record for a rename")
	}
	return t, nil
}
