package event

import (
	"slices"
	"strings"

	"github.com/hwprof/hwprof/perf"
)

// For attr_perf_test.go, an external test: it parses perf's options with
// internal/perfflags, which imports this package.

// HardwareEventNames are the hardware event names of perf's lexer, sorted.
func HardwareEventNames() []string {
	var names []string
	for name, ev := range symbolicEvents {
		if ev.typ == perf.TypeHardware {
			names = append(names, name)
		}
	}
	slices.SortFunc(names, strings.Compare)
	return names
}
