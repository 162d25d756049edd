package flamegraph

import (
	"encoding/json"
	"math"
	"strconv"
)

// The page's data, embedded as JSON. The tree is a set of parallel arrays
// in depth-first order (a node's parent is the nearest earlier node one
// level up), functions are indices into a function table and names and
// objects indices into a string table, so a name is written once however
// many frames show it. Self weights are written, not totals: most inner
// frames have none, and the script sums totals in one backward pass.
type pageData struct {
	Version int       `json:"v"`
	Meta    pageMeta  `json:"meta"`
	Base    *pageMeta `json:"base,omitempty"` // the base profile of a diff
	Strings []string  `json:"strings"`
	Kinds   []string  `json:"kinds"`
	Funcs   []int32   `json:"funcs"` // name, object (-1: none), kind: three per function
	Depth   []int32   `json:"depth"`
	Fn      []int32   `json:"fn"`
	// Weights, self per node. Time is in units of TimeUnit nanoseconds
	// (the greatest common divisor of the integral times, else 1).
	TimeUnit float64 `json:"timeUnit"`
	Time     numbers `json:"time,omitempty"`
	Samples  numbers `json:"samples"`
	Calls    numbers `json:"calls,omitempty"`
	// OffCPU is the time off the CPU, in units of OffUnit nanoseconds,
	// of a profile with Meta.HasOffCPU; the page's wall time is Time +
	// OffCPU when Meta.HasWall.
	OffUnit  float64 `json:"offUnit,omitempty"`
	OffCPU   numbers `json:"offcpu,omitempty"`
	BTime    numbers `json:"btime,omitempty"`
	BSamples numbers `json:"bsamples,omitempty"`
	BCalls   numbers `json:"bcalls,omitempty"`
	Weight   string  `json:"weight"`
	Icicle   bool    `json:"icicle"`
	MinShare float64 `json:"minShare"`
}

type pageMeta struct {
	Title     string   `json:"title"`
	Command   string   `json:"command"`
	Source    string   `json:"source"`
	Samples   uint64   `json:"samples"`
	Lost      uint64   `json:"lost"`
	Throttled uint64   `json:"throttled"`
	HasTime   bool     `json:"hasTime"`
	HasCalls  bool     `json:"hasCalls"`
	HasOffCPU bool     `json:"hasOffCPU"`
	HasWall   bool     `json:"hasWall"`
	Warnings  []string `json:"warnings"`
}

func toPageMeta(m Meta) pageMeta {
	w := m.Warnings
	if w == nil {
		w = []string{}
	}
	return pageMeta{m.Title, m.Command, m.Source, m.Samples, m.Lost, m.Throttled, m.HasTime, m.HasCalls, m.HasOffCPU, m.HasWall, w}
}

// numbers is a list of weights written as compactly as JSON allows:
// integers without a fraction, others with 7 significant digits.
type numbers []float64

func (ns numbers) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 2+len(ns)*3)
	b = append(b, '[')
	for i, v := range ns {
		if i > 0 {
			b = append(b, ',')
		}
		switch {
		case math.IsNaN(v) || math.IsInf(v, 0):
			b = append(b, '0')
		case v == math.Trunc(v) && math.Abs(v) < 1e15:
			b = strconv.AppendInt(b, int64(v), 10)
		default:
			b = strconv.AppendFloat(b, v, 'g', 7, 64)
		}
	}
	return append(b, ']'), nil
}

// timeUnit returns the greatest common divisor of the times when they are
// all integral (typically the sampling period), else 1.
func timeUnit(vs ...[]float64) float64 {
	var g uint64
	for _, v := range vs {
		for _, x := range v {
			if x == 0 {
				continue
			}
			if x < 0 || x != math.Trunc(x) || x >= 1<<53 {
				return 1
			}
			a, b := uint64(x), g
			for b != 0 {
				a, b = b, a%b
			}
			g = a
		}
	}
	if g == 0 {
		return 1
	}
	return float64(g)
}

func scaled(v []float64, unit float64) numbers {
	out := make(numbers, len(v))
	for i, x := range v {
		out[i] = x / unit
	}
	return out
}

// encode builds the page data of f.
func encode(f *flat, meta Meta, base *Meta, opt Options, weight Weight) ([]byte, error) {
	d := pageData{
		Version:  1,
		Meta:     toPageMeta(meta),
		Depth:    f.depth,
		Fn:       f.fn,
		Samples:  f.self[0][wSamples],
		Weight:   weight.String(),
		Icicle:   opt.Icicle,
		MinShare: opt.MinShare,
	}
	for k := range kindNarrow + 1 {
		if k == kindNarrow {
			d.Kinds = append(d.Kinds, "narrow")
		} else {
			d.Kinds = append(d.Kinds, k.String())
		}
	}
	strs := map[string]int32{}
	str := func(s string) int32 {
		if id, ok := strs[s]; ok {
			return id
		}
		id := int32(len(d.Strings))
		d.Strings = append(d.Strings, s)
		strs[s] = id
		return id
	}
	for _, fn := range f.funcs {
		obj := int32(-1)
		if fn.Object != "" {
			obj = str(fn.Object)
		}
		d.Funcs = append(d.Funcs, str(fn.Name), obj, int32(fn.Kind))
	}
	hasTime, hasCalls := meta.HasTime, meta.HasCalls
	if base != nil {
		b := toPageMeta(*base)
		d.Base = &b
		hasTime = hasTime && base.HasTime
		hasCalls = hasCalls && base.HasCalls
	}
	d.Meta.HasTime, d.Meta.HasCalls = hasTime, hasCalls
	// A differential page has no off-CPU view (writePage).
	d.Meta.HasOffCPU = meta.HasOffCPU && base == nil
	d.Meta.HasWall = d.Meta.HasOffCPU && meta.HasWall
	if d.Meta.HasOffCPU {
		d.OffUnit = timeUnit(f.self[0][wOffCPU])
		d.OffCPU = scaled(f.self[0][wOffCPU], d.OffUnit)
	}
	if hasTime {
		d.TimeUnit = timeUnit(f.self[0][wTime], f.self[1][wTime])
		d.Time = scaled(f.self[0][wTime], d.TimeUnit)
	} else {
		d.TimeUnit = 1
	}
	if hasCalls {
		d.Calls = f.self[0][wCalls]
	}
	if base != nil {
		d.BSamples = f.self[1][wSamples]
		if hasTime {
			d.BTime = scaled(f.self[1][wTime], d.TimeUnit)
		}
		if hasCalls {
			d.BCalls = f.self[1][wCalls]
		}
	}
	return json.Marshal(d)
}
