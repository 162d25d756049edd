package tuning

import "testing"

// lbrWindow returns LBR entries newest first: branch i goes from i to i+1.
func lbrWindow(newest, n int) []Branch {
	w := make([]Branch, n)
	for i := range w {
		b := uint64(newest - i)
		w[i] = Branch{From: b, To: b + 1}
	}
	return w
}

func TestWindowOverlap(t *testing.T) {
	loop := []Branch{{0x10, 0x20}, {0x10, 0x20}, {0x10, 0x20}, {0x10, 0x20}}
	rows := []struct {
		name      string
		prev, cur []Branch
		want      float64
	}{
		{"no branch in between", lbrWindow(100, 32), lbrWindow(100, 32), 1},
		{"8 branches in between", lbrWindow(100, 32), lbrWindow(108, 32), 24.0 / 32},
		{"31 branches in between", lbrWindow(100, 32), lbrWindow(131, 32), 1.0 / 32},
		{"32 or more in between", lbrWindow(100, 32), lbrWindow(132, 32), 0},
		{"far apart", lbrWindow(100, 32), lbrWindow(10000, 32), 0},
		{"a shorter previous window", lbrWindow(100, 8), lbrWindow(104, 16), 8.0 / 16},
		{"a shorter current window", lbrWindow(100, 16), lbrWindow(102, 8), 6.0 / 8},
		{"a loop repeating one branch looks like no progress", loop, loop, 1},
		{"empty current", lbrWindow(100, 8), nil, 0},
		{"empty previous", nil, lbrWindow(100, 8), 0},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			if got := WindowOverlap(row.prev, row.cur); abs(got-row.want) > 1e-12 {
				t.Errorf("WindowOverlap = %g, want %g", got, row.want)
			}
		})
	}
	prev, cur := lbrWindow(100, 32), lbrWindow(110, 32)
	if allocs := testing.AllocsPerRun(100, func() { WindowOverlap(prev, cur) }); allocs != 0 {
		t.Errorf("WindowOverlap allocates %v times", allocs)
	}
}
