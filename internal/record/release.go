package record

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"github.com/hwprof/hwprof/internal/uprobe"
	"github.com/hwprof/hwprof/perf"
	"golang.org/x/sys/unix"
)

// Releasing the last perf event of a tracepoint (a tracefs uprobe event
// among them) waits, under the kernel's global event_mutex, for grace
// periods: perf_trace_destroy → perf_trace_event_unreg → the uprobe's
// unregistration (uprobe_unregister_sync) and tracepoint_synchronize_unregister,
// about 80 ms on the Linux 6.18 VMs this was built on, one tracepoint at a
// time however many threads close them. The other perf events of the same
// tracepoint close at once (only its last close waits), and a tracefs
// event that holds many probes (the exact source's: see uprobe.Define)
// unregisters them all with one wait. So what costs is the number of
// distinct tracepoints, not of probes or of fds: an exact recording of
// 5,000 functions has one or two and releases them in a fraction of a
// second.
//
// When a recording has more than releaseInBackgroundAbove such events
// (many -e tracepoints, say), hwprof disables them, unmaps the rings and
// hands the fds to a detached copy of itself (re-executed with
// releaseMarker, the fds as its descriptors 3, 4, ...) that closes them in
// the background, then removes the exact source's probes from tracefs
// and unmounts the tracefs hwprof mounted for them, if it did; hwprof
// returns at once. Until that process is done the tracepoints stay
// registered, and opening new tracepoint or uprobe events waits for the
// event_mutex between releases.

// releaseMarker is the argument that makes a binary importing this
// package a releaser.
const releaseMarker = "__hwprof_release_perf_events__"

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

func init() {
	if len(os.Args) < 3 || os.Args[1] != releaseMarker {
		return
	}
	n, err := strconv.Atoi(os.Args[2])
	if err != nil {
		os.Exit(2)
	}
	for fd := 3; fd < 3+n; fd++ {
		unix.Close(fd)
	}
	code := 0
	if len(os.Args) >= 5 { // then the probes the events were made of
		if uprobe.Undefine(os.Args[3], os.Args[4]) != nil {
			code = 1
		}
	}
	if len(os.Args) == 7 { // and the tracefs hwprof mounted for them
		id, err := strconv.ParseUint(os.Args[6], 10, 64)
		if err != nil || uprobe.Unmount(os.Args[5], id) != nil {
			code = 1
		}
	}
	os.Exit(code)
}

// releaseInBackground disables the events and passes their fds to a
// detached releaser process, closing its own copies (cheap: the releaser
// holds a reference to every event). If the releaser cannot be started it
// closes them here, the slow way. Either way the fds are closed when it
// returns; it reports whether the releaser took them.
func releaseInBackground(events []openEvent) bool {
	// The fds themselves are passed, not duplicates: duplicating would need
	// twice the descriptors RLIMIT_NOFILE was raised for.
	files := make([]*os.File, len(events))
	for i, e := range events {
		perf.Disable(e.fd)
		files[i] = os.NewFile(uintptr(e.fd), "perf-event")
	}
	args := []string{releaseMarker, strconv.Itoa(len(files))}
	if dir, group, ok := uprobe.Own(); ok {
		args = append(args, dir, group)
		if mdir, id, ok := uprobe.OwnMount(); ok {
			args = append(args, mdir, strconv.FormatUint(id, 10))
		}
	}
	cmd := exec.Command("/proc/self/exe", args...)
	cmd.ExtraFiles = files
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	started := cmd.Start() == nil
	if started {
		cmd.Process.Release()
		uprobe.HandOverMount() // the releaser unmounts it
	}
	closeFilesParallel(files)
	return started
}
