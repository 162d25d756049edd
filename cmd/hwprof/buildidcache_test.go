package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/hwprof/hwprof/buildid"
	"github.com/hwprof/hwprof/internal/objcache"
	"github.com/hwprof/hwprof/internal/testenv"
)

// unusedC is a shared library nothing calls: mapped executable, never run.
const unusedC = `int unused_fn(int x) { return x * 3 + 1; }
`

// The build-id cache keeps the objects that had samples, not every
// object mapped: a program that spins in its own code and maps a shared
// library it never calls leaves its binary in the cache and not the
// library, recorded to a file (the samples read back at the end) as to a
// stream (-o -, the samples looked at as they are read).
func TestBuildIDCacheSampledOnly(t *testing.T) {
	t.Parallel()
	testenv.PerfEvents(t)
	gcc := testenv.Tool(t, "gcc")
	dir := t.TempDir()
	lib, bin := filepath.Join(dir, "libunused.so"), filepath.Join(dir, "hot")
	os.WriteFile(filepath.Join(dir, "unused.c"), []byte(unusedC), 0o644)
	os.WriteFile(filepath.Join(dir, "hot.c"), []byte(hiddenC), 0o644)
	for _, args := range [][]string{
		{"-O1", "-shared", "-fPIC", "-Wl,--build-id", "-o", lib, filepath.Join(dir, "unused.c")},
		{"-O1", "-fno-omit-frame-pointer", "-Wl,--build-id", "-o", bin, filepath.Join(dir, "hot.c"),
			"-Wl,--no-as-needed", "-L" + dir, "-lunused", "-Wl,-rpath," + dir},
	} {
		if out, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v\n%s", err, out)
		}
	}
	libID, err1 := buildid.Read(lib)
	binID, err2 := buildid.Read(bin)
	if err1 != nil || err2 != nil {
		t.Fatalf("build-ids: %v %v", err1, err2)
	}
	for _, out := range []string{filepath.Join(dir, "f.data"), "-"} {
		c := &objcache.Cache{Dir: filepath.Join(dir, "cache"+filepath.Base(out))}
		r := hwprofEnv(t, []string{"HWPROF_BUILDID_DIR=" + c.Dir}, "record", "-q", "-e", "cpu-clock", "-g", "-o", out, "--", bin, "300")
		if r.code != 0 {
			t.Fatalf("record -o %s: exit %d\n%s", out, r.code, r.stderr)
		}
		if !c.Has(binID) || c.Has(libID) {
			t.Errorf("record -o %s: cache holds the sampled program %v (want true), the library never run %v (want false)", out, c.Has(binID), c.Has(libID))
		}
	}
}
