package layout

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// deps returns the import paths of the packages matched by patterns and
// of everything they import, tests left out (go list -deps).
func deps(t *testing.T, patterns ...string) []string {
	t.Helper()
	args := append([]string{"list", "-deps", "-f", "{{.ImportPath}}"}, patterns...)
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, ee.Stderr)
		}
		t.Fatalf("go %s: %v", strings.Join(args, " "), err)
	}
	return strings.Fields(string(out))
}

// TestPerfImportsNoFlag: perf is the kernel ABI; the command line is
// internal/perfflags'.
func TestPerfImportsNoFlag(t *testing.T) {
	if slices.Contains(deps(t, "../../perf/..."), "flag") {
		t.Error("perf or a package under it imports flag, directly or not (go list -deps ./perf/... | grep -x flag)")
	}
}
