package flamegraph

import (
	_ "embed"
	"fmt"
	"html"
	"io"
	"strings"
)

// The page's parts, kept as files so that they read as HTML, CSS and
// JavaScript; WriteHTML inlines all three.
var (
	//go:embed page.html
	pageHTML string
	//go:embed page.css
	pageCSS string
	//go:embed page.js
	pageJS string
)

// WriteHTML writes the flame graph of stacks as one self-contained HTML
// page.
func WriteHTML(w io.Writer, meta Meta, stacks []Stack, opt Options) error {
	t := newTree()
	t.add(0, stacks)
	return writePage(w, t, meta, nil, opt)
}

// WriteDiffHTML writes a differential flame graph: the frames of the new
// profile, red where a frame's share of its profile grew against the base,
// blue where it shrank (Brendan Gregg's differential flame graphs). Shares,
// not absolute weights, are compared, so profiles of different lengths
// compare fairly. Frames only the base has are not drawn; their weight
// still counts in the base's shares. The calls weight is offered only when
// both profiles have calls, time only when both have time.
func WriteDiffHTML(w io.Writer, base, new Meta, baseStacks, newStacks []Stack, opt Options) error {
	t := newTree()
	t.add(0, newStacks)
	t.add(1, baseStacks)
	return writePage(w, t, new, &base, opt)
}

func writePage(w io.Writer, t *tree, meta Meta, base *Meta, opt Options) error {
	hasTime, hasCalls := meta.HasTime, meta.HasCalls
	// A differential page compares the weight the diff chose; it has no
	// off-CPU view.
	hasOff := meta.HasOffCPU && base == nil
	hasWall := hasOff && meta.HasWall
	if base != nil {
		hasTime = hasTime && base.HasTime
		hasCalls = hasCalls && base.HasCalls
	}
	var shown []int
	if hasTime {
		shown = append(shown, wTime)
	}
	if hasCalls {
		shown = append(shown, wCalls)
	}
	// A frame narrow on and off the CPU is narrow in wall time too: its
	// sum is below the sum of the two bounds.
	if hasOff {
		shown = append(shown, wOffCPU)
	}
	weight := opt.Weight
	switch {
	case weight == WeightCalls && hasCalls, weight == WeightTime && hasTime,
		weight == WeightOffCPU && hasOff, weight == WeightWall && hasWall:
	case hasTime:
		weight = WeightTime
	case hasCalls:
		weight = WeightCalls
	case hasOff:
		weight = WeightOffCPU
	default:
		weight = WeightSamples
		shown = []int{wSamples}
	}
	if opt.MinShare == 0 {
		opt.MinShare = DefaultMinShare
	}
	f := t.flatten(shown, opt.MinShare, base != nil)
	data, err := encode(f, meta, base, opt, weight)
	if err != nil {
		return fmt.Errorf("flame graph: encode: %w", err)
	}
	title := meta.Title
	if title == "" {
		title = "hwprof flame graph"
		if base != nil {
			title = "hwprof differential flame graph"
		}
	}
	page := strings.NewReplacer(
		"{{TITLE}}", html.EscapeString(title),
		"/*{{CSS}}*/", pageCSS,
		"{{DATA}}", string(data), // encoding/json escapes <, > and &: no "</script>" inside
		"/*{{JS}}*/", pageJS,
	).Replace(pageHTML)
	if _, err := io.WriteString(w, page); err != nil {
		return fmt.Errorf("flame graph: write: %w", err)
	}
	return nil
}
