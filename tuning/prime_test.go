package tuning

import "testing"

func TestIsPrime(t *testing.T) {
	rows := []struct {
		n     uint64
		prime bool
	}{
		{0, false}, {1, false}, {2, true}, {3, true}, {4, false}, {37, true}, {41, true},
		{561, false},                       // Carmichael
		{1_000_003, true},                  // the usual -c
		{100_003, true},                    // the Count start
		{999_999_937, true},                // the largest prime under 10^9
		{3_215_031_751, false},             // strong pseudoprime to bases 2, 3, 5, 7
		{4_294_967_291, true},              // the largest 32-bit prime
		{2_305_843_009_213_693_951, true},  // 2^61 - 1
		{18_446_744_073_709_551_557, true}, // the largest 64-bit prime
		{18_446_744_073_709_551_615, false},
	}
	for _, row := range rows {
		if got := isPrime(row.n); got != row.prime {
			t.Errorf("isPrime(%d) = %v", row.n, got)
		}
	}
	// Against trial division for the small numbers.
	for n := uint64(0); n < 20000; n++ {
		want := n >= 2
		for d := uint64(2); d*d <= n; d++ {
			if n%d == 0 {
				want = false
				break
			}
		}
		if isPrime(n) != want {
			t.Fatalf("isPrime(%d) = %v", n, !want)
		}
	}
}

func TestNextPrevPrime(t *testing.T) {
	rows := []struct{ n, next, prev uint64 }{
		{0, 2, 0}, {2, 2, 2}, {3, 3, 3}, {8, 11, 7}, {1000, 1009, 997},
		{1_000_000, 1_000_003, 999_983},
		{18_446_744_073_709_551_558, 0, 18_446_744_073_709_551_557},
	}
	for _, row := range rows {
		if got := nextPrime(row.n); got != row.next {
			t.Errorf("nextPrime(%d) = %d, want %d", row.n, got, row.next)
		}
		if got := prevPrime(row.n); got != row.prev {
			t.Errorf("prevPrime(%d) = %d, want %d", row.n, got, row.prev)
		}
	}
}
