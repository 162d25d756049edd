package symbolize

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/buildid"
)

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestSavedKallsyms(t *testing.T) {
	const id = "e4f18d9dc1d0e6fc2b17e93e885a647b3c0a6fc1"
	perfLayout := t.TempDir() // perf record's: [kernel.kallsyms]/<id>/kallsyms
	writeFile(t, filepath.Join(perfLayout, KernelPath, id, "kallsyms"), "ffffffff81000000 T _text\n")
	linkLayout := t.TempDir() // .build-id/xx/rest/kallsyms only
	writeFile(t, filepath.Join(linkLayout, ".build-id", id[:2], id[2:], "kallsyms"), "ffffffff81000000 T _text\n")
	empty := t.TempDir()

	if got, want := (Options{}).savedKallsyms(mustID(t, id), []string{empty, perfLayout}), filepath.Join(perfLayout, KernelPath, id, "kallsyms"); got != want {
		t.Errorf("perf's layout: %q, want %q", got, want)
	}
	if got, want := (Options{}).savedKallsyms(mustID(t, id), []string{"", linkLayout}), filepath.Join(linkLayout, ".build-id", id[:2], id[2:], "kallsyms"); got != want {
		t.Errorf(".build-id layout: %q, want %q", got, want)
	}
	// An old perf pads build-ids to 20 bytes; a 16-byte one is found.
	short := id[:32]
	writeFile(t, filepath.Join(empty, KernelPath, short, "kallsyms"), "ffffffff81000000 T _text\n")
	if got := (Options{}).savedKallsyms(mustID(t, short+"00000000"), []string{empty}); got == "" {
		t.Errorf("padded build-id: not found")
	}
	if got := (Options{}).savedKallsyms(mustID(t, "00112233445566778899aabbccddeeff00112233"), []string{perfLayout, linkLayout}); got != "" {
		t.Errorf("another build-id: found %q", got)
	}
	if got := (Options{}).savedKallsyms(buildid.ID{}, []string{perfLayout}); got != "" {
		t.Errorf("no build-id: found %q", got)
	}
}

func TestFindKallsyms(t *testing.T) {
	const other = "00112233445566778899aabbccddeeff00112233"
	cache := t.TempDir()
	t.Setenv("PERF_BUILDID_DIR", cache)
	if got := PerfBuildIDDir(); got != cache {
		t.Fatalf("PerfBuildIDDir %q, want $PERF_BUILDID_DIR %q", got, cache)
	}

	// Not saved and not this kernel: none, and why.
	p, why := FindKallsyms(Options{}, mustID(t, other), "", "")
	if p != "" || !strings.Contains(why, other) {
		t.Errorf("unknown kernel: %q, %q; want none and why naming the build-id", p, why)
	}
	// Saved in perf's cache.
	saved := filepath.Join(cache, KernelPath, other, "kallsyms")
	writeFile(t, saved, "ffffffff81000000 T _text\n")
	if p, _ := FindKallsyms(Options{}, mustID(t, other), "", ""); p != saved {
		t.Errorf("saved in perf's cache: %q, want %q", p, saved)
	}
	// --debug-dir is looked in first.
	dd := t.TempDir()
	ddSaved := filepath.Join(dd, KernelPath, other, "kallsyms")
	writeFile(t, ddSaved, "ffffffff81000000 T _text\n")
	if p, _ := FindKallsyms(Options{DebugDirs: []string{dd}}, mustID(t, other), "", ""); p != ddSaved {
		t.Errorf("saved in a debug dir: %q, want %q", p, ddSaved)
	}
	// An explicit kallsyms wins.
	if p, _ := FindKallsyms(Options{Kallsyms: "k.txt", DebugDirs: []string{dd}}, mustID(t, other), "", ""); p != "k.txt" {
		t.Errorf("explicit: %q", p)
	}
	// A recording of another release without a build-id.
	if p, why := FindKallsyms(Options{}, buildid.ID{}, "0.0.0-nowhere", ""); p != "" || !strings.Contains(why, "0.0.0-nowhere") {
		t.Errorf("other release: %q, %q", p, why)
	}
	if p, why := FindKallsyms(Options{}, buildid.ID{}, "", "no-such-host.invalid"); p != "" || !strings.Contains(why, "no-such-host.invalid") {
		t.Errorf("other host: %q, %q", p, why)
	}
	// This kernel: /proc/kallsyms.
	if id, err := buildid.Kernel(); err == nil && !id.IsZero() {
		if p, why := FindKallsyms(Options{}, id, "", ""); p != "/proc/kallsyms" {
			t.Errorf("this kernel (build-id %s): %q, %q; want /proc/kallsyms", id, p, why)
		}
	} else {
		t.Logf("running kernel's build-id unknown (%v): local case not checked", err)
	}
	// Nothing recorded (old pipe-mode files): not taken for this kernel.
	if p, why := FindKallsyms(Options{}, buildid.ID{}, "", ""); p != "" || !strings.Contains(why, "does not say which kernel") {
		t.Errorf("nothing recorded: %q, %q; want none, and why", p, why)
	}
}

// TestParseKallsymsLayouts checks that the fixed-column reading of the
// kernel's own layout gives what splitting at blanks gives.
func TestParseKallsymsLayouts(t *testing.T) {
	text := "ffffffff81000000 T _stext\n" +
		"ffffffff81001000 T do_one_initcall\n" +
		"ffffffff81001200 t trace_initcall_start_cb\n" +
		"ffffffff81001300 d some_data\n" +
		"ffffffff81002000 W weak_text\n" +
		"ffffffffc0000100 t nft_do_chain\t[nf_tables]\n" +
		"ffffffffc0211000 t ftrace_trampoline\t[__builtin__ftrace]\n"
	if data, err := os.ReadFile("/proc/kallsyms"); err == nil && len(data) > 0 {
		text = string(data)
	}
	// The same lines with other blanks: read by splitting.
	var odd strings.Builder
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		odd.WriteString("  " + strings.Join(strings.Fields(line), " \t ") + "\n")
	}
	fast, err := parseKallsyms(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	slow, err := parseKallsyms(strings.NewReader(odd.String()))
	if err != nil {
		t.Fatal(err)
	}
	if fast.Len() == 0 || !reflect.DeepEqual(fast.table.syms, slow.table.syms) {
		t.Errorf("fixed columns give %d symbols, splitting %d, or they differ", fast.Len(), slow.Len())
	}
}

// TestKallsymsFor checks that keeping only the symbols of the addresses
// asked for names every address as the whole table does: addresses in
// every symbol's first and last byte, between, below the first and past
// the last, in modules, at aliases, in the lines' order and shuffled.
func TestKallsymsFor(t *testing.T) {
	texts := map[string]string{}
	if data, err := os.ReadFile(filepath.Join("testdata", "kallsyms.txt")); err == nil {
		texts["testdata"] = string(data)
	}
	if data, err := os.ReadFile("/proc/kallsyms"); err == nil && len(data) > 0 && !strings.HasPrefix(string(data), "0000000000000000") {
		texts["proc"] = string(data)
	}
	for name, text := range texts {
		t.Run(name, func(t *testing.T) {
			full, err := parseKallsyms(strings.NewReader(text))
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.SplitAfter(text, "\n")
			r := rand.New(rand.NewPCG(1, 2))
			shuffled := slices.Clone(lines)
			r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			for i := range shuffled {
				if !strings.HasSuffix(shuffled[i], "\n") {
					shuffled[i] += "\n"
				}
			}
			var addrs []addrspace.ObjAddr
			syms := full.table.syms
			for _, k := range []int{0, 1, 2, len(syms) / 3, len(syms) / 2, len(syms) - 2, len(syms) - 1} {
				if k < 0 || k >= len(syms) {
					continue
				}
				s := syms[k]
				addrs = append(addrs, addrspace.ObjAddr(s.start), addrspace.ObjAddr(s.start+1), addrspace.ObjAddr(s.start-1), addrspace.ObjAddr(s.start+0x100000))
				if k+1 < len(syms) {
					addrs = append(addrs, addrspace.ObjAddr(syms[k+1].start-1))
				}
			}
			for range 300 {
				s := syms[r.IntN(len(syms))]
				addrs = append(addrs, addrspace.ObjAddr(s.start+uint64(r.IntN(64))))
			}
			addrs = append(addrs, 0, 1, ^addrspace.ObjAddr(0))
			for _, order := range []string{strings.Join(lines, ""), strings.Join(shuffled, "")} {
				full, err := parseKallsyms(strings.NewReader(order)) // aliases: the line read last wins
				if err != nil {
					t.Fatal(err)
				}
				some, err := kallsymsFor([]byte(order), addrs)
				if err != nil {
					t.Fatal(err)
				}
				if some.Len() == 0 || some.Len() > len(addrs) {
					t.Fatalf("%d symbols kept for %d addresses", some.Len(), len(addrs))
				}
				want, got := full.Symbolize(addrs), some.Symbolize(addrs)
				for i, a := range addrs {
					w, g := want[i].Symbol, got[i].Symbol
					if (w == nil) != (g == nil) || w != nil && (w.Name.Raw != g.Name.Raw || w.Start != g.Start) {
						t.Fatalf("%#x: %+v, want %+v", a, g, w)
					}
					if full.Module(a) != some.Module(a) {
						t.Fatalf("%#x: module %q, want %q", a, some.Module(a), full.Module(a))
					}
				}
			}
		})
	}
	if _, err := kallsymsFor([]byte("0000000000000000 T _text\n"), []addrspace.ObjAddr{1}); !errors.Is(err, ErrKallsymsHidden) {
		t.Errorf("hidden addresses: %v", err)
	}
}
