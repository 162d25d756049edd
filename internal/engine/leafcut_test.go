package engine

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLeafCopyCut replays the leaf repair of the recordings named by
// $HWPROF_LEAFCUT_FILES (space-separated timer recordings, whose samples
// carry the leaf copy) with every stack copy cut to smaller sizes, and
// logs per size the samples checked, restored and not judged: the
// measurement behind source.LeafStackBytes. scripts/bench-leafcopy.sh
// records the programs and runs it:
//
//	HWPROF_LEAFCUT_FILES="a.data b.data" go test ./internal/engine -run LeafCopyCut -v
func TestLeafCopyCut(t *testing.T) {
	files := strings.Fields(os.Getenv("HWPROF_LEAFCUT_FILES"))
	if len(files) == 0 {
		t.Skip("set HWPROF_LEAFCUT_FILES to timer recordings")
	}
	t.Logf("%-16s %6s %8s %9s %8s", "recording", "copy", "checked", "restored", "unknown")
	for _, f := range files {
		for _, n := range []int{0, 256, 192, 128, 96, 64, 32, 16} {
			p, err := load(f, LoadOptions{}, testOptions{leafCut: n})
			if err != nil {
				t.Fatal(err)
			}
			size := "whole"
			if n > 0 {
				size = strconv.Itoa(n)
			}
			l := p.Recording.Leaf
			if l.Checked == 0 {
				t.Fatalf("%s: no sample carries a stack copy to repair with", f)
			}
			t.Logf("%-16s %6s %8d %9d %8d", filepath.Base(f), size, l.Checked, l.Inserted, l.Unknown)
		}
	}
}
