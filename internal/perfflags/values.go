package perfflags

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ParsePIDs reads a -p list: "PID[,PID...]", each a positive number.
func ParsePIDs(s string) ([]int, error) {
	var pids []int
	for p := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("bad pid %q in -p %s", p, s)
		}
		pids = append(pids, n)
	}
	return pids, nil
}

// ParseRingSize reads -m: a page count (a power of two) or a size with a
// K, M or G suffix, rounded up to a power of two pages as perf does. It
// returns the number of data pages of each ring.
func ParseRingSize(s string) (int, error) {
	if s == "" {
		return 0, errors.New("bad ring size -m: empty; want pages (a power of two) or a size like 512K")
	}
	page := os.Getpagesize()
	mult := 0
	switch strings.ToUpper(s[len(s)-1:]) {
	case "K":
		mult = 1 << 10
	case "M":
		mult = 1 << 20
	case "G":
		mult = 1 << 30
	}
	num := s
	if mult != 0 {
		num = s[:len(s)-1]
	}
	n, err := strconv.ParseUint(num, 10, 32)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("bad ring size -m %s: want pages (a power of two) or a size like 512K", s)
	}
	if mult == 0 {
		if n&(n-1) != 0 {
			return 0, fmt.Errorf("bad ring size -m %s: the number of pages must be a power of two", s)
		}
		return int(n), nil
	}
	pages := 1
	for uint64(pages*page) < n*uint64(mult) {
		pages <<= 1
	}
	return pages, nil
}
