// Package testenv lets tests skip on facts of the machine, checked
// without hwprof's own code: a test that needs perf events, uprobes or a
// tool skips, naming the fact, only when the kernel or the machine lacks
// it; a failure of hwprof is then a failure, never a skip. For tests only.
package testenv
