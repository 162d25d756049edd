package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// The repository's root, seen from this package's directory.
const repoRoot = "../.."

// The README is what a newcomer reads in five minutes: everything longer
// lives in docs/.
func TestReadmeLength(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(readme), "\n"); n > 200 {
		t.Errorf("README.md has %d lines, want at most 200: move the detail to docs/", n)
	}
}

// Every relative link of README.md and docs/*.md names a file that
// exists and, for a Markdown file, a heading that exists (GitHub's anchor
// of it); every file of docs/ is linked from the README.
func TestReadmeAndDocsLinks(t *testing.T) {
	docs, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := append([]string{filepath.Join(repoRoot, "README.md")}, docs...)
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		a := headingAnchors(string(text))
		anchors[path] = a
		return a
	}
	fromReadme := map[string]bool{}
	for _, file := range files {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := filepath.Rel(repoRoot, file)
		for _, link := range markdownLinks(string(text)) {
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			target, anchor, _ := strings.Cut(link, "#")
			path := file
			if target != "" {
				path = filepath.Join(filepath.Dir(file), target)
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s: link %q: %v", name, link, err)
					continue
				}
				if file == files[0] {
					fromReadme[filepath.Clean(path)] = true
				}
			}
			if anchor != "" && strings.HasSuffix(path, ".md") && !anchorsOf(path)[anchor] {
				t.Errorf("%s: link %q: no heading with the anchor #%s", name, link, anchor)
			}
		}
	}
	for _, doc := range docs {
		if !fromReadme[filepath.Clean(doc)] {
			t.Errorf("docs/%s is not linked from README.md", filepath.Base(doc))
		}
	}
}

// Every package's doc comment says what the package does, does not do and
// needs in under 80 lines; lab results and long explanations go to docs/.
func TestReadmeDocsPackageComments(t *testing.T) {
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && path != repoRoot) {
			return filepath.SkipDir
		}
		if d.IsDir() || d.Name() != "doc.go" {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.PackageClauseOnly)
		if err != nil {
			return err
		}
		name, _ := filepath.Rel(repoRoot, path)
		if f.Doc == nil {
			t.Errorf("%s has no package comment", name)
			return nil
		}
		lines := fset.Position(f.Doc.End()).Line - fset.Position(f.Doc.Pos()).Line + 1
		if lines >= 80 {
			t.Errorf("%s: the package comment is %d lines, want under 80: move the detail to docs/", name, lines)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

var (
	fenceLine  = regexp.MustCompile("^\\s*(```|~~~)")
	inlineCode = regexp.MustCompile("`[^`]*`")
	linkTarget = regexp.MustCompile(`\]\(([^)\s]+)\)`)
)

// markdownLines calls f with each line of text outside fenced code blocks.
func markdownLines(text string, f func(line string)) {
	fenced := false
	for line := range strings.Lines(text) {
		if fenceLine.MatchString(line) {
			fenced = !fenced
			continue
		}
		if !fenced {
			f(strings.TrimRight(line, "\n"))
		}
	}
}

// markdownLinks returns the targets of the inline links of text, outside
// code.
func markdownLinks(text string) []string {
	var links []string
	markdownLines(text, func(line string) {
		for _, m := range linkTarget.FindAllStringSubmatch(inlineCode.ReplaceAllString(line, ""), -1) {
			links = append(links, m[1])
		}
	})
	return links
}

// headingAnchors returns the anchors GitHub gives the headings of text:
// lower case, letters, digits, spaces, hyphens and underscores kept,
// spaces made hyphens, a repeated anchor numbered -1, -2, ...
func headingAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	markdownLines(text, func(line string) {
		if !strings.HasPrefix(line, "#") {
			return
		}
		title := strings.TrimLeft(line, "#")
		if !strings.HasPrefix(title, " ") {
			return
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(title)) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		slug := b.String()
		if n := seen[slug]; n > 0 {
			anchors[slug+"-"+strconv.Itoa(n)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	})
	return anchors
}
