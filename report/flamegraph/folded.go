package flamegraph

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// foldedName is a frame's name in folded stacks: ';' separates frames
// there, so it becomes ':' (as stackcollapse-perf.pl does), and line
// breaks become spaces; an empty name is "[unknown]". No "_[k]"-style kind
// suffix is added: stackcollapse-perf.pl adds none by default either, so
// both fold the same recording to the same lines.
func foldedName(f Frame) string {
	n := strings.Map(func(r rune) rune {
		switch r {
		case ';':
			return ':'
		case '\n', '\r':
			return ' '
		}
		return r
	}, f.Name)
	if n == "" {
		n = "[unknown]"
	}
	return n
}

// WriteFolded writes stacks as folded stacks, "root;...;leaf weight" one
// per line, the input of flamegraph.pl. Equal stacks are summed, lines are
// sorted by stack, weights are rounded to integers (time in nanoseconds)
// and stacks whose weight rounds to 0 are left out, as flamegraph.pl would
// draw nothing for them. A stack without frames is written as "[no stack]".
func WriteFolded(w io.Writer, stacks []Stack, weight Weight) error {
	if weight > WeightWall {
		return fmt.Errorf("folded stacks: unknown weight %v", weight)
	}
	sums := map[string]float64{}
	var b strings.Builder
	for i := range stacks {
		s := &stacks[i]
		b.Reset()
		for j, f := range s.Frames {
			if j > 0 {
				b.WriteByte(';')
			}
			b.WriteString(foldedName(f))
		}
		if len(s.Frames) == 0 {
			b.WriteString("[no stack]")
		}
		sums[b.String()] += weight.of(s)
	}
	keys := make([]string, 0, len(sums))
	for k := range sums {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	bw := bufio.NewWriter(w)
	for _, k := range keys {
		v := math.Round(sums[k])
		if v < 1 || math.IsInf(v, 0) {
			continue
		}
		bw.WriteString(k)
		bw.WriteByte(' ')
		bw.WriteString(strconv.FormatFloat(v, 'f', 0, 64))
		bw.WriteByte('\n')
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("folded stacks: write: %w", err)
	}
	return nil
}

// ParseFolded reads folded stacks ("frame;frame;frame weight" lines, as
// written by WriteFolded, stackcollapse-perf.pl and inferno) into Stacks,
// putting each line's weight into the field weight selects (not
// WeightWall: a line's one weight cannot be split into the time on the
// CPU and off it; read it as WeightTime). Frames ending
// in "_[k]" are Kernel frames and in "_[j]" JIT frames (the suffix is
// removed); "_[i]" (inlined) is dropped and others are Unknown. Blank lines
// are skipped; a line without a weight is an error naming the line.
func ParseFolded(r io.Reader, weight Weight) ([]Stack, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	var out []Stack
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimRight(sc.Text(), " \t\r")
		if text == "" {
			continue
		}
		sp := strings.LastIndexAny(text, " \t")
		if sp < 0 {
			return nil, fmt.Errorf("folded stacks: line %d: no weight", line)
		}
		v, err := strconv.ParseFloat(text[sp+1:], 64)
		if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
			return nil, fmt.Errorf("folded stacks: line %d: bad weight %q", line, text[sp+1:])
		}
		s := Stack{}
		for _, name := range strings.Split(strings.TrimRight(text[:sp], " \t"), ";") {
			s.Frames = append(s.Frames, parseFoldedFrame(name))
		}
		switch weight {
		case WeightTime:
			s.Time = v
		case WeightCalls:
			s.Calls = v
		case WeightOffCPU:
			s.OffCPU = v
		case WeightSamples:
			if v != math.Trunc(v) {
				return nil, fmt.Errorf("folded stacks: line %d: fractional sample count %q", line, text[sp+1:])
			}
			s.Samples = uint64(v)
		default:
			return nil, fmt.Errorf("folded stacks: unknown weight %v", weight)
		}
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("folded stacks: read: %w", err)
	}
	return out, nil
}

func parseFoldedFrame(name string) Frame {
	switch {
	case strings.HasSuffix(name, "_[k]"):
		return Frame{Name: name[:len(name)-4], Kind: Kernel}
	case strings.HasSuffix(name, "_[j]"):
		return Frame{Name: name[:len(name)-4], Kind: JIT}
	case strings.HasSuffix(name, "_[i]"):
		return Frame{Name: name[:len(name)-4]}
	}
	return Frame{Name: name}
}
