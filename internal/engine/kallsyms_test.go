package engine

import (
	"encoding/binary"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hwprof/hwprof/buildid"
	"github.com/hwprof/hwprof/ccmap"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/perfdata"
	"github.com/hwprof/hwprof/profile"
	"github.com/hwprof/hwprof/symbolize"
)

// kallsymsText is the kallsyms of the synthetic recordings' kernel.
const kallsymsText = "ffffffff81000000 T _text\n" +
	"ffffffff81001000 T do_one_initcall\n" +
	"ffffffff81002000 t kernel_leaf\n" +
	"ffffffffc0000100 t nft_do_chain\t[nf_tables]\n"

// writeModeFile writes a recording of cpu-clock samples (IP, TID, TIME,
// PERIOD), each taken in the cpumode of its header's misc (kernel: 1,
// user: 2) at ip, made on the kernel osRelease of host host.
func writeModeFile(t *testing.T, osRelease, host string, samples []struct {
	misc uint16
	ip   uint64
}) string {
	t.Helper()
	return writeModeFileAt(t, perfdata.Features{OSRelease: osRelease, Hostname: host}, 0xffffffff81000000, samples)
}

// writeModeFileAt is writeModeFile with the header's features f and the
// kernel's text at kbase.
func writeModeFileAt(t *testing.T, f perfdata.Features, kbase uint64, samples []struct {
	misc uint16
	ip   uint64
}) string {
	t.Helper()
	st := perf.SampleIP | perf.SampleTID | perf.SampleTime | perf.SamplePeriod
	path := filepath.Join(t.TempDir(), "mode.data")
	w, err := perfdata.Create(path, []perfdata.EventAttr{{
		Attr: perf.Attr{Type: perf.TypeSoftware, Config: perf.SWCPUClock, SamplePeriod: 1000,
			SampleType: st, Flags: perf.FlagSampleIDAll},
		IDs: []uint64{11}, Name: "cpu-clock",
	}})
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	// the kernel's map, as perf synthesizes it: pid -1, its text mapped at
	// its own address; then the sample_id trailer (TID, TIME)
	var mm []byte
	mm = le.AppendUint32(mm, uint32(perf.RecordMmap))
	mm = le.AppendUint16(mm, perf.MiscKernel)
	mm = le.AppendUint16(mm, 0) // size, below
	mm = le.AppendUint32(mm, ^uint32(0))
	mm = le.AppendUint32(mm, 0)
	mm = le.AppendUint64(mm, kbase)
	mm = le.AppendUint64(mm, 0x2000000)
	mm = le.AppendUint64(mm, kbase)
	mm = append(mm, "[kernel.kallsyms]_text\x00\x00"...) // 24 bytes: 8-byte aligned
	mm = le.AppendUint32(mm, ^uint32(0))
	mm = le.AppendUint32(mm, ^uint32(0))
	mm = le.AppendUint64(mm, 0)
	le.PutUint16(mm[6:], uint16(len(mm)))
	if err := w.WriteRecord(mm); err != nil {
		t.Fatal(err)
	}
	for i, s := range samples {
		rec := make([]byte, 8+4*8)
		le.PutUint32(rec[0:], uint32(perf.RecordSample))
		le.PutUint16(rec[4:], s.misc)
		le.PutUint16(rec[6:], uint16(len(rec)))
		le.PutUint64(rec[8:], s.ip)
		le.PutUint32(rec[16:], 100)
		le.PutUint32(rec[20:], 100)
		le.PutUint64(rec[24:], uint64(1000+i))
		le.PutUint64(rec[32:], 1000)
		if err := w.WriteRecord(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(f); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestKallsymsReadForKernelSamples checks that kallsyms is read only for
// a recording with samples taken in the kernel, once, started by the
// first of them while the records are read (with SiteLines, when the
// kernel's addresses are resolved), and that it names them; a recording
// of another kernel never reads it.
func TestKallsymsReadForKernelSamples(t *testing.T) {
	rel, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		t.Skipf("the running kernel's release is unknown: %v", err)
	}
	host, err := os.Hostname()
	if err != nil {
		t.Skipf("the host name is unknown: %v", err)
	}
	release := strings.TrimSpace(string(rel))
	symfs := t.TempDir()
	if err := os.MkdirAll(filepath.Join(symfs, "proc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(symfs, "proc", "kallsyms"), []byte(kallsymsText), 0o644); err != nil {
		t.Fatal(err)
	}
	type sample = struct {
		misc uint16
		ip   uint64
	}
	user := sample{perf.MiscUser, 0x401000}
	kernel := sample{perf.MiscKernel, 0xffffffff81001010}
	guest := sample{perf.MiscGuestKernel, 0xffffffff81002010}
	names := func(p *profile.Profile) map[string]bool {
		m := map[string]bool{}
		for _, f := range p.Funcs {
			m[f.Name] = true
		}
		return m
	}
	for _, tt := range []struct {
		name      string
		release   string
		samples   []sample
		siteLines bool
		reads     []bool // the reads, preload or not
		named     []string
	}{
		{"user samples", release, []sample{user, user, user}, false, nil, nil},
		{"a kernel sample", release, []sample{user, user, kernel, user, kernel}, false, []bool{true}, []string{"do_one_initcall"}},
		{"a guest kernel sample", release, []sample{user, guest}, false, []bool{true}, []string{"kernel_leaf"}},
		{"site lines", release, []sample{user, kernel}, true, []bool{false}, []string{"do_one_initcall"}},
		{"another kernel", release + "-other", []sample{user, kernel}, false, nil, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := writeModeFile(t, tt.release, host, tt.samples)
			var mu sync.Mutex
			var reads []bool
			p, err := load(path, LoadOptions{SymFS: symfs, SiteLines: tt.siteLines}, testOptions{
				kallsymsRead: func(preload bool) {
					mu.Lock()
					defer mu.Unlock()
					reads = append(reads, preload)
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(reads, tt.reads) {
				t.Errorf("kallsyms reads (preloading or not) %v, want %v", reads, tt.reads)
			}
			got := names(p)
			for _, n := range tt.named {
				if !got[n] {
					t.Errorf("no function %s among %v", n, got)
				}
			}
			for _, n := range []string{"do_one_initcall", "kernel_leaf"} {
				if got[n] && !strings.Contains(strings.Join(tt.named, " "), n) {
					t.Errorf("function %s named: kallsyms read for %v", n, tt.samples)
				}
			}
		})
	}
}

// TestKallsymsRelocated checks that a kallsyms taken when the kernel was
// elsewhere (another boot: KASLR) names the recording's kernel addresses
// by the move of its reference symbol (_text) (modules stay: see
// symbolize's TestKallsymsRelocate).
func TestKallsymsRelocated(t *testing.T) {
	// the kallsyms saved for the recording's kernel build-id in a debug
	// directory, as perf's build-id cache holds it
	id, err := buildid.New([]byte{0x4a, 0x5a, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18})
	if err != nil {
		t.Fatal(err)
	}
	debug := t.TempDir()
	saved := filepath.Join(debug, symbolize.KernelPath, id.String())
	if err := os.MkdirAll(saved, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(saved, "kallsyms"), []byte(kallsymsText), 0o644); err != nil {
		t.Fatal(err)
	}
	feats := perfdata.Features{BuildIDs: []perfdata.BuildID{{PID: -1, Misc: perf.MiscKernel, ID: id, Path: symbolize.KernelPath}}}
	type sample = struct {
		misc uint16
		ip   uint64
	}
	for _, tt := range []struct {
		name  string
		kbase uint64
	}{
		{"same place", 0xffffffff81000000},
		{"moved up", 0xffffffff9a200000},
		{"moved down", 0xffffffff80200000},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := writeModeFileAt(t, feats, tt.kbase, []sample{
				{perf.MiscKernel, tt.kbase + 0x1010}, // do_one_initcall+0x10
				{perf.MiscKernel, tt.kbase + 0x2004}, // kernel_leaf+4
				{perf.MiscKernel, tt.kbase + 0x2008},
			})
			for _, siteLines := range []bool{false, true} { // For (some addresses) and All
				p, err := load(path, LoadOptions{DebugDirs: []string{debug}, SiteLines: siteLines}, testOptions{})
				if err != nil {
					t.Fatal(err)
				}
				self := map[string]uint64{}
				for _, f := range p.Map.Functions(ccmap.Self) {
					self[p.Funcs[f.Func].Name] += f.Self
				}
				want := map[string]uint64{"do_one_initcall": 1000, "kernel_leaf": 2000}
				if !maps.Equal(self, want) {
					t.Errorf("site lines %v: self weight by function %v, want %v", siteLines, self, want)
				}
			}
		})
	}
}
