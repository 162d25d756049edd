package report

import "testing"

// diff's text names each function's object in brackets once: an object
// the kernel or perf names in brackets already keeps its own
// ("do_syscall_64 [kernel.kallsyms]", not "[[kernel.kallsyms]]").
func TestFuncLabel(t *testing.T) {
	for _, tc := range []struct{ name, object, want string }{
		{"main", "/usr/local/bin/app", "main [app]"},
		{"malloc", "/usr/lib/x86_64-linux-gnu/libc.so.6", "malloc [libc.so.6]"},
		{"do_syscall_64", "[kernel.kallsyms]", "do_syscall_64 [kernel.kallsyms]"},
		{"__vdso_clock_gettime", "[vdso]", "__vdso_clock_gettime [vdso]"},
		{"[unknown]", "", "[unknown]"},
	} {
		if got := funcLabel(tc.name, tc.object); got != tc.want {
			t.Errorf("funcLabel(%q, %q) = %q, want %q", tc.name, tc.object, got, tc.want)
		}
	}
}
