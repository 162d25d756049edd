// Package testprog builds the workloads of the module's top-level
// testdata directory for tests: testdata/c/NAME.c with gcc,
// testdata/cpp/NAME.cc with g++, testdata/go/NAME (a package main) with go
// build. Each program and set of flags is built once per test process,
// under a temporary directory of that process, whatever the number of
// tests asking for it and whether they run in parallel. CompileGo
// compiles a Go program's main package alone, for tests of the
// compiler's decisions (PGO inlining) without a full build.
//
// A test without the compiler skips, naming the missing tool (a fact of
// the machine, checked with exec.LookPath); a program that does not build
// fails the test. The caller provides the program's name and the
// compiler's flags; the package finds testdata from the module root (the
// nearest directory with a go.mod above the test's working directory).
// For tests only.
package testprog
