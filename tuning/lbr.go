package tuning

// Branch is one LBR entry as far as overlap is concerned: the branch's
// source and target addresses (from and to of struct perf_branch_entry
// in <linux/perf_event.h>).
type Branch struct {
	From, To uint64
}

// WindowOverlap returns the share of cur, a thread's LBR window, that
// repeats entries of prev, the same thread's previous window: 1 when no
// branch was taken in between, 0 when the windows share nothing. Both
// are in the kernel's order, newest entry first, so when k branches were
// recorded between the samples cur[k:] continues as prev does; the
// overlap is the number of entries they share from there, over len(cur),
// for the smallest such k.
//
// Windows of a loop that repeats the same branch look alike at any
// distance and read as overlapping: their samples add little new
// information either. It does not allocate.
func WindowOverlap(prev, cur []Branch) float64 {
	n := len(cur)
	if n == 0 || len(prev) == 0 {
		return 0
	}
	for k := range n {
		m := min(n-k, len(prev))
		if equalBranches(cur[k:k+m], prev[:m]) {
			return float64(m) / float64(n)
		}
	}
	return 0
}

func equalBranches(a, b []Branch) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
