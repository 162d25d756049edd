package record

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/hwprof/hwprof/buildid"
	"github.com/hwprof/hwprof/internal/output"
	"github.com/hwprof/hwprof/internal/uprobe"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/perfdata"
	"github.com/hwprof/hwprof/perf/synth"
	"github.com/hwprof/hwprof/symbolize"
)

// create writes the file's header and attrs with the ids of every open
// event.
func (r *recorder) create() error {
	attrs := make([]perfdata.EventAttr, len(r.o.Events))
	for i, ev := range r.o.Events {
		// The exact source's probes are written in the uprobe PMU's form
		// (see uprobe.FileAttr); the samples' layout is the same.
		a, _ := uprobe.FileAttr(ev.Attr)
		attrs[i] = perfdata.EventAttr{Attr: a, Name: ev.Name}
	}
	for _, e := range r.events {
		attrs[e.event].IDs = append(attrs[e.event].IDs, e.id)
	}
	r.format, _ = perf.NewSampleFormat()
	for _, a := range attrs {
		if _, err := r.format.Add(a.Attr, a.IDs); err != nil {
			return fmt.Errorf("record: %w", err)
		}
	}
	// Prepared: the file has no name until the targets run (commit).
	out, err := output.Prepare(r.o.Output)
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	var w *perfdata.Writer
	if out.Stream() {
		// A stream cannot seek back to a header: perf's pipe mode, with
		// the features up front.
		w, err = perfdata.NewPipeWriter(out.File, attrs, perfdata.CollectFeatures())
	} else {
		w, err = perfdata.NewWriter(out.File, attrs)
	}
	if err != nil {
		return errors.Join(fmt.Errorf("record: %w", err), out.Discard())
	}
	w.NotifyWritten(r.written) // Stats count what reached the file
	r.w, r.out = w, out
	if r.o.BuildIDCache != nil {
		r.hits = newHits()
		if out.Stream() {
			r.liveHits, r.hits.live = r.hits, true
		}
	}
	return r.writeKernelMmap()
}

// discard undoes create when the recording could not start: a file is
// dropped (before commit: the path and its .old were never touched) or
// removed and the previous recording put back; a stream is ended as a
// valid recording without samples.
func (r *recorder) discard() error {
	if r.out.Stream() {
		return r.finish(nil)
	}
	return r.out.Discard()
}

// abandon ends a recording that failed before it started: the output is
// discarded (see discard), and err returned with what that found.
func (r *recorder) abandon(err error) error {
	return errors.Join(err, r.discard())
}

// commit gives the output its path once the targets run: a previous
// recording there becomes .old only now. A commit that fails abandons the
// recording; the caller ends the targets it started.
func (r *recorder) commit() error {
	if err := r.out.Commit(); err != nil {
		return r.abandon(fmt.Errorf("record: %w", err))
	}
	return nil
}

// writeKernelMmap writes the kernel's text mapping as perf does, so that
// kernel addresses in samples resolve, when an event samples the kernel
// and /proc/kallsyms shows addresses.
func (r *recorder) writeKernelMmap() error {
	kernel := false
	for _, ev := range r.o.Events {
		kernel = kernel || !ev.Attr.Flags.Has(perf.FlagExcludeKernel)
	}
	if !kernel {
		return nil
	}
	k, ok, err := synth.ReadKernelText(procRoot)
	if err != nil || !ok {
		return nil // restricted: kernel frames stay unresolved, as with perf
	}
	r.synth = synth.AppendKernelMmap(r.synth[:0], k, r.o.Events[0].Attr.SampleType, synth.SampleID{})
	return r.writeSynthesized(r.synth)
}

// finish writes the feature sections and closes the file; err is the
// recording's own error, returned joined with a *WriteError when a write
// failed (then or before: the Writer writes nothing after its first
// failure, and that failure is reported once).
func (r *recorder) finish(err error) error {
	if r.adaptive != nil {
		r.stats.Periods, r.stats.AdaptiveErr = r.adaptive.changes, r.adaptive.applyErr
		r.stats.ThreadPeriods, r.stats.SampleCPU = r.adaptive.threadPeriods(), r.adaptive.drainTotal
		r.stats.PeriodsFixed, r.stats.Trades = r.adaptive.corrected, r.adaptive.trades()
	}
	f := perfdata.CollectFeatures()
	f.SampleTimeFirst, f.SampleTimeLast = r.timeFirst, r.timeLast
	err1, err2 := r.perfMaps.keep(filepath.Dir(symbolize.PerfMapPath(0))), r.keepJITDumps()
	if jerr := errors.Join(err1, err2); jerr != nil && r.o.Notice != nil {
		r.o.Notice(fmt.Sprintf("JIT files of processes in other namespaces not kept: %v", jerr))
	}
	if r.writeErr == nil { // else Close writes no features
		f.BuildIDs = r.collectBuildIDs()
	}
	if cerr := r.w.Close(f); cerr != nil && r.writeErr == nil {
		r.writeErr = cerr // the last records or the feature sections
	}
	if r.writeErr != nil {
		if err != nil && errors.Is(err, r.writeErr) {
			err = nil // the same failure, passed up by a writer of records
		}
		if r.stopErr == nil { // it failed at the end, or before the loop
			r.stopErr = r.writeError(false, r.stats.Duration)
		}
		err = errors.Join(err, r.stopErr)
	}
	if r.out.Stream() { // the Writer closed a file, but leaves a stream open
		if cerr := r.out.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("record: close %s: %w", r.o.Output, cerr))
		}
	}
	return err
}

func (r *recorder) collectBuildIDs() []perfdata.BuildID {
	var ids []perfdata.BuildID
	objs := map[string]buildid.ID{}
	for path, pid := range r.buildIDs {
		id, err := r.objectBuildID(path)
		if err != nil {
			continue // not an ELF file, or one without a build-id
		}
		ids = append(ids, perfdata.BuildID{PID: pid, Misc: perf.MiscUser, ID: id, Path: path})
		objs[path] = id
	}
	r.fillCache(objs, r.sampled())
	r.files.closeAll()
	// The kernel's, when an event samples it, as perf record writes it:
	// a report then knows whether /proc/kallsyms (or a kallsyms saved for
	// that build-id) names the kernel addresses.
	kernel := false
	for _, ev := range r.o.Events {
		kernel = kernel || !ev.Attr.Flags.Has(perf.FlagExcludeKernel)
	}
	if kid, err := buildid.Kernel(); kernel && err == nil && !kid.IsZero() {
		ids = append(ids, perfdata.BuildID{PID: -1, Misc: perf.MiscKernel, ID: kid, Path: symbolize.KernelPath})
	}
	return ids
}
