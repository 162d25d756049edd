package uprobe

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/internal/testenv"
	"github.com/hwprof/hwprof/internal/testprog"
	"github.com/hwprof/hwprof/perf"
)

// Setup against the kernel's tracefs: the probes of a Request are defined
// under this process's group, one event per object with the command
// target's flags, and DropOwn removes them; a Request that cannot be
// probed leaves no probe.
func TestSetup(t *testing.T) {
	testenv.Uprobes(t) // root, the uprobe PMU and tracefs, checked without this package
	bin := testprog.BuildText(t, "prog.c", cProg, "-O1")
	p, err := Setup(Request{Argv: []string{bin}, Filter: regexp.MustCompile(`^(work|main)$`)})
	if err != nil {
		t.Fatal(err)
	}
	defer DropOwn()
	dir, group, ok := Own()
	if !ok || len(p.Objects) != 1 || len(p.Objects[0].Probes) != 2 || len(p.Events) != 1 || p.CPUs < 1 {
		t.Fatalf("Setup = %+v (own %q %q %v), want work and main in one event of this process's group", p, dir, group, ok)
	}
	if ev := p.Events[0]; ev.Name != group+":prog" || !ev.Attr.Flags.Has(perf.FlagEnableOnExec) {
		t.Errorf("event %+v, want %s:prog enabled on exec", ev, group)
	}
	if note := p.Note(); !strings.HasPrefix(note, "probing 2 functions (2 in "+bin+") with 1 event on ") {
		t.Errorf("Note() = %q", note)
	}
	if err := DropOwn(); err != nil {
		t.Fatal(err)
	}
	if list, _ := os.ReadFile(filepath.Join(dir, "uprobe_events")); strings.Contains(string(list), group) {
		t.Errorf("probes left after DropOwn:\n%s", list)
	}

	_, err = Setup(Request{Argv: []string{bin}, Filter: regexp.MustCompile(`^zzz$`)})
	if want := `no function of ` + bin + ` matches --probe-filter "^zzz$"`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Setup with a filter matching nothing: %v, want %q", err, want)
	}
	if _, _, ok := OwnMount(); ok {
		t.Error("a failed Setup left its tracefs mounted")
	}
}
