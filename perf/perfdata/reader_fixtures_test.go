package perfdata

import (
	"bufio"
	"errors"
	"fmt"
	"github.com/hwprof/hwprof/internal/fixtures"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/perf"
)

// These tests read every real recording in ../shared/fixtures (recorded
// by others with Linux perf, mostly on Intel machines with LBR; see the
// folder's README.md for their provenance and licenses) and compare what
// the Reader sees with what perf 6.1 saw: EXPECTED.tsv and expected/.

// expectedRow is one line of EXPECTED.tsv.
type expectedRow struct {
	file, mode, arch, version string
	samples, total            int64 // -1: perf could not read the file ("None")
	branch, callchain         bool
	brMin, brMax              int
	events                    string
}

func readExpected(t testing.TB, dir string) []expectedRow {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "EXPECTED.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []expectedRow
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	header := true
	num := func(s string) int64 {
		if s == "None" {
			return -1
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("EXPECTED.tsv: bad number %q", s)
		}
		return n
	}
	for sc.Scan() {
		if header {
			header = false
			continue
		}
		c := strings.Split(sc.Text(), "\t")
		if len(c) < 11 {
			t.Fatalf("EXPECTED.tsv: %d columns in %q", len(c), sc.Text())
		}
		r := expectedRow{file: c[0], mode: c[1], arch: c[2], version: c[3],
			samples: num(c[4]), total: num(c[5]), branch: c[6] == "Y", callchain: c[7] == "Y", events: c[10]}
		if lo, hi, ok := strings.Cut(c[9], "-"); ok {
			r.brMin, r.brMax = int(num(lo)), int(num(hi))
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// readAll reads a recording to the end, decoding every sample and every
// record, and returns the reader (closed), the number of samples, the
// reader's error and the decoding errors.
func readAll(t testing.TB, path string) (*Reader, int64, error, []error) {
	t.Helper()
	r, err := Open(path)
	if err != nil {
		return nil, 0, err, nil
	}
	defer r.Close()
	var s perf.Sample
	var n int64
	var errs []error
	for r.Next() {
		rec := r.Record()
		if rec.Type() == perf.RecordSample {
			n++
			if err := r.DecodeSample(&s); err != nil {
				errs = append(errs, fmt.Errorf("sample at %#x: %w", rec.Offset, err))
			}
			continue
		}
		if _, err := r.Decode(); err != nil {
			errs = append(errs, fmt.Errorf("record at %#x: %w", rec.Offset, err))
		}
	}
	return r, n, r.Err(), errs
}

// unreadable are the recordings perf 6.1 itself fails on, and what hwprof
// does with them instead.
var unreadable = map[string]func(t *testing.T, r *Reader, samples int64, err error){
	// A SAMPLE record with size 0 in the middle: an error that names the
	// offset, after every record before it.
	"perf_data_converter/perf.data.piped.corrupted.zero_size_sample-3.2": func(t *testing.T, r *Reader, n int64, err error) {
		if err == nil || !strings.Contains(err.Error(), "size 0") || !strings.Contains(err.Error(), "offset 0x") {
			t.Errorf("err = %v, want one naming the zero size and its offset", err)
		}
		if r.Total() < 500 {
			t.Errorf("%d records delivered before the corrupt record at 0xbfd0, want all 570", r.Total())
		}
	},
	// Written by a patched perf 3.2 whose pipe-mode header records used
	// the numbers that later became ID_INDEX, AUXTRACE_INFO and
	// AUXTRACE: hwprof reads them as those, fails to decode ID_INDEX
	// (a warning) and stops at the AUXTRACE payload that runs past the
	// end (an error naming the offset), as perf stops.
	"perf_data_converter/perf.data.piped.host-3.2": func(t *testing.T, r *Reader, n int64, err error) {
		if err == nil || !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), "offset 0x") {
			t.Errorf("err = %v, want a truncation naming the offset", err)
		}
	},
	// perf frames every record but its Intel PT decoder fails on the AUX
	// data; hwprof skips the AUXTRACE payloads and reads to the end.
	"perf_data_converter/perf.data.piped.intel_pt-4.14": func(t *testing.T, r *Reader, n int64, err error) {
		if err != nil || r.Count(perf.RecordAuxtrace) != 2 || n == 0 {
			t.Errorf("err %v, %d AUXTRACE, %d samples; want a clean read with 2 AUXTRACE and samples", err, r.Count(perf.RecordAuxtrace), n)
		}
	},
}

func TestFixturesMatchExpected(t *testing.T) {
	dir := fixtures.Dir(t)
	rows := readExpected(t, dir)
	if len(rows) < 60 {
		t.Fatalf("EXPECTED.tsv has %d rows, want the whole table", len(rows))
	}
	for _, row := range rows {
		t.Run(row.file, func(t *testing.T) {
			r, n, err, errs := readAll(t, filepath.Join(dir, row.file))
			if row.samples < 0 {
				check := unreadable[row.file]
				if check == nil {
					t.Fatalf("perf cannot read this file and the test does not say what hwprof must do")
				}
				if r == nil {
					t.Fatalf("open: %v", err)
				}
				check(t, r, n, err)
				t.Logf("samples %d, records %d, err %v, warnings %q", n, r.Total(), err, r.Warnings())
				return
			}
			if err != nil {
				t.Fatalf("read: %v (warnings %v)", err, warningsOf(r))
			}
			for _, e := range errs {
				t.Error(e)
			}
			if len(r.Warnings()) > 0 && !strings.Contains(row.file, "extra") {
				t.Errorf("warnings: %q", r.Warnings())
			}
			if n != row.samples {
				t.Errorf("samples = %d, perf counts %d", n, row.samples)
			}
			if got := r.Count(perf.RecordSample); got != n {
				t.Errorf("Count(SAMPLE) = %d, delivered %d", got, n)
			}
			if row.total >= 0 && r.Total() != row.total {
				t.Errorf("records = %d, perf report --stats counts %d; by type %v", r.Total(), row.total, r.Counts())
			}
			if want := row.mode == "pipe"; r.Header().Pipe != want {
				t.Errorf("pipe mode = %v, want %v", r.Header().Pipe, want)
			}
			if row.arch != "" && r.Features().Arch != "" && r.Features().Arch != row.arch {
				t.Errorf("arch = %q, want %q", r.Features().Arch, row.arch)
			}
			if row.version != "" && r.Features().Version != row.version {
				t.Errorf("perf version = %q, want %q", r.Features().Version, row.version)
			}
			if row.events != "" {
				// perf names events of pipe files by their attrs
				// ("cycles:uH") where hwprof uses the names the file
				// gives ("cycles:u"): compare names without modifiers.
				if got, want := eventsColumn(r, true), baseNames(row.events); got != want {
					t.Errorf("events:\n got %s\nwant %s", eventsColumn(r, false), row.events)
				}
			}
		})
	}
}

func warningsOf(r *Reader) []string {
	if r == nil {
		return nil
	}
	return r.Warnings()
}

// eventsColumn prints the events as EXPECTED.tsv does:
// name[SAMPLE|TYPE br=FILTER];...
func eventsColumn(r *Reader, base bool) string {
	var parts []string
	for _, a := range r.Attrs() {
		name := a.Name
		if base {
			name = baseName(name)
		}
		s := name + "[" + a.Attr.SampleType.String()
		if a.Attr.SampleType&perf.SampleBranchStack != 0 {
			s += " br=" + a.Attr.BranchSampleType.String()
		}
		parts = append(parts, s+"]")
	}
	return strings.Join(parts, ";")
}

// baseName strips perf's modifiers (":uH", ":ppp") from an event name.
func baseName(name string) string {
	if i := strings.LastIndexByte(name, ':'); i > 0 && !strings.Contains(name[i:], "/") {
		return name[:i]
	}
	return name
}

// baseNames strips the modifiers of every event of an EXPECTED.tsv events
// column.
func baseNames(col string) string {
	parts := strings.Split(col, ";")
	for i, p := range parts {
		name, rest, _ := strings.Cut(p, "[")
		parts[i] = baseName(name) + "[" + rest
	}
	return strings.Join(parts, ";")
}
