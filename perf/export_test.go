package perf

import (
	"slices"
	"strings"
)

// For attr_perf_test.go, an external test: it parses perf's options with
// internal/perfflags, which imports this package.

// HardwareEventNames are the hardware event names of perf's lexer, sorted.
func HardwareEventNames() []string {
	var names []string
	for name, ev := range symbolicEvents {
		if ev.typ == TypeHardware {
			names = append(names, name)
		}
	}
	slices.SortFunc(names, strings.Compare)
	return names
}

// LineDiff is lineDiff (printattr_test.go).
var LineDiff = lineDiff
