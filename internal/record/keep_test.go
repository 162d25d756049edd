package record

import (
	"os"
	"path/filepath"
	"testing"
)

// TestKeepAs: a kept JIT file goes where no file of its name is; over an
// earlier, shorter copy of the same file (another recording of the same
// process that ended first), not over a longer one, never over another
// file or a link.
func TestKeepAs(t *testing.T) {
	dir := t.TempDir()
	srcPath := filepath.Join(dir, "src")
	if err := os.WriteFile(srcPath, []byte("abcdef"), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(srcPath)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	other := filepath.Join(dir, "other")
	os.WriteFile(other, []byte("zz"), 0o644)
	for _, tc := range []struct {
		name, before string // "": no file; "->": a link to other
		want         string
		fails        bool
	}{
		{"absent", "", "abcdef", false},
		{"an earlier copy", "abc", "abcdef", false},
		{"a longer copy", "abcdefgh", "abcdefgh", false},
		{"the same", "abcdef", "abcdef", false},
		{"another file", "xyz", "xyz", true},
		{"a link", "->", "zz", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := filepath.Join(dir, "jit-"+tc.name+".dump")
			switch tc.before {
			case "":
			case "->":
				os.Symlink(other, dst)
			default:
				os.WriteFile(dst, []byte(tc.before), 0o644)
			}
			err := keepAs(src, dst)
			if (err != nil) != tc.fails {
				t.Errorf("keepAs: %v, want failure %v", err, tc.fails)
			}
			if b, _ := os.ReadFile(dst); string(b) != tc.want {
				t.Errorf("%s holds %q, want %q", dst, b, tc.want)
			}
			if tc.before == "->" {
				if fi, err := os.Lstat(dst); err != nil || fi.Mode()&os.ModeSymlink == 0 {
					t.Errorf("the link was replaced: %v", err)
				}
			}
			if left, _ := filepath.Glob(filepath.Join(dir, ".hwprof-keep-*")); len(left) > 0 {
				t.Errorf("temporary files left: %v", left)
			}
		})
	}
}
