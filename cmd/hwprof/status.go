package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/hwprof/hwprof/internal/record"
	"github.com/hwprof/hwprof/perf"
	"golang.org/x/sys/unix"
)

// statusLine is the live line `hwprof record` keeps on a terminal's
// stderr: elapsed time, samples, lost samples and the period in force,
// redrawn in place about twice a second. Everything written through it
// first erases the line, so the final summary and any error stand alone.
type statusLine struct {
	w     io.Writer
	fd    int  // the terminal's descriptor, -1 when w is not a terminal
	shown bool // a status line is on the screen
}

// statusAfter is how long a recording runs before its status line
// appears: short recordings show none.
const statusAfter = time.Second

func newStatusLine(w io.Writer) *statusLine {
	s := &statusLine{w: w, fd: -1}
	if f, ok := w.(*os.File); ok {
		if _, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS); err == nil {
			s.fd = int(f.Fd())
		}
	}
	return s
}

// live reports whether the line can be shown: w is a terminal.
func (s *statusLine) live() bool { return s.fd >= 0 }

func (s *statusLine) Write(p []byte) (int, error) {
	s.clear()
	return s.w.Write(p)
}

// clear erases the status line if one is shown.
func (s *statusLine) clear() {
	if s.shown {
		io.WriteString(s.w, "\r\033[K")
		s.shown = false
	}
}

// show returns the record.Options.Status callback that draws the line
// for the events of o.
func (s *statusLine) show(o record.Options) func(record.Status) {
	return func(st record.Status) {
		if st.Elapsed < statusAfter {
			return
		}
		line := statusText(o.Events, st)
		if ws, err := unix.IoctlGetWinsize(s.fd, unix.TIOCGWINSZ); err == nil && ws.Col > 1 && len(line) >= int(ws.Col) {
			line = line[:ws.Col-1] // a wrapped line could not be erased in place
		}
		io.WriteString(s.w, "\r\033[K"+line)
		s.shown = true
	}
}

// statusText is the status line's text: "hwprof: 12.0s, 48210 samples,
// 0 lost, cpu-clock period 250000".
func statusText(events []perf.Event, st record.Status) string {
	parts := []string{fmt.Sprintf("hwprof: %.1fs, %d samples, %d lost", st.Elapsed.Seconds(), st.Samples, st.Lost)}
	const show = 2
	n := 0
	for i, ev := range events {
		if ev.Attr.Type == perf.TypeSoftware && ev.Attr.Config == perf.SWDummy {
			continue // side-band only: never samples
		}
		var p string
		switch {
		case i < len(st.Periods) && st.Periods[i] > 0:
			p = fmt.Sprintf("%s period %d", ev.Name, st.Periods[i])
		case i < len(st.Freqs) && st.Freqs[i] > 0:
			p = fmt.Sprintf("%s %d Hz", ev.Name, st.Freqs[i])
		default:
			continue
		}
		if n == show {
			parts = append(parts, "...")
			break
		}
		parts = append(parts, p)
		n++
	}
	return strings.Join(parts, ", ")
}
