package record

import (
	"os"

	"github.com/hwprof/hwprof/internal/record/release"
	"github.com/hwprof/hwprof/perf"
)

// Releasing the last perf event of a tracepoint waits for grace periods,
// about 80 ms, one tracepoint at a time (see package release). The other
// perf events of the same tracepoint close at once (only its last close
// waits), and a tracefs event that holds many probes (the exact source's:
// see uprobe.Define) unregisters them all with one wait. So what costs is
// the number of distinct tracepoints, not of probes or of fds: an exact
// recording of 5,000 functions has one or two and releases them in a
// fraction of a second.
//
// When a recording has more than releaseInBackgroundAbove such events
// (many -e tracepoints, say), hwprof disables them, unmaps the rings and
// hands the fds to a detached copy of itself (release.Start) that closes
// them in the background, then removes the exact source's probes from
// tracefs and unmounts the tracefs hwprof mounted for them, if it did;
// hwprof returns at once.

// releaseInBackgroundAbove is the number of events whose release waits
// for grace periods (slowToRelease) above which they are released by a
// background process: about 80 ms each.
const releaseInBackgroundAbove = 8

// slowToRelease counts the events whose last close waits for grace
// periods: tracepoints, and the events of dynamic PMUs (the uprobe and
// kprobe PMUs are; others are counted too, which only means a release in
// the background).
func slowToRelease(events []perf.Event) int {
	n := 0
	for _, e := range events {
		if e.Attr.Type == perf.TypeTracepoint || e.Attr.Type > perf.TypeBreakpoint {
			n++
		}
	}
	return n
}

// releaseInBackground disables the events and passes their fds to a
// detached releaser process, closing its own copies (cheap: the releaser
// holds a reference to every event). If the releaser cannot be started it
// closes them here, the slow way. Either way the fds are closed when it
// returns; it reports whether the releaser took them.
func releaseInBackground(events []openEvent) bool {
	files := make([]*os.File, len(events))
	for i, e := range events {
		perf.Disable(e.fd)
		files[i] = os.NewFile(uintptr(e.fd), "perf-event")
	}
	started := release.Start(files)
	closeFilesParallel(files)
	return started
}
