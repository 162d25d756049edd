package uprobe

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/event"
)

// Why probes are defined through tracefs and opened as tracepoints rather
// than through the uprobe PMU: an inherited uprobe-PMU event re-reads its
// path through config1 when the task it follows clones (perf_uprobe_init
// runs again for the child's copy, strndup_user in the cloning task), where
// the pointer means nothing, and the clone fails with EFAULT. Go programs
// die at their first thread ("failed to create new OS thread ...
// errno=14"), and so would any C program that forks or starts a thread.
// A tracefs uprobe (uprobe_events) opened as a tracepoint event (type
// PERF_TYPE_TRACEPOINT, config = its id) inherits like any event. This is
// what perf probe + perf record do.

// tracefsDirs are where tracefs is looked for, in order.
var tracefsDirs = []string{"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}

// Tracefs returns the directory of the kernel's tracing file system, the
// one with uprobe_events, mounting tracefs at /sys/kernel/tracing when it
// is not mounted anywhere (as perf does); UnmountOwn unmounts it again.
// A tracefs this user may not enter is an error that says so.
func Tracefs() (string, error) {
	dir, err := findTracefs()
	if dir != "" || err != nil {
		return dir, err
	}
	d := tracefsDirs[0]
	if err := unix.Mount("nodev", d, "tracefs", 0, ""); err != nil {
		return "", fmt.Errorf("uprobe: tracefs is not mounted and mounting it at %s failed (%v): "+
			"run as root, or have an administrator mount it (mount -t tracefs nodev %s)", d, err, d)
	}
	mounted.Lock()
	mounted.dir, mounted.id = d, mountID(d)
	mounted.Unlock()
	if _, err := os.Stat(filepath.Join(d, "uprobe_events")); err != nil {
		UnmountOwn()
		return "", fmt.Errorf("uprobe: %s/uprobe_events is missing: the kernel lacks CONFIG_UPROBE_EVENTS", d)
	}
	return d, nil
}

// findTracefs returns the mounted tracefs directory that has
// uprobe_events, "" when none is mounted, or an error when one is mounted
// where this user may not look (tracefs is root's only by default).
func findTracefs() (string, error) {
	for _, d := range tracefsDirs {
		_, err := os.Stat(filepath.Join(d, "uprobe_events"))
		if err == nil {
			return d, nil
		}
		if errors.Is(err, os.ErrPermission) {
			return "", rootOnly(d)
		}
	}
	return "", nil
}

// rootOnly is the error for a tracefs at dir that this user may not use.
func rootOnly(dir string) error {
	owner := ""
	if fi, err := os.Stat(dir); err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			owner = fmt.Sprintf(" (mode %#o, owner uid %d)", fi.Mode().Perm(), st.Uid)
		}
	}
	return fmt.Errorf("uprobe: tracefs at %s%s lets only root define uprobes (%s/uprobe_events), "+
		"and CAP_PERFMON does not change that: run as root, or have an administrator give you write access "+
		"to %s and %s/uprobe_events (chgrp and chmod, as the kernel's perf-security document describes for tracefs)",
		dir, owner, dir, dir, dir)
}

// Access reports whether this process could define uprobes, without
// defining any or mounting anything: nil when uprobe_events of the
// mounted tracefs opens for writing (opening it so, without O_TRUNC,
// changes nothing), or when tracefs is not mounted and this process is
// root (Tracefs mounts it).
func Access() error {
	dir, err := findTracefs()
	if err != nil {
		return err
	}
	if dir == "" {
		if os.Geteuid() != 0 {
			return fmt.Errorf("uprobe: tracefs is not mounted and only root may mount it: "+
				"run as root, or have an administrator mount it (mount -t tracefs nodev %s)", tracefsDirs[0])
		}
		return nil
	}
	f, err := os.OpenFile(filepath.Join(dir, "uprobe_events"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		if errors.Is(err, os.ErrPermission) {
			return rootOnly(dir)
		}
		return fmt.Errorf("uprobe: %w", err)
	}
	return f.Close()
}

// mounted is the tracefs this process mounted (Tracefs), if any: its
// directory and the mount's id, so that UnmountOwn unmounts that mount
// and never one someone else made there since.
var mounted struct {
	sync.Mutex
	dir string
	id  uint64
}

// mountID is the id of the mount dir is on (statx STATX_MNT_ID), 0 when
// unknown.
func mountID(dir string) uint64 {
	var st unix.Statx_t
	if unix.Statx(unix.AT_FDCWD, dir, unix.AT_NO_AUTOMOUNT, unix.STATX_MNT_ID, &st) != nil || st.Mask&unix.STATX_MNT_ID == 0 {
		return 0
	}
	return st.Mnt_id
}

// UnmountOwn unmounts the tracefs this process mounted, if any (call it
// after removing the probes): only that mount, and only while it is still
// the one at its directory.
func UnmountOwn() error {
	dir, id, ok := HandOverMount()
	if !ok {
		return nil
	}
	return Unmount(dir, id)
}

// OwnMount returns the tracefs this process mounted, ok false when none.
func OwnMount() (dir string, id uint64, ok bool) {
	mounted.Lock()
	defer mounted.Unlock()
	return mounted.dir, mounted.id, mounted.dir != ""
}

// HandOverMount returns the tracefs this process mounted and forgets it,
// for a process that removes the probes and unmounts it later (Unmount).
// ok is false when this process mounted none.
func HandOverMount() (dir string, id uint64, ok bool) {
	mounted.Lock()
	defer mounted.Unlock()
	dir, id = mounted.dir, mounted.id
	mounted.dir, mounted.id = "", 0
	return dir, id, dir != ""
}

// Unmount unmounts the tracefs at dir that has mount id id (from
// HandOverMount), and nothing else: when the mount at dir is another one
// now, or its id was unknown, it is left alone.
func Unmount(dir string, id uint64) error {
	if id == 0 || mountID(dir) != id {
		return nil
	}
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) != nil || st.Type != unix.TRACEFS_MAGIC {
		return nil
	}
	if err := unix.Unmount(dir, 0); err != nil {
		return fmt.Errorf("uprobe: unmount the tracefs hwprof mounted at %s: %w", dir, err)
	}
	return nil
}

// Group is the tracefs event group of this process's current probes:
// hwprof_PID_N, N counting the recordings of the process (NewGroup), since
// a previous recording's group may still be being removed in the
// background when the next one defines its probes.
func Group() string {
	defined.Lock()
	defer defined.Unlock()
	return groupLocked()
}

func groupLocked() string {
	if defined.group == "" {
		return "hwprof_" + strconv.Itoa(os.Getpid()) + "_0"
	}
	return defined.group
}

// NewGroup starts a new group for the probes of the next recording.
func NewGroup() {
	defined.Lock()
	defer defined.Unlock()
	defined.seq++
	defined.group = "hwprof_" + strconv.Itoa(os.Getpid()) + "_" + strconv.Itoa(defined.seq)
}

// eventName turns a function name into a tracefs event name: letters,
// digits and '_', not starting with a digit, at most 64 bytes
// (MAX_EVENT_NAME_LEN), unique within used.
func eventName(fn string, used map[string]bool) string {
	b := []byte(fn)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			b[i] = '_'
		}
	}
	name := string(b)
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		name = "_" + name
	}
	name = name[:min(len(name), 56)]
	base := name
	for n := 2; used[name]; n++ {
		name = base + "_" + strconv.Itoa(n)
	}
	used[name] = true
	return name
}

// Define creates the uprobes of obj in tracefs dir under group and returns
// the tracefs event name and tracepoint id of each, in obj.Probes order.
// used keeps the names unique across objects of the group.
//
// The probes share as few events as they can: one event, named after the
// object's file, holds every probe of obj (the kernel appends a probe to an
// event that has the same name and arguments: a multi-probe event), except
// those OwnEvent picks. A sample's IP tells which function was hit. This is
// what makes the probes cheap to release: the kernel waits for grace
// periods (tracepoint_synchronize_unregister, uprobe_unregister_sync) once
// per event when its last perf event is closed, not once per probe, and
// only the last close of an event's perf events waits (see
// internal/record/release.go).
func Define(dir, group string, obj *Object, used map[string]bool) (names []string, ids []uint64, err error) {
	var buf bytes.Buffer
	shared := ""
	for _, p := range obj.Probes {
		var name string
		switch {
		case OwnEvent(p):
			name = eventName(p.Name, used)
		case shared == "":
			shared = eventName(filepath.Base(obj.Path), used)
			name = shared
		default:
			name = shared
		}
		names = append(names, name)
		fmt.Fprintf(&buf, "p:%s/%s %s:%#x\n", group, name, obj.Path, p.Offset)
	}
	if err := appendLines(filepath.Join(dir, "uprobe_events"), buf.Bytes()); err != nil {
		Undefine(dir, group)
		return nil, nil, fmt.Errorf("uprobe: define probes on %s: %w", obj.Path, err)
	}
	idOf := map[string]uint64{}
	for _, name := range names {
		id, ok := idOf[name]
		if !ok {
			b, err := os.ReadFile(filepath.Join(dir, "events", group, name, "id"))
			if err == nil {
				id, err = strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
			}
			if err != nil {
				Undefine(dir, group)
				return nil, nil, fmt.Errorf("uprobe: id of %s/%s: %w", group, name, err)
			}
			idOf[name] = id
		}
		ids = append(ids, id)
	}
	return names, ids, nil
}

// OwnEvent reports whether a probe gets a tracefs event of its own, named
// after its function, rather than sharing its object's: Go's
// runtime.morestack functions, whose hits a loader tells apart by the
// event's name to discount the restarts they cause (see the package doc).
func OwnEvent(p Probe) bool {
	return strings.Contains(p.Name, "morestack")
}

// EventCount is the number of tracefs events Define makes for obj.
func EventCount(obj *Object) int {
	n, shared := 0, false
	for _, p := range obj.Probes {
		if OwnEvent(p) {
			n++
		} else {
			shared = true
		}
	}
	if shared {
		n++
	}
	return n
}

// appendLines writes lines to a tracefs command file in pieces of whole
// lines below a page, which the kernel parses one write at a time.
func appendLines(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	for len(b) > 0 {
		n := len(b)
		if n > 3072 {
			n = bytes.LastIndexByte(b[:3072], '\n') + 1
			if n == 0 {
				return errors.New("command line too long")
			}
		}
		if _, err := f.Write(b[:n]); err != nil {
			return fmt.Errorf("%w (%s)", err, firstLine(b[:n]))
		}
		b = b[n:]
	}
	return nil
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(string(b), "\n")
	return s
}

// Undefine removes every probe of group (after its events are closed:
// the kernel refuses to remove a probe that is in use, EBUSY). One
// "-:GROUP/EVENT" removes every probe of the event.
func Undefine(dir, group string) error {
	f, err := os.Open(filepath.Join(dir, "uprobe_events"))
	if err != nil {
		return fmt.Errorf("uprobe: %w", err)
	}
	var buf bytes.Buffer
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text()) // "p:GROUP/NAME PATH:OFFSET"
		if len(fields) > 0 {
			if _, ev, ok := strings.Cut(fields[0], ":"); ok && strings.HasPrefix(ev, group+"/") && !seen[ev] {
				seen[ev] = true
				fmt.Fprintf(&buf, "-:%s\n", ev)
			}
		}
	}
	f.Close()
	if buf.Len() == 0 {
		return nil
	}
	if err := appendLines(filepath.Join(dir, "uprobe_events"), buf.Bytes()); err != nil {
		return fmt.Errorf("uprobe: remove the probes of %s: %w", group, err)
	}
	return nil
}

// RemoveStale removes the probe groups of hwprof processes that no longer
// run (killed before they could clean up).
func RemoveStale(dir string) {
	entries, _ := os.ReadDir(filepath.Join(dir, "events"))
	for _, e := range entries {
		rest, isOurs := strings.CutPrefix(e.Name(), "hwprof_")
		pidText, _, _ := strings.Cut(rest, "_") // hwprof_PID_N
		pid, err := strconv.Atoi(pidText)
		if err != nil || !isOurs {
			continue
		}
		if err := unix.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			Undefine(dir, e.Name())
		}
	}
}

// defined remembers the tracefs directory once this process defined
// probes, for UndefineOwn.
var defined struct {
	sync.Mutex
	dir   string
	group string // the current group (NewGroup)
	seq   int
}

// DefineOwn is Define under this process's Group, remembered for
// UndefineOwn.
func DefineOwn(dir string, obj *Object, used map[string]bool) (names []string, ids []uint64, err error) {
	defined.Lock()
	defined.dir = dir
	defined.Unlock()
	names, ids, err = Define(dir, Group(), obj, used)
	probes := map[uint64]int{}
	for _, id := range ids {
		probes[id]++
	}
	for i, id := range ids {
		off := obj.Probes[i].Offset
		if probes[id] > 1 {
			off = 0 // an event of several probes has no one offset
		}
		probeOf.Store(id, off)
	}
	return names, ids, err
}

// Own returns the tracefs directory and group of this process's probes,
// ok false when it defined none.
func Own() (dir, group string, ok bool) {
	defined.Lock()
	defer defined.Unlock()
	return defined.dir, groupLocked(), defined.dir != ""
}

// UndefineOwn removes this process's probes (call it after their events
// are closed); it does nothing when none were defined.
func UndefineOwn() error {
	dir, group, ok := Own()
	if !ok {
		return nil
	}
	return Undefine(dir, group)
}

// probeOf maps the tracepoint ids of this process's probes to their file
// offsets (0 for an event of several probes), for FileAttr.
var probeOf sync.Map // uint64 → uint64

// FileAttr returns the attr a recording file should hold for an event
// opened with a: for this process's probes, the uprobe PMU's form of the
// same probe (type from /sys/bus/event_source/devices/uprobe/type, config2
// = the file offset, or 0 for an event of several probes, no path
// pointer), since the tracepoint id it was
// opened with is removed after the recording and perf cannot read
// tracepoint events without the tracing data hwprof does not write. ok is
// false for any other attr, or when the kernel has no uprobe PMU.
func FileAttr(a perf.Attr) (perf.Attr, bool) {
	if a.Type != perf.TypeTracepoint {
		return a, false
	}
	off, ok := probeOf.Load(a.Config)
	if !ok {
		return a, false
	}
	t, err := event.PMUType("uprobe")
	if err != nil {
		return a, false
	}
	a.Type, a.Config, a.Config1, a.Config2 = t, 0, 0, off.(uint64)
	return a, true
}
