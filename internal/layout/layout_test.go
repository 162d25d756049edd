package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"path/filepath"
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

// TestCommandLeavesTracefsToUprobe: cmd/hwprof asks internal/uprobe for
// the exact source's probes (Setup, DropOwn) and does no tracefs work of
// its own.
func TestCommandLeavesTracefsToUprobe(t *testing.T) {
	tracefs := []string{"Tracefs", "RemoveStale", "NewGroup", "Define", "DefineOwn", "Undefine", "UndefineOwn", "Unmount", "UnmountOwn", "HandOverMount"}
	files, err := filepath.Glob("../../cmd/hwprof/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("cmd/hwprof's files: %v, %v", files, err)
	}
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "uprobe" && slices.Contains(tracefs, sel.Sel.Name) {
					t.Errorf("%s: cmd/hwprof calls uprobe.%s (tracefs work belongs in internal/uprobe)", fset.Position(sel.Pos()), sel.Sel.Name)
				}
			}
			return true
		})
	}
}

// TestOneAddressVocabulary: the address types are package addrspace's
// alone (issue 29: one vocabulary): no other package, tests included,
// declares a type or an alias named Addr or ObjAddr.
func TestOneAddressVocabulary(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "../.." && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || filepath.Dir(path) == filepath.Join("../..", "addrspace") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if ts, ok := n.(*ast.TypeSpec); ok && (ts.Name.Name == "Addr" || ts.Name.Name == "ObjAddr") {
				t.Errorf("%s: package %s declares type %s (use addrspace.%s)", fset.Position(ts.Pos()), f.Name.Name, ts.Name.Name, ts.Name.Name)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
