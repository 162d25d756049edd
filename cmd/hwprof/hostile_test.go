package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hwprof/hwprof/buildid"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/perfdata"
	"github.com/hwprof/hwprof/perf/synth"
	"github.com/hwprof/hwprof/symbolize"
)

// The hostile recording's process and addresses: a good object (tiny.elf,
// samples in its function leaf), a second object whose file the test
// makes hostile (samples where tiny.elf has _start: a name the reports
// show only if they read a file they should not), JIT code named by the
// process's perf map, and the kernel.
const (
	hostilePID    = 4343
	hostileGood   = 0x400000
	hostileObj    = 0x500000
	hostileJIT    = 0x7f0000000000
	hostileKernel = 0xffffffff81000000
	hostileGoodAt = "/opt/good/tiny"
	hostileObjAt  = "/opt/hostile/prog"
	// hostileKernelID is the kernel build-id of the build-id cache
	// kind: no running kernel has it.
	hostileKernelID = "c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00"
)

// A hostileKind is one kind of file a recording leads hwprof to open.
type hostileKind struct {
	name string
	// at is where the file is looked for, under the test's directory
	// (the symfs, or the debug directory)
	at string
	// outside is a good file of the kind, out of every root: what a
	// symbolic link out of the root leads to
	outside string
	// kernel: the recording names its kernel by build-id (the build-id
	// cache kind), else it was made on this kernel (release and host)
	kernelID bool
	// the names the reports show when the file is read, and must show
	// when it is skipped (the rest of the recording)
	shows, skipped string
}

var hostileKinds = []hostileKind{
	{name: "object", at: "symfs" + hostileObjAt, outside: "prog", shows: "_start"},
	{name: "debug-file", at: "symfs/usr/lib/debug/.build-id/a0/4cdf0e49026fe7d73d04855a1f1cfa58d3008e.debug", outside: "tiny.debug"},
	{name: "perf-map", at: "symfs" + symbolize.PerfMapPath(hostilePID), outside: "perf.map", shows: "outside_jit", skipped: "jit_hot"},
	{name: "kallsyms", at: "symfs/proc/kallsyms", outside: "kallsyms", shows: "outside_kernel", skipped: "do_syscall_64"},
	{name: "build-id-cache", at: "debug/[kernel.kallsyms]/" + hostileKernelID + "/kallsyms", outside: "kallsyms", kernelID: true, shows: "outside_kernel"},
}

// A hostileVariant makes the file at path hostile (outside is the good
// file out of the root); it returns the object name the recording gives
// the second object when it changes it, and what the one warning says.
type hostileVariant struct {
	name string
	make func(t *testing.T, k hostileKind, tmp, path, outside string) (objName string)
	why  string
}

var hostileVariants = []hostileVariant{
	{"fifo", func(t *testing.T, _ hostileKind, _, path, _ string) string {
		check(t, unix.Mkfifo(path, 0o644))
		return ""
	}, "FIFO"},
	{"device", func(t *testing.T, _ hostileKind, _, path, _ string) string {
		check(t, unix.Mknod(path, unix.S_IFCHR|0o644, int(unix.Mkdev(1, 3)))) // /dev/null
		return ""
	}, "device"},
	{"symlink-out", func(t *testing.T, _ hostileKind, _, path, outside string) string {
		check(t, os.Symlink(outside, path))
		return ""
	}, "leads out of"},
	{"dotdot", func(t *testing.T, k hostileKind, tmp, path, outside string) string {
		if k.name == "object" { // the recording names a path that climbs out of --symfs
			return "/../outside/prog"
		}
		rel, err := filepath.Rel(filepath.Dir(path), outside)
		check(t, err)
		check(t, os.Symlink(rel, path))
		return ""
	}, "out of"},
	{"directory", func(t *testing.T, _ hostileKind, _, path, _ string) string {
		check(t, os.Mkdir(path, 0o755))
		return ""
	}, "directory"},
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestHostileFiles reads recordings that lead hwprof to files it must not
// read: for each kind of file (an object an MMAP record names, a debug
// file, a perf map, a kallsyms copy under --symfs, a kallsyms in the
// build-id cache), a FIFO, a device, a symbolic link out of the root, a
// path that climbs out of it with .., and a directory. report and script
// must finish quickly (a FIFO used to hang them), skip the file with one
// warning that names it and says why, exit as for a missing file, and
// still name everything else.
func TestHostileFiles(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("not root: making a device node needs CAP_MKNOD")
	}
	for _, k := range hostileKinds {
		for _, v := range hostileVariants {
			t.Run(k.name+"/"+v.name, func(t *testing.T) {
				t.Parallel()
				tmp := t.TempDir()
				path := filepath.Join(tmp, k.at)
				outside := filepath.Join(tmp, "outside", k.outside)
				data, args := hostileSetup(t, tmp, k, func() string { return v.make(t, k, tmp, path, outside) })
				display := path
				if k.name == "object" && v.name == "dotdot" {
					display = filepath.Join(tmp, "symfs") + "/../outside/prog"
				}
				for _, cmd := range []string{"report", "script"} {
					r := hwprofWithin(t, 20*time.Second, append([]string{cmd, "-i", data}, args...)...)
					checkHostile(t, cmd, r, k, display, hostileWhy(k, v))
				}
			})
		}
	}
}

// TestHostilePerfMap: a perf map /tmp/perf-PID.map anyone may write is read
// only when it is a regular file of its own (not a symbolic link, even to
// a file in the root) that belongs to root or to the user running hwprof,
// as perf requires.
func TestHostilePerfMap(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("not root: cannot give the map to another user")
	}
	k := hostileKinds[2]
	for _, tc := range []struct {
		name string
		make func(t *testing.T, path string)
		why  string
	}{
		{"symlink-in-root", func(t *testing.T, path string) {
			real := filepath.Join(filepath.Dir(path), "real.map")
			check(t, os.WriteFile(real, []byte("7f0000001000 100 linked_jit\n"), 0o644))
			check(t, os.Symlink(real, path))
		}, "symbolic link"},
		{"other-owner", func(t *testing.T, path string) {
			check(t, os.WriteFile(path, []byte("7f0000001000 100 planted_jit\n"), 0o644))
			check(t, os.Chown(path, 65534, 65534))
		}, "owned by"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tmp := t.TempDir()
			path := filepath.Join(tmp, k.at)
			data, args := hostileSetup(t, tmp, k, func() string { tc.make(t, path); return "" })
			for _, cmd := range []string{"report", "script"} {
				r := hwprofWithin(t, 20*time.Second, append([]string{cmd, "-i", data}, args...)...)
				checkHostile(t, cmd, r, k, path, tc.why)
				for _, planted := range []string{"linked_jit", "planted_jit"} {
					if strings.Contains(r.stdout, planted) {
						t.Errorf("%s: names JIT code %s from a map it must not read", cmd, planted)
					}
				}
			}
		})
	}
}

// hostileWhy is what the warning for a variant of a kind says.
func hostileWhy(k hostileKind, v hostileVariant) string {
	switch {
	case k.name == "object" && v.name == "dotdot":
		return "has a .. component"
	case k.name == "perf-map" && (v.name == "symlink-out" || v.name == "dotdot"):
		return "a symbolic link, not followed" // a perf map is never a link
	}
	return v.why
}

// checkHostile checks what report or script did with one hostile file.
func checkHostile(t *testing.T, cmd string, r result, k hostileKind, display, why string) {
	t.Helper()
	if r.code != 0 {
		t.Errorf("%s: exit %d, want 0 (as for a missing file)\n%s", cmd, r.code, r.stderr)
	}
	var lines []string
	for l := range strings.Lines(r.stderr) {
		if strings.Contains(l, display) {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "skipped") || !strings.Contains(lines[0], why) {
		t.Errorf("%s: want one warning that skips %s (%s), have\n%s", cmd, display, why, r.stderr)
	}
	for _, want := range []string{"leaf", "jit_hot", "do_syscall_64"} {
		if want != k.skipped && !(k.kernelID && want == "do_syscall_64") && !strings.Contains(r.stdout, want) {
			t.Errorf("%s: %s is missing: the rest of the recording must still be named\n%s", cmd, want, r.stdout)
		}
	}
	if k.shows != "" && strings.Contains(r.stdout, k.shows) {
		t.Errorf("%s: shows %s: it read a file it must not", cmd, k.shows)
	}
}

// hwprofWithin is hwprof that fails the test when the command does not end
// within d (the command is left blocked: a FIFO opened for reading waits
// for a writer forever).
func hwprofWithin(t *testing.T, d time.Duration, args ...string) result {
	t.Helper()
	done := make(chan result, 1)
	go func() { done <- hwprof(t, args...) }()
	select {
	case r := <-done:
		return r
	case <-time.After(d):
		t.Fatalf("hwprof %s did not end within %v", strings.Join(args, " "), d)
		return result{}
	}
}

// hostileSetup writes the good files of every kind under tmp (the symfs,
// the debug directory, the files out of both), calls makeHostile once
// the hostile file's directory exists (it returns the name the recording
// gives the second object, "" for the usual one) and writes the
// recording; it returns the recording and the options that find its
// files.
func hostileSetup(t *testing.T, tmp string, k hostileKind, makeHostile func() string) (string, []string) {
	t.Helper()
	tiny, stripped := tinyELF(t)
	perfMap := "7f0000001000 100 jit_hot\n7f0000002000 40 jit_stub\n"
	kallsyms := "ffffffff81000000 T _text\nffffffff81001000 T do_syscall_64\nffffffff81002000 T schedule\nffffffff81003000 T _etext\n"
	files := map[string]string{
		"symfs" + hostileGoodAt:                     stripped,
		"symfs" + hostileObjAt:                      stripped,
		"symfs" + symbolize.PerfMapPath(hostilePID): perfMap,
		"symfs/proc/kallsyms":                       kallsyms,
		"outside/prog":                              stripped,
		"outside/tiny.debug":                        tiny,
		"outside/perf.map":                          strings.ReplaceAll(perfMap, "jit_", "outside_jit_"),
		"outside/kallsyms":                          strings.ReplaceAll(kallsyms, " T ", " T outside_kernel_"),
	}
	for name, text := range files {
		p := filepath.Join(tmp, name)
		check(t, os.MkdirAll(filepath.Dir(p), 0o755))
		if p != filepath.Join(tmp, k.at) {
			check(t, os.WriteFile(p, []byte(text), 0o644))
		}
	}
	check(t, os.MkdirAll(filepath.Dir(filepath.Join(tmp, k.at)), 0o755))
	check(t, os.MkdirAll(filepath.Join(tmp, "debug"), 0o755))
	objName := makeHostile()
	if objName == "" {
		objName = hostileObjAt
	}
	data := filepath.Join(tmp, "hostile.data")
	writeHostileRecording(t, data, hostileRecording{pid: hostilePID, good: hostileGoodAt, objs: []string{objName}, kernelID: k.kernelID, local: !k.kernelID})
	return data, []string{"--symfs", filepath.Join(tmp, "symfs"), "--debug-dir", filepath.Join(tmp, "debug")}
}

// tinyELF returns symbolize's testdata/tiny.elf (leaf at 0x400110,
// _start at 0x400120), and a copy without DWARF (its .debug_info renamed),
// whose debug file is looked for: by build-id, in /usr/lib/debug.
func tinyELF(t *testing.T) (tiny, stripped string) {
	b, err := os.ReadFile(filepath.Join("..", "..", "symbolize", "testdata", "tiny.elf"))
	check(t, err)
	return string(b), strings.ReplaceAll(string(b), ".debug_info\x00", ".nodbg_info\x00")
}

// TestHostileSystemFiles reads, without --symfs, a recording that maps
// /dev/zero and /proc/self/mem as code and whose JIT process has a FIFO for
// its perf map in /tmp (anyone can make one for a PID they expect root to
// profile): report and script skip each with one warning and name the rest.
func TestHostileSystemFiles(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	_, stripped := tinyELF(t)
	good := filepath.Join(tmp, "good", "tiny")
	check(t, os.MkdirAll(filepath.Dir(good), 0o755))
	check(t, os.WriteFile(good, []byte(stripped), 0o755))
	// above the kernel's largest pid_max (2^22): no process has it
	pid := uint32(1<<22 + 1 + os.Getpid()%(1<<20))
	perfMap := symbolize.PerfMapPath(int(pid))
	check(t, unix.Mkfifo(perfMap, 0o644))
	t.Cleanup(func() { os.Remove(perfMap) })
	data := filepath.Join(tmp, "system.data")
	writeHostileRecording(t, data, hostileRecording{pid: pid, good: good, objs: []string{"/dev/null", "/proc/self/mem"}})
	for _, cmd := range []string{"report", "script"} {
		r := hwprofWithin(t, 20*time.Second, cmd, "-i", data)
		if r.code != 0 {
			t.Errorf("%s: exit %d, want 0 (as for a missing file)\n%s", cmd, r.code, r.stderr)
		}
		for file, why := range map[string]string{"/dev/null": "character device", "/proc/self/mem": "procfs", perfMap: "FIFO"} {
			if n := strings.Count(r.stderr, "skipped "+file+": "); n != 1 || !strings.Contains(r.stderr, why) {
				t.Errorf("%s: %d warnings that skip %s (%s), want 1:\n%s", cmd, n, file, why, r.stderr)
			}
		}
		if !strings.Contains(r.stdout, "leaf") {
			t.Errorf("%s: the good object's leaf is missing:\n%s", cmd, r.stdout)
		}
	}
}

// hostileRecording is what writeHostileRecording writes: process pid
// maps the good object (tiny.elf without DWARF) at good, the objects objs
// (the first at hostileObj, each next 1 MiB above), and JIT code (named by
// its perf map), and has samples in each; the kernel it was made on is
// named by build-id hostileKernelID (kernelID), else by this machine's
// release and host name (local), else not at all.
type hostileRecording struct {
	pid             uint32
	good            string
	objs            []string
	kernelID, local bool
}

// writeHostileRecording writes the recording h at path.
func writeHostileRecording(t *testing.T, path string, h hostileRecording) {
	t.Helper()
	st := perf.SampleIP | perf.SampleTID | perf.SampleTime | perf.SampleCPU | perf.SamplePeriod | perf.SampleCallchain
	attr := perf.Attr{Type: perf.TypeSoftware, Config: perf.SWCPUClock, SamplePeriod: 10000, SampleType: st,
		Flags: perf.FlagSampleIDAll | perf.FlagMmap2}
	w, err := perfdata.Create(path, []perfdata.EventAttr{{Attr: attr, IDs: []uint64{1}, Name: "cpu-clock"}})
	check(t, err)
	rec := func(b []byte) { check(t, w.WriteRecord(b)) }
	pid := h.pid
	sid := synth.SampleID{PID: pid, TID: pid, Time: 1}
	rx := uint32(unix.PROT_READ | unix.PROT_EXEC)
	rec(synth.AppendComm(nil, synth.Thread{PID: int(pid), TID: int(pid), Comm: "hostile"}, st, sid))
	rec(synth.AppendKernelMmap(nil, synth.KernelText{Start: hostileKernel, End: hostileKernel + 0x3000, RefSym: "_text", RefAddr: hostileKernel},
		st, synth.SampleID{PID: ^uint32(0), TID: ^uint32(0), Time: 1}))
	leaf := uint64(hostileGood + 0x112)
	maps := []synth.Mapping{
		{Start: hostileGood, End: hostileGood + 0x1000, Prot: rx, Flags: unix.MAP_PRIVATE, Path: h.good},
		{Start: hostileJIT, End: hostileJIT + 0x10000, Prot: rx, Flags: unix.MAP_PRIVATE, Path: "//anon"},
	}
	stacks := [][]uint64{
		{perf.ContextUser, leaf},
		{perf.ContextUser, hostileJIT + 0x1010, leaf + 1},
		{perf.ContextKernel, hostileKernel + 0x1010, perf.ContextUser, leaf},
	}
	for i, obj := range h.objs {
		at := uint64(hostileObj + i<<20)
		maps = append(maps, synth.Mapping{Start: at, End: at + 0x1000, Prot: rx, Flags: unix.MAP_PRIVATE, Path: obj})
		stacks = append(stacks, []uint64{perf.ContextUser, at + 0x122})
	}
	for _, m := range maps {
		rec(synth.AppendMmap2(nil, int(pid), int(pid), m, st, sid))
	}
	for i := range 5 * len(stacks) {
		rec(syntheticSample(stacks[i%len(stacks)], pid, 1_000_000_000+uint64(i)*1_000_000, 0, 10000))
	}
	var f perfdata.Features
	switch {
	case h.kernelID:
		id, err := buildid.Parse(hostileKernelID)
		check(t, err)
		f.BuildIDs = []perfdata.BuildID{{PID: -1, Misc: perf.MiscKernel, Path: symbolize.KernelPath, ID: id}}
	case h.local:
		var u unix.Utsname
		check(t, unix.Uname(&u))
		f.OSRelease = unix.ByteSliceToString(u.Release[:])
		f.Hostname, err = os.Hostname()
		check(t, err)
	}
	check(t, w.Close(f))
}
