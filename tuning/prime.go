package tuning

import "math/bits"

// isPrime reports whether n is prime. Miller–Rabin with the first twelve
// primes as witnesses is exact for every 64-bit n, and with the first four
// for n < 3,215,031,751 (every period of a 32-bit range).
func isPrime(n uint64) bool {
	if n < 2 {
		return false
	}
	witnesses := [...]uint64{2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37}
	for _, p := range witnesses {
		if n%p == 0 {
			return n == p
		}
	}
	d, s := n-1, 0
	for d%2 == 0 {
		d /= 2
		s++
	}
	use := witnesses[:]
	if n < 3_215_031_751 {
		use = witnesses[:4]
	}
	for _, a := range use {
		if !strongProbablePrime(n, a, d, s) {
			return false
		}
	}
	return true
}

// strongProbablePrime is one Miller–Rabin round: n-1 = d·2^s, witness a.
func strongProbablePrime(n, a, d uint64, s int) bool {
	x := powMod(a, d, n)
	if x == 1 || x == n-1 {
		return true
	}
	for range s - 1 {
		x = mulMod(x, x, n)
		if x == n-1 {
			return true
		}
	}
	return false
}

func mulMod(a, b, m uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	_, r := bits.Div64(hi%m, lo, m)
	return r
}

func powMod(b, e, m uint64) uint64 {
	r := uint64(1)
	b %= m
	for ; e > 0; e >>= 1 {
		if e&1 == 1 {
			r = mulMod(r, b, m)
		}
		b = mulMod(b, b, m)
	}
	return r
}

// nextPrime returns the smallest prime ≥ n (0 if there is none below 2^64).
func nextPrime(n uint64) uint64 {
	if n <= 2 {
		return 2
	}
	if n%2 == 0 {
		n++
	}
	for ; n >= 3; n += 2 {
		if isPrime(n) {
			return n
		}
	}
	return 0
}

// prevPrime returns the largest prime ≤ n (0 if n < 2).
func prevPrime(n uint64) uint64 {
	if n < 2 {
		return 0
	}
	if n == 2 {
		return 2
	}
	if n%2 == 0 {
		n--
	}
	for ; n >= 3; n -= 2 {
		if isPrime(n) {
			return n
		}
	}
	return 2
}
