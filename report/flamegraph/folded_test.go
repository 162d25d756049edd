package flamegraph

import (
	"bytes"
	"errors"
	"fmt"
	"html"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestWriteFolded(t *testing.T) {
	stacks := []Stack{
		timed(prog("main", "a;b", "leaf"), 3, 10),
		timed(prog("main", "a;b", "leaf"), 2, 5), // same stack: summed
		timed(prog("main", "line\nbreak"), 1, 0),
		timed(nil, 4, 0),
		timed(prog("main", "rare"), 0, 0.4), // rounds to 0 under every weight: left out
		{Frames: []Frame{{Name: "", Kind: Unknown}, {Name: "x", Kind: Kernel}}, Time: 1.5e6, Samples: 2, Calls: 2.5},
	}
	for _, tc := range []struct {
		w    Weight
		want string
	}{
		{WeightTime, "[no stack] 1000000\n[unknown];x 1500000\nmain;a:b;leaf 1250000\nmain;line break 250000\n"},
		{WeightSamples, "[no stack] 4\n[unknown];x 2\nmain;a:b;leaf 5\nmain;line break 1\n"},
		{WeightCalls, "[unknown];x 3\nmain;a:b;leaf 15\n"},
	} {
		var b bytes.Buffer
		if err := WriteFolded(&b, stacks, tc.w); err != nil {
			t.Fatal(err)
		}
		if b.String() != tc.want {
			t.Errorf("%v:\n%s\nwant\n%s", tc.w, b.String(), tc.want)
		}
	}
	if err := WriteFolded(&bytes.Buffer{}, stacks, Weight(9)); err == nil {
		t.Error("unknown weight accepted")
	}
}

func TestParseFolded(t *testing.T) {
	in := "main;work_[k];jitted_[j];inl_[i] 7\n\nmain 2.5\r\n"
	got, err := ParseFolded(strings.NewReader(in), WeightCalls)
	if err != nil {
		t.Fatal(err)
	}
	want := []Stack{
		{Frames: []Frame{{Name: "main"}, {Name: "work", Kind: Kernel}, {Name: "jitted", Kind: JIT}, {Name: "inl"}}, Calls: 7},
		{Frames: []Frame{{Name: "main"}}, Calls: 2.5},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for _, bad := range []string{"main;a\n", "main 1\nmain -3\n", "main 1e999\n", "main x\n"} {
		if _, err := ParseFolded(strings.NewReader(bad), WeightTime); err == nil || !strings.Contains(err.Error(), "line ") {
			t.Errorf("%q: error %v, want one naming the line", bad, err)
		}
	}
	if _, err := ParseFolded(strings.NewReader("main 1.5\n"), WeightSamples); err == nil {
		t.Error("fractional sample count accepted")
	}
}

// TestFoldedRoundTrip: written and read back, every stack keeps its
// weight, summed by path.
func TestFoldedRoundTrip(t *testing.T) {
	_, stacks := serverProfile()
	for _, w := range []Weight{WeightTime, WeightSamples, WeightCalls} {
		var b bytes.Buffer
		if err := WriteFolded(&b, stacks, w); err != nil {
			t.Fatal(err)
		}
		back, err := ParseFolded(&b, w)
		if err != nil {
			t.Fatal(err)
		}
		a, c := buildRef(stacks, nil, 0), buildRef(back, nil, 0)
		for path, n := range a.byPath {
			m := c.byPath[path]
			got := 0.0
			if m != nil {
				got = m.total[weightIndex[w.String()]]
			}
			if want := n.total[weightIndex[w.String()]]; got != want {
				t.Errorf("%v: %q total %g after the round trip, want %g", w, path, got, want)
			}
		}
	}
}

// repoRoot is the directory holding go.mod above the test's directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("no go.mod above the test directory")
		}
		dir = up
	}
}

// TestFlamegraphPl feeds the folded stacks to Brendan Gregg's flamegraph.pl,
// kept beside the repository in ../shared/tools/flamegraph, and checks that
// it draws every frame with the weight the stacks give it.
func TestFlamegraphPl(t *testing.T) {
	script := filepath.Join(repoRoot(t), "..", "shared", "tools", "flamegraph", "flamegraph.pl")
	if _, err := os.Stat(script); errors.Is(err, fs.ErrNotExist) {
		t.Skipf("flamegraph.pl not found at %s", script)
	}
	if _, err := exec.LookPath("perl"); err != nil {
		t.Skip("no perl on PATH")
	}
	_, server := serverProfile()
	_, off := offCPUProfile(true)
	for _, tc := range []struct {
		stacks []Stack
		w      Weight
	}{{server, WeightTime}, {server, WeightCalls}, {off, WeightOffCPU}, {off, WeightWall}} {
		stacks, w := tc.stacks, tc.w
		var folded bytes.Buffer
		if err := WriteFolded(&folded, stacks, w); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("perl", script, "--countname="+w.String(), "--minwidth=0", "--title=hwprof "+w.String())
		cmd.Stdin = &folded
		var svg, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &svg, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("flamegraph.pl: %v\n%s", err, stderr.String())
		}
		if stderr.Len() > 0 {
			t.Errorf("flamegraph.pl complained: %s", stderr.String())
		}
		// Every frame is a <title>name (N unit, P%)</title>.
		got := map[string]int{}
		for _, m := range regexp.MustCompile(`<title>(.*?) \(([\d,]+) `+w.String()+`, [\d.]+%\)</title>`).FindAllStringSubmatch(svg.String(), -1) {
			got[html.UnescapeString(m[1])+" "+strings.ReplaceAll(m[2], ",", "")]++
		}
		want := map[string]int{}
		ref := buildRef(stacks, nil, 0)
		for _, n := range ref.byPath {
			v := n.total[weightIndex[w.String()]]
			if v < 0.5 {
				continue
			}
			// The root is "all" in both.
			want[foldedName(Frame{Name: n.name})+" "+strconv.FormatFloat(v, 'f', 0, 64)]++
		}
		for k, c := range want {
			if got[k] != c {
				t.Errorf("%v: frame %q drawn %d times, want %d", w, k, got[k], c)
			}
		}
		if len(got) != len(want) {
			t.Errorf("%v: flamegraph.pl drew %d distinct frames, want %d", w, len(got), len(want))
		}
	}
}

// FuzzParseFolded: no input panics, and what parses writes back to lines
// that parse to the same totals.
func FuzzParseFolded(f *testing.F) {
	f.Add("main;a;b 12\nmain;c 3\n")
	f.Add("x_[k];y_[j] 1.5\n")
	f.Add(" 1\n;; 2\n")
	f.Fuzz(func(t *testing.T, in string) {
		stacks, err := ParseFolded(strings.NewReader(in), WeightCalls)
		if err != nil {
			return
		}
		var b bytes.Buffer
		if err := WriteFolded(&b, stacks, WeightCalls); err != nil {
			t.Fatal(err)
		}
		if _, err := ParseFolded(&b, WeightCalls); err != nil {
			t.Fatalf("written folded stacks do not parse: %v\n%s", err, b.String())
		}
	})
}
