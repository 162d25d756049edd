package main

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSIGKILLRecovered: a recording whose hwprof is SIGKILLed 0.2 s, 0.5 s
// and 1 s after its first sample reached the file (before its first
// checkpoint, at 1 s) still gives report, dump and script its samples,
// with a warning that it was cut short and exit status 1 when records lie
// past the header's data section (a checkpoint may just have covered
// them all: then exit 0).
func TestSIGKILLRecovered(t *testing.T) {
	t.Parallel()
	needPerfEvents(t)
	samplesRE := regexp.MustCompile(`(?m)^samples:\s+(\d+)`)
	for _, d := range []time.Duration{200 * time.Millisecond, 500 * time.Millisecond, time.Second} {
		out := filepath.Join(t.TempDir(), "kill.data")
		cmd, _ := startHwprof(t, out, time.Minute) // killed long before it ends
		waitForFile(t, out)                        // the events are open
		waitForSample(t, out)                      // on a loaded machine the program may take long to start
		time.Sleep(d)
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // hwprof and the program
		cmd.Wait()

		// Records past the header's data section: a checkpoint may just
		// have covered them all (then nothing was cut).
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		cut := binary.LittleEndian.Uint64(b[40:])+binary.LittleEndian.Uint64(b[48:]) < uint64(len(b))
		rep := hwprof(t, "report", "-i", out)
		m := samplesRE.FindStringSubmatch(rep.stdout)
		n := 0
		if m != nil {
			n, _ = strconv.Atoi(m[1])
		}
		t.Logf("killed after %v: report exit %d, %d samples, cut short %v", d, rep.code, n, cut)
		if n == 0 {
			t.Errorf("killed after %v: report finds no samples:\n%s\n%s", d, rep.stdout, rep.stderr)
		}
		if cut != strings.Contains(rep.stderr, "cut short") {
			t.Errorf("killed after %v: records past the header's data section: %v; report stderr %q", d, cut, rep.stderr)
		}
		dump := hwprof(t, "dump", "-i", out)
		if strings.Count(dump.stdout, " SAMPLE ") == 0 || cut != strings.Contains(dump.stderr, "cut short") {
			t.Errorf("killed after %v: dump prints %d samples, stderr %q; want samples, and a cut-short warning if cut (%v)", d, strings.Count(dump.stdout, " SAMPLE "), dump.stderr, cut)
		}
		script := hwprof(t, "script", "-i", out)
		if script.stdout == "" || cut != strings.Contains(script.stderr, "cut short") {
			t.Errorf("killed after %v: script prints %d bytes, stderr %q; want samples, and a cut-short warning if cut (%v)", d, len(script.stdout), script.stderr, cut)
		}
		// A recording cut short lost what its writer did not write: every
		// reader exits 1 (after printing what it read); else 0.
		want := 0
		if cut {
			want = 1
		}
		for _, r := range []struct {
			name string
			code int
		}{{"report", rep.code}, {"dump", dump.code}, {"script", script.code}} {
			if r.code != want {
				t.Errorf("killed after %v: %s exits %d, want %d (cut short: %v)", d, r.name, r.code, want, cut)
			}
		}
	}
}

// waitForSample waits until a SAMPLE record is in the data section of the
// perf.data file at path (read as the kernel's records: a header of type,
// misc and size, PERF_RECORD_SAMPLE being 9), written since Create.
func waitForSample(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil && len(b) >= 56 {
			for off := binary.LittleEndian.Uint64(b[40:]); off+8 <= uint64(len(b)); {
				typ, size := binary.LittleEndian.Uint32(b[off:]), binary.LittleEndian.Uint16(b[off+6:])
				if typ == 9 && off+uint64(size) <= uint64(len(b)) {
					return
				}
				if size == 0 {
					break
				}
				off += uint64(size)
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no sample reached %s within 30 s", path)
}
