package script

import (
	"strconv"

	"github.com/hwprof/hwprof/perf/perfdata"
)

// appendPadLeft appends s right-aligned in width columns (%*s).
func appendPadLeft(b []byte, s string, width int) []byte {
	for range width - len(s) {
		b = append(b, ' ')
	}
	return append(b, s...)
}

// appendPadRight appends s left-aligned in width columns (%-*s).
func appendPadRight(b []byte, s string, width int) []byte {
	b = append(b, s...)
	for range width - len(s) {
		b = append(b, ' ')
	}
	return b
}

// appendHexPad appends v in hex right-aligned in width columns (%*x).
func appendHexPad(b []byte, v uint64, width int) []byte {
	return appendPadded(b, v, 16, width, ' ')
}

// appendZeroPad appends v in decimal with leading zeros to width (%0*d).
func appendZeroPad(b []byte, v uint64, width int) []byte {
	return appendPadded(b, v, 10, width, '0')
}

// appendPadded appends v in base, padded on the left with pad to width.
func appendPadded(b []byte, v uint64, base, width int, pad byte) []byte {
	var buf [20]byte
	d := strconv.AppendUint(buf[:0], v, base)
	for range width - len(d) {
		b = append(b, pad)
	}
	return append(b, d...)
}

// appendTime appends a perf clock time as seconds.microseconds.
func appendTime(b []byte, t uint64) []byte {
	b = strconv.AppendUint(b, t/1e9, 10)
	b = append(b, '.')
	return appendZeroPad(b, t%1e9/1e3, 6)
}

func eventName(attrs []perfdata.EventAttr, ev int) string {
	switch {
	case ev >= 0 && ev < len(attrs):
		return attrs[ev].Name
	case len(attrs) == 1:
		return attrs[0].Name
	}
	return "[unknown]"
}

func (p *Printer) commOf(s scriptSample) string {
	if s.comm < 0 {
		return ":" + strconv.FormatUint(uint64(s.pid), 10)
	}
	return p.commList[s.comm]
}
