package layout

import (
	"bufio"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The layers of docs/architecture.md, by their headings under "##
// Packages".
const (
	recording = "Recording"
	perfLayer = "The perf ABI and files"
	analysis  = "Analysis"
	reports   = "Reports"
	helpers   = "Internal helpers"
	commands  = "Commands"
)

var layers = []string{recording, perfLayer, analysis, reports, helpers, commands}

// mayImport holds the rules of docs/architecture.md: the layers each
// layer's packages may import (commands: any), and single packages of
// other layers they may import besides (may) or not (mayNot) although
// their layer is allowed.
var mayImport = map[string]struct {
	layers []string
	may    []string
	mayNot []string
}{
	perfLayer: {layers: []string{perfLayer, helpers}},
	recording: {layers: []string{perfLayer, helpers, recording}, may: []string{"symbolize", "unwind/clobber", "profile", "internal/pipeline", "offcpu"}},
	analysis:  {layers: []string{perfLayer, helpers, analysis}},
	reports:   {layers: []string{perfLayer, helpers, reports, analysis}, mayNot: []string{"internal/engine", "internal/pipeline"}},
	helpers:   {layers: []string{perfLayer, helpers}},
	commands:  {layers: layers},
}

const archPage = "docs/architecture.md"

// pagePackages reads the package list at the top of docs/architecture.md:
// the lines "- `PATH`: ..." under the "### LAYER" headings of its "##
// Packages" section, PATH relative to the module. It returns each
// package's layer.
func pagePackages(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join("../..", archPage))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	layer := map[string]string{}
	in, cur := false, ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			in = line == "## Packages"
		case !in:
		case strings.HasPrefix(line, "### "):
			cur = strings.TrimPrefix(line, "### ")
			if !slices.Contains(layers, cur) {
				t.Errorf("%s:%d: unknown layer %q (the layers: %s)", archPage, n, cur, strings.Join(layers, ", "))
			}
		case strings.HasPrefix(line, "- `"):
			path, _, ok := strings.Cut(strings.TrimPrefix(line, "- `"), "`")
			switch {
			case !ok || cur == "":
				t.Errorf("%s:%d: %q: want \"- `PATH`: what it does\" under a \"### LAYER\" heading", archPage, n, line)
			case layer[path] != "":
				t.Errorf("%s:%d: package %s listed twice", archPage, n, path)
			default:
				layer[path] = cur
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(layer) == 0 {
		t.Fatalf("%s: no \"## Packages\" section with \"- `PATH`: ...\" lines", archPage)
	}
	return layer
}

// modulePackages returns every package of the module (go list ./...),
// relative to the module, with what it imports (tests left out): the
// module's packages relative to it too, others by their import path.
func modulePackages(t *testing.T) map[string][]string {
	t.Helper()
	run := func(args ...string) string {
		cmd := exec.Command("go", args...)
		cmd.Dir = "../.."
		out, err := cmd.Output()
		if err != nil {
			if ee, ok := err.(*exec.ExitError); ok {
				t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, ee.Stderr)
			}
			t.Fatalf("go %s: %v", strings.Join(args, " "), err)
		}
		return string(out)
	}
	module := strings.TrimSpace(run("list", "-m"))
	rel := func(p string) (string, bool) {
		if p == module {
			return ".", true
		}
		r, ok := strings.CutPrefix(p, module+"/")
		return r, ok
	}
	pkgs := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(run("list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...")), "\n") {
		fields := strings.Fields(line)
		p, _ := rel(fields[0])
		pkgs[p] = nil
		for _, imp := range fields[1:] {
			if r, ok := rel(imp); ok {
				imp = r
			}
			pkgs[p] = append(pkgs[p], imp)
		}
	}
	return pkgs
}

// layerHint says under which heading a package missing from the page
// goes, where its path tells.
func layerHint(path string) string {
	switch {
	case path == "buildid" || path == "addrspace" || path == "perf" || strings.HasPrefix(path, "perf/"):
		return "### " + perfLayer
	case path == "report" || strings.HasPrefix(path, "report/"):
		return "### " + reports
	case strings.HasPrefix(path, "cmd/") || strings.HasPrefix(path, "internal/cmd/"):
		return "### " + commands
	case strings.HasPrefix(path, "internal/record/"):
		return "### " + recording
	}
	return "the heading of its layer (### " + strings.Join(layers, ", ### ") + ")"
}

// TestArchitecturePageListsEveryPackage: the package list at the top of
// docs/architecture.md names every package of the module, and only them.
func TestArchitecturePageListsEveryPackage(t *testing.T) {
	page := pagePackages(t)
	pkgs := modulePackages(t)
	for _, p := range slices.Sorted(maps.Keys(pkgs)) {
		if page[p] == "" {
			t.Errorf("%s does not list package %s: add the line\n\t- `%s`: WHAT IT DOES, IN ONE LINE.\nunder %s, and keep to the import rules of its layer (## Rules)", archPage, p, p, layerHint(p))
		}
	}
	for _, p := range slices.Sorted(maps.Keys(page)) {
		if _, ok := pkgs[p]; !ok {
			t.Errorf("%s lists `%s` under ### %s, but the module has no such package (go list ./...): remove the line \"- `%s`: ...\", or correct its path", archPage, p, page[p], p)
		}
	}
}

// TestArchitectureImportRules: every package imports only what the rules
// of docs/architecture.md allow its layer; perf imports nothing of the
// module.
func TestArchitectureImportRules(t *testing.T) {
	page := pagePackages(t)
	pkgs := modulePackages(t)
	for p, imps := range pkgs {
		if p == "perf" {
			for _, imp := range imps {
				if _, ok := pkgs[imp]; ok {
					t.Errorf("perf imports %s: perf imports nothing of the module (%s, ## Rules)", imp, archPage)
				}
			}
		}
		from, ok := page[p]
		if !ok {
			continue // TestArchitecturePageListsEveryPackage says which line to add
		}
		rule := mayImport[from]
		for _, imp := range imps {
			to, ok := page[imp]
			if !ok {
				continue
			}
			allowed := (slices.Contains(rule.layers, to) || slices.Contains(rule.may, imp)) && !slices.Contains(rule.mayNot, imp)
			if !allowed {
				t.Errorf("%s (%s) imports %s (%s): %s's rules (## Rules) do not let %s import that", p, from, imp, to, archPage, strings.ToLower(from))
			}
		}
	}
}

// TestAnalysisImportsNoRecorder: the packages that read recordings (the
// analysis and reports layers of docs/architecture.md) import none of the
// recording layer's, directly or not (go list -deps).
func TestAnalysisImportsNoRecorder(t *testing.T) {
	page := pagePackages(t)
	pkgs := modulePackages(t)
	var readers []string
	for p, l := range page {
		if _, ok := pkgs[p]; ok && (l == analysis || l == reports) {
			readers = append(readers, "../../"+p)
		}
	}
	slices.Sort(readers)
	for _, dep := range deps(t, readers...) {
		p, ok := strings.CutPrefix(dep, "github.com/hwprof/hwprof/")
		if ok && page[p] == recording {
			t.Errorf("the analysis side imports %s, of the recording layer (go list -deps)", dep)
		}
	}
}

// TestOnlyCommandsImportFlag: the command line is the commands' and
// internal/perfflags' (perf record's event options); no other package
// imports flag.
func TestOnlyCommandsImportFlag(t *testing.T) {
	page := pagePackages(t)
	for p, imps := range modulePackages(t) {
		if slices.Contains(imps, "flag") && page[p] != commands && p != "internal/perfflags" {
			t.Errorf("%s imports flag: only the commands and internal/perfflags do (%s, ## Rules)", p, archPage)
		}
	}
}
