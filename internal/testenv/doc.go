// Package testenv lets tests skip on facts of the machine, checked
// without hwprof's own code: a test that needs perf events, uprobes or a
// tool skips, naming the fact, only when the kernel or the machine lacks
// it; a failure of hwprof is then a failure, never a skip. It also holds
// LineDiff, the line diff a test prints when a text must equal a
// reference (perf's own attr blocks, a golden file). For tests only.
package testenv
