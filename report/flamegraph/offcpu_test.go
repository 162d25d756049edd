package flamegraph

import (
	"bytes"
	"encoding/json"
	"fmt"

	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// offCPUProfile is a server whose threads spend most of their lives off
// the CPU: reading a socket, waiting for a mutex, sleeping, preempted
// while computing, and once without a stack; with wall, its on-CPU time
// is of a clock event (Meta.HasWall). Off-CPU times are odd nanoseconds,
// as measured intervals are; a hundred tiny waits are too narrow to draw.
func offCPUProfile(wall bool) (Meta, []Stack) {
	m := prog("_start", "__libc_start_main", "main")
	sys := func(fs []Frame, names ...string) []Frame {
		for _, n := range names {
			fs = with(fs, kernel(n))
		}
		return fs
	}
	off := func(frames []Frame, ns float64) Stack { return Stack{Frames: frames, OffCPU: ns} }
	read := with(with(m, prog("serve", "read_request")...), libc("read"))
	stacks := []Stack{
		timed(with(m, prog("compute", "hash")...), 4000, 0),
		timed(with(m, prog("serve", "parse")...), 1200, 0),
		timed(sys(read, "entry_SYSCALL_64", "ksys_read"), 40, 0),
		off(sys(read, "entry_SYSCALL_64", "ksys_read", "schedule"), 2_500_000_017),
		off(sys(with(with(m, prog("worker")...), libc("pthread_mutex_lock")), "entry_SYSCALL_64", "futex_wait", "schedule"), 1_200_000_003),
		off(sys(with(with(m, prog("sleeper")...), libc("nanosleep")), "entry_SYSCALL_64", "hrtimer_nanosleep", "schedule"), 800_000_001),
		off(with(with(m, prog("compute", "hash")...), Frame{Name: "[preempted]", Kind: Unknown}), 300_000_007),
		off([]Frame{{Name: "[off-CPU, no stack]", Kind: Unknown}}, 5_000_011),
	}
	for i := range 100 {
		stacks = append(stacks, off(with(m, prog("serve", fmt.Sprintf("tiny_wait_%03d", i))...), 1001))
	}
	var samples uint64
	for _, s := range stacks {
		samples += s.Samples
	}
	return Meta{Command: "./server", Source: "timer", Samples: samples, HasTime: true, HasOffCPU: true, HasWall: wall}, stacks
}

// pageDataOf decodes the data a page embeds.
func pageDataOf(t *testing.T, page []byte) pageData {
	t.Helper()
	m := regexp.MustCompile(`(?s)<script type="application/json" id="hwprof-data">(.*?)</script>`).FindSubmatch(page)
	if m == nil {
		t.Fatal("no page data in the page")
	}
	var d pageData
	if err := json.Unmarshal(m[1], &d); err != nil {
		t.Fatalf("page data: %v", err)
	}
	return d
}

// sumOf is the sum of a page's weights times their unit.
func sumOf(ns numbers, unit float64) float64 {
	s := 0.0
	for _, v := range ns {
		s += v * unit
	}
	return s
}

func TestWeightStringsOffCPU(t *testing.T) {
	for w, want := range map[Weight]string{WeightOffCPU: "off-cpu", WeightWall: "wall"} {
		if w.String() != want {
			t.Errorf("%d: %q, want %q", w, w.String(), want)
		}
	}
	s := Stack{Time: 3, Samples: 1, Calls: 2, OffCPU: 10}
	for w, want := range map[Weight]float64{WeightTime: 3, WeightCalls: 2, WeightSamples: 1, WeightOffCPU: 10, WeightWall: 13} {
		if got := w.of(&s); got != want {
			t.Errorf("%v of %+v: %v, want %v", w, s, got, want)
		}
	}
}

// TestEncodeOffCPU: the page carries the time off the CPU beside the
// time on it, whole, and opens on the weight asked for when the profile
// has it: wall only with on-CPU time of a clock event, never on a
// differential page.
func TestEncodeOffCPU(t *testing.T) {
	meta, stacks := offCPUProfile(true)
	var wantTime, wantOff float64
	for _, s := range stacks {
		wantTime += s.Time
		wantOff += s.OffCPU
	}
	for _, tc := range []struct {
		wall  bool
		ask   Weight
		opens string
	}{
		{true, WeightOffCPU, "off-cpu"}, {true, WeightWall, "wall"}, {true, WeightTime, "time"},
		{false, WeightWall, "time"}, {false, WeightOffCPU, "off-cpu"},
	} {
		meta.HasWall = tc.wall
		d := pageDataOf(t, render(t, meta, stacks, Options{Weight: tc.ask}))
		if d.Weight != tc.opens || !d.Meta.HasOffCPU || d.Meta.HasWall != tc.wall {
			t.Errorf("wall %v, asked %v: opens on %q (hasOffCPU %v, hasWall %v), want %q", tc.wall, tc.ask, d.Weight, d.Meta.HasOffCPU, d.Meta.HasWall, tc.opens)
		}
		if got := sumOf(d.OffCPU, d.OffUnit); got != wantOff {
			t.Errorf("off-CPU time on the page %v, want %v", got, wantOff)
		}
		if got := sumOf(d.Time, d.TimeUnit); got != wantTime {
			t.Errorf("on-CPU time on the page %v, want %v", got, wantTime)
		}
		if len(d.OffCPU) != len(d.Depth) {
			t.Errorf("%d off-CPU weights for %d nodes", len(d.OffCPU), len(d.Depth))
		}
	}
	// Without time off the CPU the page has none, and off-cpu falls back.
	plain, pstacks := serverProfile()
	d := pageDataOf(t, render(t, plain, pstacks, Options{Weight: WeightOffCPU}))
	if d.Weight != "time" || d.OffCPU != nil || d.Meta.HasOffCPU {
		t.Errorf("a profile without off-CPU time: weight %q, off-CPU %v", d.Weight, d.OffCPU)
	}
	// A differential page compares one weight and has no off-CPU view.
	var b bytes.Buffer
	if err := WriteDiffHTML(&b, meta, meta, stacks, stacks, Options{Weight: WeightOffCPU}); err != nil {
		t.Fatal(err)
	}
	if d := pageDataOf(t, b.Bytes()); d.Weight != "time" || d.OffCPU != nil || d.Meta.HasOffCPU {
		t.Errorf("differential page: weight %q, hasOffCPU %v, %d off-CPU weights", d.Weight, d.Meta.HasOffCPU, len(d.OffCPU))
	}
}

// TestFlattenOffCPU: frames with only off-CPU time are kept under the
// narrow rule by it, tiny waits are merged, and every weight is kept.
func TestFlattenOffCPU(t *testing.T) {
	meta, stacks := offCPUProfile(true)
	tr := newTree()
	tr.add(0, stacks)
	f := tr.flatten(shownOf(meta), DefaultMinShare, false)
	var sum [numW]float64
	for _, s := range stacks {
		sum[wTime] += s.Time
		sum[wOffCPU] += s.OffCPU
	}
	for _, w := range []int{wTime, wOffCPU} {
		got := 0.0
		for _, v := range f.self[0][w] {
			got += v
		}
		if got != sum[w] {
			t.Errorf("weight %d: %v after flattening, want %v", w, got, sum[w])
		}
	}
	names := map[string]bool{}
	for _, fn := range f.fn {
		names[f.funcs[fn].Name] = true
	}
	// schedule has no time on the CPU at all; [100 narrow frames] holds the
	// tiny waits.
	for _, n := range []string{"schedule", "[preempted]", "[off-CPU, no stack]", "pthread_mutex_lock", "[100 narrow frames]"} {
		if !names[n] {
			t.Errorf("no %q frame after flattening", n)
		}
	}
	if names["tiny_wait_000"] {
		t.Error("tiny_wait_000 (1 µs of 4.8 s) is drawn on its own")
	}
}

// TestFoldedOffCPU: folded stacks by off-CPU time hold the stacks that
// waited; by wall time, every stack with both weights summed.
func TestFoldedOffCPU(t *testing.T) {
	_, stacks := offCPUProfile(true)
	for _, tc := range []struct {
		w          Weight
		lines      int
		want       float64
		timeWeight bool
	}{
		{WeightOffCPU, 5 + 100, 2_500_000_017 + 1_200_000_003 + 800_000_001 + 300_000_007 + 5_000_011 + 100*1001, false},
		{WeightWall, 8 + 100, 2_500_000_017 + 1_200_000_003 + 800_000_001 + 300_000_007 + 5_000_011 + 100*1001 + (4000+1200+40)*period, true},
	} {
		var b bytes.Buffer
		if err := WriteFolded(&b, stacks, tc.w); err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(b.String(), "\n"); n != tc.lines {
			t.Errorf("%v: %d lines, want %d:\n%s", tc.w, n, tc.lines, b.String())
		}
		// Wall time is one number a line: read back as time.
		pw := WeightOffCPU
		if tc.timeWeight {
			pw = WeightTime
		}
		back, err := ParseFolded(&b, pw)
		if err != nil {
			t.Fatal(err)
		}
		got := 0.0
		for _, s := range back {
			got += pw.of(&s)
		}
		if got != tc.want {
			t.Errorf("%v: folded stacks sum to %v, want %v", tc.w, got, tc.want)
		}
	}
	if _, err := ParseFolded(strings.NewReader("a;b 1\n"), WeightWall); err == nil {
		t.Error("ParseFolded by wall time: no error")
	}
}

// TestBrowserOffCPU: the page of a profile with time off the CPU opens on
// the weight asked for; its buttons switch CPU → Off-CPU → Wall; each
// view draws frames at their widths under that weight, says the total in
// the header, and draws off-CPU frames (all of them in Off-CPU, those
// never on the CPU in Wall) in the off-CPU palette, [preempted] apart.
func TestBrowserOffCPU(t *testing.T) {
	t.Parallel() // a page in a tab of its own; it measures no time
	meta, stacks := offCPUProfile(true)
	p := openPage(t, render(t, meta, stacks, Options{Weight: WeightTime}))
	ref := buildRef(stacks, shownOf(meta), DefaultMinShare)
	buttons := eval[[]string](p, `Array.from(document.querySelectorAll('#weights button')).map(function (b) { return b.dataset.weight + ':' + b.textContent; })`)
	if strings.Join(buttons, ",") != "time:CPU,off-cpu:Off-CPU,wall:Wall" {
		t.Errorf("weight buttons %v, want CPU, Off-CPU, Wall", buttons)
	}
	legend := eval[string](p, `document.getElementById('legend').textContent`)
	if !strings.Contains(legend, "off the CPU") || !strings.Contains(legend, "[preempted]") {
		t.Errorf("legend %q says nothing of off-CPU frames", legend)
	}
	for _, view := range []struct{ weight, button, total string }{
		{"time", "CPU", "1.31 s"}, {"off-cpu", "Off-CPU", "4.81 s"}, {"wall", "Wall", "6.12 s"},
	} {
		p.run(chromedp.Click(chromedp.CSS(`#weights button[data-weight="` + view.weight + `"]`)))
		st := p.state()
		if st.Weight != view.weight {
			t.Fatalf("weight %q after clicking %s", st.Weight, view.button)
		}
		p.checkLayout(ref)
		w := weightIndex[view.weight]
		if want := dur(ref.root.total[w]); want != view.total {
			t.Fatalf("%s: the reference's total is %s, the test expects %s", view.button, want, view.total)
		}
		if got := eval[string](p, `document.getElementById('total-shown').textContent`); got != view.total {
			t.Errorf("%s: header total %q, want %q", view.button, got, view.total)
		}
		blue, preempted, others := checkOffColours(t, p, ref, view.weight)
		switch {
		case view.weight == "time" && (blue+preempted != 0 || others == 0),
			view.weight == "off-cpu" && (blue < 5 || preempted != 1 || others != 0),
			view.weight == "wall" && (blue < 5 || preempted != 1 || others < 5):
			t.Errorf("%s view: %d frames drawn blue, %d [preempted] teal, %d in their kind's colour", view.button, blue, preempted, others)
		}
		p.screenshot("offcpu-" + view.weight)
	}
	// The tooltip gives the frame's off-CPU and wall time in time units.
	p.run(chromedp.Click(chromedp.CSS(`#weights button[data-weight="time"]`)))
	f := p.find("_start;__libc_start_main;main;compute;hash")
	tip := p.hover(f)
	n := ref.byPath[f.Path]
	if want := dur(n.total[wOffCPU]) + " total"; !strings.HasPrefix(tip["off-CPU"], want) {
		t.Errorf("hash's tooltip: off-CPU %q, want %q", tip["off-CPU"], want)
	}
	if want := dur(n.total[wWall]) + " total"; !strings.HasPrefix(tip["wall"], want) {
		t.Errorf("hash's tooltip: wall %q, want %q", tip["wall"], want)
	}
	p.run(chromedp.Click(chromedp.CSS(`#weights button[data-weight="off-cpu"]`)))
	f = p.find("_start;__libc_start_main;main;serve;read_request;read;entry_SYSCALL_64;ksys_read;schedule")
	tip = p.hover(f)
	if want := dur(ref.byPath[f.Path].total[wOffCPU]); !strings.Contains(tip["total"], "("+want+")") || !strings.HasSuffix(want, " s") {
		t.Errorf("schedule's tooltip in Off-CPU: total %q, want %s", tip["total"], want)
	}
	// A search's share is of the off-CPU time.
	const query = "^schedule$|preempted"
	share := eval[float64](p, `hwprofFlame.search(`+fmt.Sprintf("%q", query)+`)`)
	if want := ref.matchShare(stacks, regexp.MustCompile(query), wOffCPU); math.Abs(share-want) > 1e-9 || want == 0 {
		t.Errorf("search %q in Off-CPU: share %.6f, want %.6f", query, share, want)
	}
	p.checkNoNetwork()

	// Without on-CPU time of a clock event there is no Wall button.
	meta.HasWall = false
	q := openPage(t, render(t, meta, stacks, Options{Weight: WeightWall}))
	if st := q.state(); strings.Join(st.Weights, ",") != "time,off-cpu" || st.Weight != "time" {
		t.Errorf("without wall time: weights %v, shown %q", st.Weights, st.Weight)
	}
}

// checkOffColours holds every frame drawn wide enough against the rule:
// in the off-CPU palette (indigo: hue 228-262, apart from the kernel's sky blue, 198-212) exactly when its weight in
// the view is all off-CPU time, [preempted] teal (hue 160-185), and
// others in their kind's colour (not those hues). It returns how many
// frames it found of each.
func checkOffColours(t *testing.T, p *page, ref *refTree, weight string) (offBlue, preempted, others int) {
	t.Helper()
	for _, f := range p.frames() {
		if f.Depth == 0 || f.Width < 4 {
			continue
		}
		n := ref.byPath[f.Path]
		allOff := weight == "off-cpu" || weight == "wall" && n != nil && n.total[wTime] == 0
		if f.OffCPU != allOff && n != nil {
			t.Errorf("%s view: %q offcpu %v, want %v", weight, f.Path, f.OffCPU, allOff)
		}
		h := hueAt(p, f)
		switch {
		case allOff && f.Name == "[preempted]":
			preempted++
			if h < 160 || h > 185 {
				t.Errorf("%s view: [preempted] drawn at hue %.0f, want teal", weight, h)
			}
		case allOff && !IsNarrowName(f.Name):
			offBlue++
			if h < 228 || h > 262 {
				t.Errorf("%s view: off-CPU frame %q drawn at hue %.0f, want indigo (228-262)", weight, f.Path, h)
			}
		case !allOff:
			others++
			if h >= 160 && h <= 185 || h >= 225 && h <= 265 {
				t.Errorf("%s view: frame %q, on the CPU too, drawn at hue %.0f, in the off-CPU palette", weight, f.Path, h)
			}
			// In Wall, a bar along its top as long as its share off the
			// CPU: sampled at its first pixels, where it is long enough.
			if n == nil || weight != "wall" || n.total[wOffCPU]/n.total[wWall]*f.Width < 3 {
				continue
			}
			if bh := hueOf(p, f.X+1.5, f.Y+1.5); bh < 228 || bh > 262 {
				t.Errorf("wall view: frame %q, %.0f%% off the CPU, has no off-CPU bar (hue %.0f atop it)", f.Path, 100*n.total[wOffCPU]/n.total[wWall], bh)
			}
		}
	}
	return offBlue, preempted, others
}

// IsNarrowName reports whether name is a merged "[N narrow frames]" frame.
func IsNarrowName(name string) bool { return narrowName.MatchString(name) }

// hueAt is the hue of frame f's pixel at its top left, clear of its label.
func hueAt(p *page, f drawnFrame) float64 { return hueOf(p, f.X+1.5, f.Y+3) }

// hueOf is the hue of the canvas's pixel at x, y (CSS pixels).
func hueOf(p *page, x, y float64) float64 {
	rgb := eval[[]int](p, fmt.Sprintf(`(function(){ var c = document.getElementById('flame'), r = window.devicePixelRatio || 1;
		var d = c.getContext('2d').getImageData(Math.floor(%f * r), Math.floor(%f * r), 1, 1).data; return [d[0], d[1], d[2]]; })()`,
		x, y))
	r, g, b := float64(rgb[0])/255, float64(rgb[1])/255, float64(rgb[2])/255
	mx, mn := math.Max(r, math.Max(g, b)), math.Min(r, math.Min(g, b))
	if mx == mn {
		return -1 // grey
	}
	var h float64
	switch mx {
	case r:
		h = math.Mod((g-b)/(mx-mn), 6)
	case g:
		h = (b-r)/(mx-mn) + 2
	default:
		h = (r-g)/(mx-mn) + 4
	}
	h *= 60
	if h < 0 {
		h += 360
	}
	return h
}

// dur formats nanoseconds as the page does.
func dur(ns float64) string {
	a := math.Abs(ns)
	switch {
	case a >= 1e9:
		return fmt.Sprintf("%.*f s", map[bool]int{true: 0, false: 2}[a >= 1e11], ns/1e9)
	case a >= 1e6:
		return fmt.Sprintf("%.*f ms", map[bool]int{true: 0, false: 2}[a >= 1e8], ns/1e6)
	case a >= 1e3:
		return fmt.Sprintf("%.*f µs", map[bool]int{true: 0, false: 2}[a >= 1e5], ns/1e3)
	}
	return fmt.Sprintf("%d ns", int64(math.Round(ns)))
}
