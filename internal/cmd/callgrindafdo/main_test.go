package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A callgrind file of two functions of /bin/prog, one calling the other
// and a library function, as callgrind writes it with
// --dump-instr=yes --compress-strings=no --compress-pos=no.
const sample = `# callgrind format
version: 1
creator: callgrind-3.19.0
pid: 1
cmd:  /bin/prog 7
part: 1

desc: I1 cache: 
positions: instr
events: Ir
summary: 100

ob=/bin/prog
fl=prog.c
fn=main
0x1000 1
0x1004 7
cfn=f
calls=7 0x2000
0x1008 70
0x1008 7
cob=/lib/libc.so.6
cfn=memcpy
calls=2 0x9000
0x100c 9
fn=f
0x2000 7
0x2003 7
ob=/lib/libc.so.6
fn=memcpy
0x9000 2
`

func TestParse(t *testing.T) {
	c, err := parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	if c.cmd != "/bin/prog" {
		t.Errorf("cmd %q, want /bin/prog", c.cmd)
	}
	want := map[uint64]uint64{0x1000: 1, 0x1004: 7, 0x1008: 7, 0x2000: 7, 0x2003: 7}
	got := c.execs["/bin/prog"]
	if len(got) != len(want) {
		t.Errorf("executions %v, want %v", got, want)
	}
	for a, n := range want {
		if got[a] != n {
			t.Errorf("executions of %#x: %d, want %d (the call's inclusive cost is no execution)", a, got[a], n)
		}
	}
	if n := c.execs["/lib/libc.so.6"][0x9000]; n != 2 {
		t.Errorf("memcpy's executions %d, want 2", n)
	}
	calls := c.calls["/bin/prog"]
	if n := calls[call{site: 0x1008, calleeObj: "/bin/prog", callee: 0x2000, calleeName: "f"}]; n != 7 {
		t.Errorf("calls of f from 0x1008: %d, want 7 (calls %v)", n, calls)
	}
	// A call into another object (cob=) is the caller's object's.
	if n := calls[call{site: 0x100c, calleeObj: "/lib/libc.so.6", callee: 0x9000, calleeName: "memcpy"}]; n != 2 {
		t.Errorf("calls of memcpy: %d, want 2 (calls %v)", n, c.calls)
	}
	if o, err := c.pick(""); err != nil || o != "/bin/prog" {
		t.Errorf("pick(\"\") = %q, %v; want the program", o, err)
	}
	if o, err := c.pick("libc.so.6"); err != nil || o != "/lib/libc.so.6" {
		t.Errorf("pick(libc.so.6) = %q, %v", o, err)
	}
	if _, err := c.pick("libm.so.6"); err == nil {
		t.Error("pick(libm.so.6): no error for an object with no instructions")
	}
}

func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"not callgrind", "hello\n", "not a callgrind file"},
		{"lines, not instructions", "positions: line\nevents: Ir\n", "--dump-instr=yes"},
		{"another event first", "positions: instr\nevents: Dr Ir\n", "first event must be Ir"},
		{"compressed names", "positions: instr\nevents: Ir\nfn=(1) main\n0x10 1\n", "--compress-strings=no"},
		{"relative positions", "positions: instr\nevents: Ir\nob=/p\nfn=main\n0x10 1\n+4 1\n", "--compress-pos=no"},
		{"jumps", "positions: instr\nevents: Ir\nob=/p\nfn=main\njump=1 0x20\n0x10 1\n", "--collect-jumps"},
		{"calls without a target", "positions: instr\nevents: Ir\ncalls=3\n", "no call count and target"},
		{"cost before the header", "0x10 1\n", "before the positions"},
	} {
		_, err := parse(strings.NewReader(tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.want)
		}
	}
}

// TestLive runs callgrind on a program whose counts are known and checks
// the profile: a function called n times has a head of n, the line that
// calls it n calls of it, and its body n executions.
func TestLive(t *testing.T) {
	for _, tool := range []string{"valgrind", "gcc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "count.c")
	// Line numbers matter: f is declared on line 2 and called on line 7.
	code := `#include <stdlib.h>
__attribute__((noinline)) int f(int x) {
	return x * 3 + 1;
}
int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 1, s = 0;
	for (int i = 0; i < n; i++) s += f(i);
	return s < 0;
}
`
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	bin, cg, out := filepath.Join(dir, "count"), filepath.Join(dir, "cg.out"), filepath.Join(dir, "count.afdo")
	if b, err := exec.Command("gcc", "-O1", "-g", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, b)
	}
	if b, err := exec.Command("valgrind", "--tool=callgrind", "--dump-instr=yes", "--compress-strings=no", "--compress-pos=no",
		"--callgrind-out-file="+cg, bin, "1234").CombinedOutput(); err != nil {
		t.Fatalf("valgrind: %v\n%s", err, b)
	}
	if err := run(cg, "", out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	t.Logf("profile:\n%s", text)
	// f, entered 1234 times, its body's line (offset 1 from its line 2)
	// run 1234 times, and its total the sum of its lines; main calls it
	// 1234 times from line 7 (offset 2 from main's line 5).
	for _, want := range []string{"\nf:2468:1234\n 1: 1234\n 2: 1234\n", "\n 2: 1234 f:1234\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("profile lacks %q", want)
		}
	}
}
