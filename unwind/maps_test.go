package unwind

import "github.com/hwprof/hwprof/internal/procmap"

// hwprof's process model is a Maps, and a rangeMaps.
var (
	_ Maps      = (*procmap.Map)(nil)
	_ rangeMaps = (*procmap.Map)(nil)
)

// path is the recorded path of a frame's object, "" when it has none.
func objPath(f Frame) string {
	if f.Object == nil {
		return ""
	}
	return f.Object.Path
}
