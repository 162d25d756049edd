package record

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/hwprof/hwprof/perf"
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

// SetMaxStack sets the depth of every event's call graph to n frames
// (attr.sample_max_stack; 0 leaves the kernel's limit), which the kernel
// refuses above its limit kernel.perf_event_max_stack (lim, or this
// machine's when nil).
func SetMaxStack(events []perf.Event, n uint, lim *perf.KernelLimits) error {
	if n == 0 {
		return nil
	}
	if lim == nil {
		l, err := perf.ReadKernelLimits()
		if err != nil {
			return fmt.Errorf("--max-stack: %w", err)
		}
		lim = &l
	}
	if lim.MaxStack != 0 && uint64(n) > lim.MaxStack {
		return fmt.Errorf("--max-stack %d: the kernel walks at most %d frames (kernel.perf_event_max_stack); "+
			"as root, raise the limit first: sysctl -w kernel.perf_event_max_stack=%d", n, lim.MaxStack, n)
	}
	if n > math.MaxUint16 {
		return fmt.Errorf("--max-stack %d: at most %d frames (attr.sample_max_stack is 16 bits)", n, math.MaxUint16)
	}
	set := false
	for i := range events {
		if events[i].Attr.SampleType&perf.SampleCallchain != 0 {
			events[i].Attr.SampleMaxStack = uint16(n)
			set = true
		}
	}
	if !set {
		return errors.New("--max-stack bounds call graphs, and no event records one: add -g")
	}
	return nil
}
