package layout

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A source is a non-test .go file of the module (testdata and hidden
// directories left out): its path from the module's root, its line count
// and its syntax.
type source struct {
	path  string
	lines int
	f     *ast.File
}

// sources parses every non-test .go file of the module.
func sources(t *testing.T, fset *token.FileSet) []source {
	t.Helper()
	var srcs []source
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
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, path, b, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("../..", path)
		srcs = append(srcs, source{path: filepath.ToSlash(rel), lines: bytes.Count(b, []byte("\n")), f: f})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) == 0 {
		t.Fatal("no source files found under ../..")
	}
	return srcs
}

// TestNoInitInLibraries: only a main package may have an init function,
// so importing a package never changes what a process does (the launcher
// trampoline and the releaser of perf events are entries that main
// dispatches: launch.Main, release.Main).
func TestNoInitInLibraries(t *testing.T) {
	fset := token.NewFileSet()
	for _, src := range sources(t, fset) {
		if src.f.Name.Name == "main" {
			continue
		}
		for _, decl := range src.f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.Name == "init" {
				t.Errorf("%s: package %s has an init function", fset.Position(fn.Pos()), src.f.Name.Name)
			}
		}
	}
}

// TestFileSizes: no source file is over 900 lines, and the loader
// (internal/engine/load.go) is under 600: files by concept, the pipeline
// in internal/pipeline rather than in the loader.
func TestFileSizes(t *testing.T) {
	const maxLines, loader, maxLoader = 900, "internal/engine/load.go", 600
	found := false
	for _, src := range sources(t, token.NewFileSet()) {
		if src.lines > maxLines {
			t.Errorf("%s has %d lines, more than %d: split it by concept", src.path, src.lines, maxLines)
		}
		if src.path == loader {
			found = true
			if src.lines >= maxLoader {
				t.Errorf("%s (the loader) has %d lines, %d or more: the pipeline's work belongs in internal/pipeline", loader, src.lines, maxLoader)
			}
		}
	}
	if !found {
		t.Errorf("%s not found: update this test to the loader's file", loader)
	}
}

// goroutineHomes are the only packages (directories) whose non-test files
// start goroutines, each saying so in its doc.go: the analysis pipeline,
// symbolization (objects read ahead and in parallel), perf/perfdata
// (the zstd decoder of COMPRESSED records) and internal/otlpsend (the
// sender of OTLP profiles and the follower of a recording being written,
// which run beside a recording).
var goroutineHomes = []string{"internal/pipeline", "symbolize", "perf/perfdata", "internal/otlpsend"}

// TestGoroutinesStartInThreePackages finds every go statement and every
// call of a method Go with one argument (sync.WaitGroup.Go; errgroup's)
// in non-test files: all must be in goroutineHomes, and each of those
// packages' doc.go must say that it starts goroutines.
func TestGoroutinesStartInThreePackages(t *testing.T) {
	fset := token.NewFileSet()
	starts := map[string]int{}
	for _, src := range sources(t, fset) {
		dir := path.Dir(src.path)
		ast.Inspect(src.f, func(n ast.Node) bool {
			var at token.Pos
			switch n := n.(type) {
			case *ast.GoStmt:
				at = n.Pos()
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Go" && len(n.Args) == 1 {
					at = n.Pos()
				}
			}
			if at.IsValid() {
				starts[dir]++
				if !slices.Contains(goroutineHomes, dir) {
					t.Errorf("%s: a goroutine starts in %s; only %v start goroutines (internal/pipeline runs work concurrently for the others)",
						fset.Position(at), dir, goroutineHomes)
				}
			}
			return true
		})
	}
	for _, dir := range goroutineHomes {
		if starts[dir] == 0 {
			t.Errorf("%s starts no goroutine any more: remove it from goroutineHomes and its doc's goroutine notes", dir)
			continue
		}
		doc, err := os.ReadFile(filepath.Join("../..", dir, "doc.go"))
		if err != nil {
			t.Error(err)
			continue
		}
		if !strings.Contains(strings.ToLower(string(doc)), "goroutine") {
			t.Errorf("%s/doc.go does not say what goroutines the package starts", dir)
		}
	}
}
