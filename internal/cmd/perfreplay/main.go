// Command perfreplay writes a longer perf.data recording made of a real
// one's samples replayed: for benchmarks that need a recording large enough
// that reading it, not starting a process, is what is timed, where no
// machine at hand can record its kind (LBR branch stacks).
//
// usage: perfreplay -n N IN OUT
//
// OUT (created; an existing OUT is replaced only if it is a regular file)
// holds IN's events, then IN's records in IN's time order with its samples
// N times: the first pass has IN's other records (MMAP, COMM, FORK, ...)
// among the samples where IN has them, the next ones its samples alone,
// their times shifted by k times IN's sample time span (plus one
// nanosecond) in pass k, so the passes follow each other in time as one
// longer run of the same program would; each pass ends with a
// FINISHED_ROUND. EXIT records are left out (a thread that exited in the
// first pass would have samples in the next). Samples without a time are
// copied as they are. The header keeps IN's build-ids, host facts and
// command line.
package main

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"

	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/perfdata"
)

func main() {
	n := flag.Int("n", 10, "times the samples are replayed")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: perfreplay -n N IN OUT")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 2 || *n < 1 {
		flag.Usage()
		os.Exit(2)
	}
	st, err := replay(flag.Arg(0), flag.Arg(1), *n)
	if err != nil {
		fmt.Fprintln(os.Stderr, "perfreplay:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "perfreplay: %s: %d samples (%d x %d), %d other records\n", flag.Arg(1), st.samples*int64(*n), st.samples, *n, st.other)
}

type stats struct{ samples, other int64 }

// replay writes out from in, its samples replayed n times.
func replay(in, out string, n int) (stats, error) {
	var st stats
	r, err := perfdata.Open(in)
	if err != nil {
		return st, err
	}
	defer r.Close()
	var samples [][]byte // copies of the SAMPLE records, in time order
	var times []int      // per sample the offset of its time, -1 if none
	var first, last uint64
	timed := false
	var pass0 [][]byte // the first pass: the samples and the other records
	for r.Next() {
		rec := r.Record()
		switch t := rec.Type(); {
		case t == perf.RecordSample:
			b := append([]byte(nil), rec.Raw...)
			off := -1
			if _, lay, err := r.Format().Layout(b); err == nil && lay.Time >= 0 && lay.Time+8 <= len(b) {
				off = lay.Time
				tm := binary.LittleEndian.Uint64(b[off:])
				if !timed || tm < first {
					first = tm
				}
				last, timed = max(last, tm), true
			}
			samples, times = append(samples, b), append(times, off)
			pass0 = append(pass0, b)
		case t < perf.RecordHeaderAttr && t != perf.RecordFinishedRound && t != perf.RecordExit:
			pass0 = append(pass0, append([]byte(nil), rec.Raw...))
			st.other++
		}
	}
	if err := r.Err(); err != nil {
		return st, err
	}
	if len(samples) == 0 {
		return st, fmt.Errorf("%s: no samples to replay", in)
	}
	if err := notReplacing(out); err != nil {
		return st, err
	}
	w, err := perfdata.Create(out, r.Attrs())
	if err != nil {
		return st, err
	}
	if err := writePasses(w, pass0, samples, times, last-first+1, n); err != nil {
		w.Close(perfdata.Features{})
		return st, err
	}
	f := r.Features().Features
	f.SampleTimeFirst, f.SampleTimeLast = 0, 0 // the writer takes them from the records
	if err := w.Close(f); err != nil {
		return st, err
	}
	st.samples = int64(len(samples))
	return st, nil
}

// writePasses writes the n passes: pass0 (the samples and the other
// records), then n-1 times the samples alone, each pass's times span
// later than the one before; a FINISHED_ROUND ends each pass.
func writePasses(w *perfdata.Writer, pass0, samples [][]byte, times []int, span uint64, n int) error {
	for _, b := range pass0 {
		if err := w.WriteRecord(b); err != nil {
			return err
		}
	}
	if err := w.WriteFinishedRound(); err != nil {
		return err
	}
	for k := 1; k < n; k++ {
		for i, b := range samples {
			if off := times[i]; off >= 0 {
				tm := binary.LittleEndian.Uint64(b[off:])
				binary.LittleEndian.PutUint64(b[off:], tm+span)
			}
			if err := w.WriteRecord(b); err != nil {
				return err
			}
		}
		if err := w.WriteFinishedRound(); err != nil {
			return err
		}
	}
	return nil
}

// notReplacing refuses an existing out that is not a regular file.
func notReplacing(out string) error {
	fi, err := os.Lstat(out)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s exists and is not a regular file: not replaced", out)
	}
	return nil
}
