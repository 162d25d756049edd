package script

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// No public package's API is made of internal types (issue: report/script
// once took an *engine.Engine): in every package of the module outside
// internal/ and cmd/, no exported function, method, type, field, constant
// or variable names a type of an internal package in its declaration. (A
// public package may still use internal packages inside its code.) This
// package's test holds it because the fault was found here; it reads the
// sources of the whole module.
func TestNoInternalTypesInPublicAPI(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root: %v", err)
	}
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel == "internal" || rel == "cmd" || rel == "scripts" || rel == "docs" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		files++
		for _, bad := range internalInAPI(t, path) {
			t.Errorf("%s: %s", rel, bad)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("read %d source files of public packages: the module is not where this test looks", files)
	}
}

// internalInAPI returns the exported declarations of a file that name a
// type of an internal package.
func internalInAPI(t *testing.T, path string) []string {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	internal := map[string]bool{} // import names of internal packages
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		if !strings.Contains(p, "/internal/") {
			continue
		}
		name := p[strings.LastIndex(p, "/")+1:]
		if im.Name != nil {
			name = im.Name.Name
		}
		internal[name] = true
	}
	if len(internal) == 0 {
		return nil
	}
	var bad []string
	check := func(what string, n ast.Node) {
		if n == nil {
			return
		}
		ast.Inspect(n, func(n ast.Node) bool {
			if s, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := s.X.(*ast.Ident); ok && internal[id.Name] {
					bad = append(bad, what+" names "+id.Name+"."+s.Sel.Name)
				}
			}
			return true
		})
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Name.IsExported() && (d.Recv == nil || exportedRecv(d.Recv)) {
				check("func "+d.Name.Name, d.Type)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						checkType(check, "type "+s.Name.Name, s.Type)
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() {
							check(n.Name, s.Type)
						}
					}
				}
			}
		}
	}
	return bad
}

// checkType checks a type's exported parts: the fields and methods of a
// struct or interface, or all of any other type.
func checkType(check func(string, ast.Node), what string, typ ast.Expr) {
	var fields *ast.FieldList
	switch tt := typ.(type) {
	case *ast.StructType:
		fields = tt.Fields
	case *ast.InterfaceType:
		fields = tt.Methods
	default:
		check(what, typ)
		return
	}
	for _, fl := range fields.List {
		if len(fl.Names) == 0 { // embedded: its fields and methods are promoted
			check(what+" (embedded)", fl.Type)
		}
		for _, n := range fl.Names {
			if n.IsExported() {
				check(what+"."+n.Name, fl.Type)
			}
		}
	}
}

// exportedRecv says whether a method's receiver type is exported.
func exportedRecv(recv *ast.FieldList) bool {
	if len(recv.List) == 0 {
		return false
	}
	typ := recv.List[0].Type
	for {
		switch tt := typ.(type) {
		case *ast.StarExpr:
			typ = tt.X
		case *ast.IndexExpr:
			typ = tt.X
		case *ast.IndexListExpr:
			typ = tt.X
		case *ast.Ident:
			return tt.IsExported()
		default:
			return false
		}
	}
}
