package engine

import (
	"fmt"
	"runtime/debug"

	"github.com/hwprof/hwprof/internal/diag"
	"github.com/hwprof/hwprof/internal/pipeline"
	"github.com/hwprof/hwprof/perf/perfdata"
	"github.com/hwprof/hwprof/profile"
)

// A Follower loads a recording while it is written, a part at a time: each
// Next reads the records written since the last (perfdata.OpenGrowing),
// folds their samples into a profile of their own and returns it. What the
// reading learns stays from part to part (the process model, the event
// table, the address table, the symbols and the files read for them, the
// records of the round in progress), so that each record is read once and
// each object's symbols (its DWARF with SiteLines) are read once, and the
// memory held is that of the recording's model, not of its samples. The
// profiles of all the parts add up to the profile Load gives of the
// finished recording: their samples and weights (call counts estimated
// from LBR are rounded part by part).
//
// A part that read object files (the symbols of objects met for the first
// time, or again after ReleaseIdle) returns the memory the reading took to
// the system before Next returns (debug.FreeOSMemory), so that the
// process's resident memory follows what it holds.
//
// A part's profile has the facts of its records only: its Recording's
// Lost, Throttled, Processes, Periods and DurationNS are those of its
// samples and records, and its warnings are said again in every part they
// hold for. A thread's time off the CPU goes in the part where its
// interval ends.
type Follower struct {
	l    *loader
	path string
	done bool
}

// Follow opens the recording at path, which its writer may still be
// writing, for Next. o is as for Load. The recording is taken to be made
// on this machine (hwprof record --otlp): its kernel is the running one
// unless its header says otherwise, and a file still written has no
// feature sections to say it yet.
func Follow(path string, o LoadOptions) (*Follower, error) {
	return follow(path, o, testOptions{live: true})
}

func follow(path string, o LoadOptions, t testOptions) (*Follower, error) {
	r, err := perfdata.OpenGrowing(path)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	l := newLoader(r, o, t)
	l.follow = true
	return &Follower{l: l, path: path}, nil
}

// Next reads the records the writer has added since the last call (as far
// as the file's header covers them; see perfdata.Reader.Grow) and returns
// the profile of their samples, with the error that stopped the reading,
// if any. last says that the writer is done: the records are then read to
// the end of the file, and the Follower is done too (Close is still
// called). A Next after the last returns nil, nil.
func (f *Follower) Next(last bool) (*profile.Profile, error) {
	if f.done {
		return nil, nil
	}
	l := f.l
	finished, err := l.r.Grow(last)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", f.path, err)
	}
	l.last = finished
	f.done = finished
	if l.fold == nil {
		l.fold = pipeline.NewFolder(pipeline.FoldOptions{Workers: l.o.Workers, DedupRatio: l.o.DedupRatio, Seed: l.o.Seed})
	}
	addrMap, readErr := pipeline.Run(l.r, l, l.fold, pipeline.Options{Preparers: l.o.Workers, Inline: l.test.inline})
	l.fold = nil
	reads := l.eng.Symbols.Reads()
	p := l.finish(addrMap)
	if l.eng.Symbols.Reads() > reads {
		// Reading an object's symbols (its DWARF above all) takes up to
		// hundreds of MB for a moment: a long-running reader gives it
		// back to the system now rather than keep it.
		debug.FreeOSMemory()
	}
	p.Recording.File = f.path
	l.nextPart()
	if readErr != nil {
		f.done = true
		return p, fmt.Errorf("load %s: %w", f.path, readErr)
	}
	return p, nil
}

// Close lets go of the recording and of the files read for its symbols.
func (f *Follower) Close() {
	f.l.code.close()
	if !f.l.last {
		f.l.eng.Close()
	}
	f.l.r.Close()
}

// What a Follower keeps of the objects it read, in parts: the files read
// for the symbols of an object that had no new address in the last
// symbolsIdle parts are let go, and every unwindTables parts the CFI
// tables read for unwinding (the objects in use are read again). At the
// default interval of hwprof record --otlp (10 s) that is a minute and
// five minutes: a machine that runs program after program (builds, tests)
// does not make the reader hold the symbols of all of them.
const (
	symbolsIdle  = 6
	unwindTables = 30
)

// nextPart clears what the loader counted of the part just made, for the
// next: the facts that Recording and the warnings say of a part's records.
// It lets go of what it read of the objects not in use.
func (l *loader) nextPart() {
	l.parts++
	l.eng.Symbols.ReleaseIdle(symbolsIdle)
	if l.parts%unwindTables == 0 {
		l.unwinder.Forget()
	}
	l.rec = profile.Recording{}
	l.warnings = nil
	clear(l.rootSamples)
	clear(l.rootWeight)
	l.eng.Skips = diag.Skips{}
	l.probes.noRetAddr, l.probes.notCall, l.probes.goRestarts = 0, 0, 0
	l.lbr.callsUnknown = 0
	clear(l.lbr.edges.sums) // folded by flushLBR
	l.filter.procs, l.filter.last = nil, nil
	l.filter.seen, l.filter.lastSeen = nil, nil
	l.per.timed = false // DurationNS is the part's
	l.off.stats = profile.OffCPUStats{Recorded: l.off.stats.Recorded}
}
