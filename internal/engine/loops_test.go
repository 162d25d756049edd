package engine

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/ccmap"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/profile"
	"github.com/hwprof/hwprof/unwind"
)

// TestCyclePeriod: the shortest cycle repeated loopRepeats times at the
// end of the return addresses, or none.
func TestCyclePeriod(t *testing.T) {
	for _, tc := range []struct {
		name  string
		addrs []addrspace.Addr
		want  int
	}{
		{"self loop", []addrspace.Addr{1, 2, 3, 3, 3}, 1},
		{"two-frame ring", []addrspace.Addr{1, 5, 6, 5, 6, 5, 6}, 2},
		{"repeated twice only", []addrspace.Addr{1, 5, 6, 5, 6}, 0},
		{"no cycle", []addrspace.Addr{1, 2, 3, 4, 5, 6}, 0},
		{"empty", nil, 0},
	} {
		var ret []*unwind.Frame
		for _, a := range tc.addrs {
			ret = append(ret, &unwind.Frame{Addr: a, Kind: unwind.FrameReturn})
		}
		if got := cyclePeriod(ret); got != tc.want {
			t.Errorf("%s: period %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestFrameLoopSynthetic: a cut stack repeating mid's return address
// after its call to leaf cannot be real (mid sets up a frame pointer, so
// the frame above its return address is its own, and its caller would be
// mid's call to leaf, which reaches only leaf): broken. A cut stack
// repeating rec's call to itself is recursion: cut, not broken.
func TestFrameLoopSynthetic(t *testing.T) {
	p := buildStacksProgram(t)
	limit := int(defaultMaxStack)
	if lim, err := perf.ReadKernelLimits(); err == nil && lim.MaxStack != 0 {
		limit = int(lim.MaxStack)
	}
	repeat := func(ip, ra uint64, period uint64) stackSample {
		s := stackSample{chain: []uint64{ip}, period: period}
		for len(s.chain) < limit {
			s.chain = append(s.chain, ra)
		}
		return s
	}
	loop := repeat(p.syms["leaf"].Value+4, p.retMidLeaf, 7)
	recursion := repeat(p.syms["rec"].Value+4, p.retRecRec, 13)
	path := writeStacksFile(t, p, []stackSample{loop, recursion, loop})
	prof, err := load(path, LoadOptions{}, testOptions{inline: true, noFast: true, eachStack: true})
	if err != nil {
		t.Fatal(err)
	}
	st := prof.Recording.Stacks
	if st.Broken != 2 || st.BrokenWeight != 14 || st.Cut != 1 || st.CutWeight != 13 {
		t.Errorf("stacks %+v: want the two loops broken (weight 14), the recursion cut (13)", st)
	}
	var edges []string
	for _, e := range prof.Map.Edges(ccmap.Total) {
		edges = append(edges, prof.FuncName(e.Site.Caller)+"->"+prof.FuncName(e.Callee))
	}
	if want := []string{"rec->rec"}; !slices.Equal(edges, want) {
		t.Errorf("edges %q, want %q", edges, want)
	}
}

// loopsC is the live programs' source: a leaf that points its saved
// frame pointer at its own frame while it spins (the kernel's walk then
// repeats main's return address to the depth limit), recursion 300 deep,
// direct, mutual, through a tail call and through a function pointer. The
// leaf runs until the process has used half of argv[1] seconds of CPU
// time, the recursions until it has used all.
const loopsC = `
#include <stdlib.h>
#include <time.h>
static double cpu(void) {
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}
long looper(long n);
__asm__(".text\n.globl looper\n.type looper,@function\nlooper:\n"
	"push %rbp\nmov %rsp,%rbp\nsub $16,%rsp\n"
	"mov (%rbp),%rax\nmov %rax,-8(%rbp)\n" /* keep the caller's frame pointer */
	"mov %rbp,(%rbp)\n"                      /* the saved one points here */
	"1: dec %rdi\njnz 1b\n"
	"mov -8(%rbp),%rax\nmov %rax,(%rbp)\n"
	"leave\nret\n.size looper,.-looper\n");
volatile long sink;
__attribute__((noinline)) long spin(long n) { long s = 0; for (long i = 0; i < n; i++) s += i ^ sink; return s; }
/* the store after each call keeps gcc from turning the recursion into a loop */
__attribute__((noinline)) long deep(int n) { if (n == 0) return spin(20000); long r = deep(n - 1); sink = r; return r + 1; }
__attribute__((noinline)) long odd(int n);
__attribute__((noinline)) long even(int n) { if (n == 0) return spin(20000); long r = odd(n - 1); sink = r; return r + 2; }
__attribute__((noinline)) long odd(int n) { if (n == 0) return spin(20000); long r = even(n - 1); sink = r; return r + 3; }
/* taila's call to tailb returns to taila's frame: tailb jumps to taila */
__attribute__((noinline)) long tailb(int n);
__attribute__((noinline)) long taila(int n) { long r = n == 0 ? spin(20000) : tailb(n - 1); sink = r; return r + 1; }
__attribute__((noinline)) long tailb(int n) { sink = n; return taila(n); }
long (*volatile viaptr)(int);
__attribute__((noinline)) long indirect(int n) { if (n == 0) return spin(20000); long r = viaptr(n - 1); sink = r; return r + 1; }
int main(int argc, char **argv) {
	double limit = atof(argv[1]);
	viaptr = indirect;
	while (cpu() < limit / 2) sink += looper(1000000);
	while (cpu() < limit) sink += deep(300) + even(300) + indirect(300) + taila(300);
	return 0;
}
`

// TestFrameLoopLive records real programs with perf's frame-pointer
// callchains: stacks through a frame that points to itself are broken;
// deep recursion, direct, mutual, through a tail call and through a
// function pointer, is cut
// at the depth limit and never broken.
func TestFrameLoopLive(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	if _, err := exec.LookPath("perf"); err != nil {
		t.Skip("perf not installed")
	}
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "loops.c"), filepath.Join(dir, "loops")
	if err := os.WriteFile(src, []byte(loopsC), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-O2", "-g", "-fno-omit-frame-pointer", "-no-pie", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	syms, err := f.Symbols()
	f.Close()
	i := slices.IndexFunc(syms, func(s elf.Symbol) bool { return s.Name == "looper" })
	if err != nil || i < 0 || syms[i].Size == 0 {
		t.Fatalf("no sized symbol looper in %s: %v", bin, err)
	}
	looper := syms[i]
	data := filepath.Join(dir, "loops.data")
	cmd := exec.Command("perf", "record", "-q", "-e", "cpu-clock", "-F", "2000", "-g", "-o", data, "--", bin, "0.3")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("perf record: %v\n%s", err, out)
	}
	type sample struct {
		depth  int // the kernel's count: entries, not PERF_CONTEXT_* markers
		looper bool
		frames []ccmap.Frame
	}
	var samples []sample
	var fmap []ccmap.FuncID
	prof, err := load(data, LoadOptions{}, testOptions{inline: true, noFast: true, eachStack: true, funcMap: &fmap,
		sampleHook: func(s *perf.Sample, frames []ccmap.Frame) {
			n := 0
			for _, a := range s.Callchain {
				if a < perf.ContextMax {
					n++
				}
			}
			// the user IP: the sample's own IP may be the kernel's
			user := perf.SplitCallchain(s.Callchain).User
			in := len(user) > 0 && user[0] >= looper.Value && user[0] < looper.Value+looper.Size
			samples = append(samples, sample{n, in, slices.Clone(frames)})
		}})
	if err != nil {
		t.Fatal(err)
	}
	limit := defaultMaxStack
	if lim, err := perf.ReadKernelLimits(); err == nil && lim.MaxStack != 0 {
		limit = int(lim.MaxStack)
	}
	var loops, brokenLoops, recursions, brokenRecursions int
	outer := map[string]bool{} // the outermost functions of the recursions' cut stacks
	for _, s := range samples {
		if s.depth < limit {
			continue
		}
		broken := len(s.frames) == 1 && prof.Funcs[fmap[s.frames[0].Func]].Name == profile.BrokenStack
		switch {
		case s.looper:
			loops++
			if broken {
				brokenLoops++
			}
		default:
			recursions++
			if broken {
				brokenRecursions++
			}
			outer[prof.Funcs[fmap[s.frames[len(s.frames)-1].Func]].Name] = true
		}
	}
	t.Logf("%d samples; at the depth limit %d: %d in the looping leaf (%d broken), %d recursive (%d broken); stacks %+v",
		len(samples), limit, loops, brokenLoops, recursions, brokenRecursions, prof.Recording.Stacks)
	if loops == 0 || recursions == 0 {
		t.Fatalf("%d looping and %d recursive stacks reached the depth limit: want both (the program did not run as built)", loops, recursions)
	}
	if brokenLoops != loops {
		t.Errorf("%d of %d stacks through the frame that points to itself are broken, want all", brokenLoops, loops)
	}
	if brokenRecursions != 0 {
		t.Errorf("%d of %d deep recursive stacks are broken, want none", brokenRecursions, recursions)
	}
	if !outer["deep"] || !outer["indirect"] || !outer["taila"] || !outer["even"] && !outer["odd"] {
		t.Errorf("cut stacks end in %v: want each recursion (deep, even/odd, indirect, taila) among them", outer)
	}
}

// TestUnrootedStacks: a whole stack whose outermost function is called in
// another stack lost its outer frames: counted as unrooted, with its
// weight, and kept (its edges stay); stacks ending in main, which nothing
// calls, are rooted, whether main is the IP or a caller.
func TestUnrootedStacks(t *testing.T) {
	p := buildStacksProgram(t)
	ipLeaf, ipMain := p.syms["leaf"].Value+4, p.syms["main"].Value+4
	whole := stackSample{[]uint64{ipLeaf, p.retMidLeaf, p.retMainMid}, 100}
	inMain := stackSample{[]uint64{ipMain}, 3}
	fromMid := stackSample{[]uint64{ipLeaf, p.retMidLeaf}, 7}                               // mid's caller lost
	fromRec := stackSample{[]uint64{p.syms["rec"].Value + 4, p.retRecRec, p.retRecRec}, 11} // the first rec's caller lost
	// mid's caller lost, and a word in no mapping above it: judged by mid
	fromMidWord := stackSample{[]uint64{ipLeaf, p.retMidLeaf, 0x10}, 5}
	path := writeStacksFile(t, p, []stackSample{whole, fromMid, inMain, fromRec, fromMid, fromMidWord})
	for _, to := range []testOptions{{}, {inline: true, noFast: true, eachStack: true}} {
		prof, err := load(path, LoadOptions{}, to)
		if err != nil {
			t.Fatal(err)
		}
		st := prof.Recording.Stacks
		if want := (profile.StackStats{Unrooted: 4, UnrootedWeight: 7 + 11 + 7 + 5}); st != want {
			t.Errorf("%+v: stacks %+v, want %+v", to, st, want)
		}
		var warned bool
		for _, w := range prof.Warnings {
			warned = warned || strings.Contains(w, "4 samples (22.56% of the sampled weight) have stacks with no way back to an entry")
		}
		if !warned {
			t.Errorf("warnings %q: want the unrooted one with its share", prof.Warnings)
		}
		var edges []string
		for _, e := range prof.Map.Edges(ccmap.Total) {
			edges = append(edges, prof.FuncName(e.Site.Caller)+"->"+prof.FuncName(e.Callee))
		}
		slices.Sort(edges)
		// the word is kept as the [unknown] frame perf shows
		if want := []string{"[unknown]->mid", "main->mid", "mid->leaf", "rec->rec"}; !slices.Equal(edges, want) {
			t.Errorf("edges %q, want %q (the unrooted stacks' kept)", edges, want)
		}
	}
}

// nolibcC is a static program without libc, entered at myentry, that runs
// until it has used 0.3 s of CPU time (read with the clock_gettime system
// call).
const nolibcC = `
struct ts { long s, ns; };
static long cpuns(void) {
	struct ts t;
	long r;
	__asm__ volatile("syscall" : "=a"(r) : "a"(228), "D"(2), "S"(&t) : "rcx", "r11", "memory");
	return t.s * 1000000000 + t.ns;
}
volatile long sink;
__attribute__((noinline)) long work(long n) { long s = 0; for (long i = 0; i < n; i++) s += i ^ sink; return s; }
__attribute__((noinline)) long outer(long n) { long r = work(n); sink = r; return r + 1; }
__attribute__((force_align_arg_pointer)) void myentry(void) {
	while (cpuns() < 300000000) sink += outer(100000);
	__asm__ volatile("syscall" : : "a"(60), "D"(0));
	for (;;);
}
`

// TestNoLibcStacksWhole: a program without libc, whose entry is none of
// the known ones and whose first frame's return address slot holds argc,
// has whole stacks: none broken, none unrooted; they end in the entry or
// in the [unknown] word above it.
func TestNoLibcStacksWhole(t *testing.T) {
	for _, tool := range []string{"gcc", "perf"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "nolibc.c"), filepath.Join(dir, "nolibc")
	if err := os.WriteFile(src, []byte(nolibcC), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-O2", "-g", "-fno-omit-frame-pointer", "-static", "-nostdlib", "-e", "myentry", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	data := filepath.Join(dir, "nolibc.data")
	if out, err := exec.Command("perf", "record", "-q", "-e", "cpu-clock", "-F", "2000", "-g", "-o", data, "--", bin).CombinedOutput(); err != nil {
		t.Fatalf("perf record: %v\n%s", err, out)
	}
	var fmap []ccmap.FuncID
	var outermost []ccmap.FuncID
	prof, err := load(data, LoadOptions{}, testOptions{inline: true, noFast: true, eachStack: true, funcMap: &fmap,
		sampleHook: func(s *perf.Sample, frames []ccmap.Frame) {
			if len(frames) > 0 {
				outermost = append(outermost, frames[len(frames)-1].Func)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	inEntry := 0
	for _, f := range outermost {
		// the entry, or the word above its frame (argc), as [unknown]
		if n := prof.Funcs[fmap[f]].Name; n == "myentry" || n == "[unknown]" {
			inEntry++
		}
	}
	st := prof.Recording.Stacks
	t.Logf("%d samples, %d of them ending in myentry or above it; stacks %+v", len(outermost), inEntry, st)
	if len(outermost) < 100 || 10*inEntry < 9*len(outermost) {
		t.Errorf("%d of %d stacks end in myentry or the word above it: want 90%% of 100 or more", inEntry, len(outermost))
	}
	if st.Broken != 0 || st.Unrooted != 0 {
		t.Errorf("stacks %+v: want none broken or unrooted", st)
	}
}
