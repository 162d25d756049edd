package perfdata

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"github.com/hwprof/hwprof/internal/fixtures"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/perf"
)

// These tests hold the decoded samples of the real recordings against two
// independent readings: perf script's brstack output (perf 6.1, time
// order) and the protobuf text dump of google/perf_data_converter's C++
// parser, quipper (file order).

// brEntry is one branch as perf script prints it:
// 0xFROM(dso)/0xTO(dso)/M|P|-/X|-/A|-/CYCLES/TYPE.
type brEntry struct {
	from, to        uint64
	pred, tx, abort byte
	cycles          uint64
}

// scriptBranchStacks returns the branch stack of every sample line of a
// perf script output, in order.
func scriptBranchStacks(t *testing.T, path string) [][]brEntry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]brEntry
	sc := bufio.NewScanner(z)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, ")/0x") {
			continue
		}
		var st []brEntry
		for _, field := range strings.Fields(dropParens(line)) {
			p := strings.Split(field, "/")
			if len(p) < 7 || !strings.HasPrefix(p[0], "0x") || !strings.HasPrefix(p[1], "0x") || len(p[2]) != 1 {
				continue
			}
			from, err1 := strconv.ParseUint(p[0][2:], 16, 64)
			to, err2 := strconv.ParseUint(p[1][2:], 16, 64)
			cyc, err3 := strconv.ParseUint(p[5], 10, 64)
			if err1 != nil || err2 != nil || err3 != nil || len(p[3]) != 1 || len(p[4]) != 1 {
				t.Fatalf("%s: bad brstack entry %q", filepath.Base(path), field)
			}
			st = append(st, brEntry{from, to, p[2][0], p[3][0], p[4][0], cyc})
		}
		out = append(out, st)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// dropParens removes the "(dso)" groups perf script prints after each
// address.
func dropParens(s string) string {
	b := make([]byte, 0, len(s))
	depth := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '(':
			depth++
		case c == ')' && depth > 0:
			depth--
		case depth == 0:
			b = append(b, c)
		}
	}
	return string(b)
}

// asScript prints a decoded branch entry's flags as perf script does.
func asScript(e perf.BranchEntry) brEntry {
	b := brEntry{from: e.From, to: e.To, pred: '-', tx: '-', abort: '-', cycles: uint64(e.Flags.Cycles())}
	switch {
	case e.Flags.Mispred():
		b.pred = 'M'
	case e.Flags.Predicted():
		b.pred = 'P'
	}
	if e.Flags.InTX() {
		b.tx = 'X'
	}
	if e.Flags.Abort() {
		b.abort = 'A'
	}
	return b
}

// TestBranchStacksMatchPerfScript: every branch entry of every sample of
// the LBR recordings (Intel 3.x to 5.x files, the AMD Zen 4 file with
// speculation bits, the Arm HW_INDEX layout, raw+callchain+branch) equals
// what perf script -F brstack printed.
func TestBranchStacksMatchPerfScript(t *testing.T) {
	dir := fixtures.Dir(t)
	n := 0
	for _, row := range readExpected(t, dir) {
		if !row.branch {
			continue
		}
		script := filepath.Join(dir, "expected", row.file+".script.txt.gz")
		if _, err := os.Stat(script); err != nil {
			continue
		}
		n++
		t.Run(row.file, func(t *testing.T) {
			want := scriptBranchStacks(t, script)
			r, err := Open(filepath.Join(dir, row.file))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			var s perf.Sample
			i, entries := 0, 0
			for r.Next() {
				if r.Record().Type() != perf.RecordSample {
					continue
				}
				if err := r.DecodeSample(&s); err != nil {
					t.Fatal(err)
				}
				if len(s.Branches) == 0 {
					continue // perf script prints no brstack for an empty stack
				}
				if i >= len(want) {
					t.Fatalf("more samples with branch stacks than perf script printed (%d)", len(want))
				}
				if len(s.Branches) < row.brMin || len(s.Branches) > row.brMax {
					t.Errorf("sample %d: %d entries, EXPECTED.tsv says %d-%d", i, len(s.Branches), row.brMin, row.brMax)
				}
				if len(s.Branches) != len(want[i]) {
					t.Fatalf("sample %d at %#x: %d entries, perf script %d", i, r.Record().Offset, len(s.Branches), len(want[i]))
				}
				for j, e := range s.Branches {
					if got := asScript(e); got != want[i][j] {
						t.Fatalf("sample %d at %#x entry %d: %+v, perf script %+v", i, r.Record().Offset, j, got, want[i][j])
					}
					entries++
				}
				i++
			}
			if err := r.Err(); err != nil {
				t.Fatal(err)
			}
			if i != len(want) {
				t.Errorf("%d samples with branch stacks, perf script printed %d", i, len(want))
			}
			t.Logf("%d samples, %d branch entries equal", i, entries)
		})
	}
	if n < 10 {
		t.Errorf("only %d branch-stack recordings with perf script output, want the 10+ of the set", n)
	}
}

// quipperSample is a sample_event block of quipper's text dump.
type quipperSample struct {
	fields   map[string]uint64
	chain    []uint64
	branches []map[string]uint64
}

func readQuipper(t *testing.T, path string) []quipperSample {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []quipperSample
	var cur *quipperSample
	var br map[string]uint64
	sc := bufio.NewScanner(z)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "  sample_event {":
			out = append(out, quipperSample{fields: map[string]uint64{}})
			cur = &out[len(out)-1]
		case cur == nil:
		case line == "  }":
			cur = nil
		case line == "    branch_stack {":
			br = map[string]uint64{}
		case line == "    }" && br != nil:
			cur.branches = append(cur.branches, br)
			br = nil
		default:
			k, v, ok := strings.Cut(strings.TrimSpace(line), ": ")
			if !ok {
				continue
			}
			var n uint64
			switch v {
			case "true":
				n = 1
			case "false":
			default:
				if n, err = strconv.ParseUint(v, 10, 64); err != nil {
					continue
				}
			}
			switch {
			case br != nil:
				br[k] = n
			case k == "callchain":
				cur.chain = append(cur.chain, n)
			default:
				cur.fields[k] = n
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// sampleFields returns a decoded sample's fields under quipper's names.
func sampleFields(s *perf.Sample) map[string]uint64 {
	return map[string]uint64{
		"ip": s.IP, "pid": uint64(s.PID), "tid": uint64(s.TID), "sample_time_ns": s.Time,
		"period": s.Period, "cpu": uint64(s.CPU), "id": max(s.ID, s.Identifier),
	}
}

func branchFields(e perf.BranchEntry) map[string]uint64 {
	b2u := func(b bool) uint64 {
		if b {
			return 1
		}
		return 0
	}
	f := e.Flags
	return map[string]uint64{
		"from_ip": e.From, "to_ip": e.To, "mispredicted": b2u(f.Mispred()), "predicted": b2u(f.Predicted()),
		"in_transaction": b2u(f.InTX()), "abort": b2u(f.Abort()), "cycles": uint64(f.Cycles()),
		"type": uint64(f.Type()), "spec": uint64(f.Spec()),
	}
}

// TestSamplesMatchQuipper compares every sample, in file order, with
// quipper's reading: ip, pid/tid, time, period, cpu, id, the raw callchain
// with its PERF_CONTEXT markers, and each branch entry with its type and
// speculation bits.
func TestSamplesMatchQuipper(t *testing.T) {
	dir := fixtures.Dir(t)
	dumps, _ := filepath.Glob(filepath.Join(dir, "expected", "perf_data_converter", "quipper_pb_text", "*.pb_text.gz"))
	if len(dumps) == 0 {
		t.Skip("no quipper dumps in the fixtures")
	}
	for _, dump := range dumps {
		name := strings.TrimSuffix(filepath.Base(dump), ".pb_text.gz")
		t.Run(name, func(t *testing.T) {
			want := readQuipper(t, dump)
			r, err := Open(filepath.Join(dir, "perf_data_converter", name))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			var s perf.Sample
			i := 0
			for r.Next() {
				if r.Record().Type() != perf.RecordSample {
					continue
				}
				if err := r.DecodeSample(&s); err != nil {
					t.Fatal(err)
				}
				if i >= len(want) {
					t.Fatalf("more samples than quipper (%d)", len(want))
				}
				if err := sameAsQuipper(&s, &want[i]); err != nil {
					t.Fatalf("sample %d at %#x: %v", i, r.Record().Offset, err)
				}
				i++
			}
			if i != len(want) {
				t.Errorf("%d samples, quipper %d", i, len(want))
			}
		})
	}
}

func sameAsQuipper(s *perf.Sample, q *quipperSample) error {
	got := sampleFields(s)
	for k, v := range q.fields {
		if g, ok := got[k]; ok && g != v {
			return fmt.Errorf("%s = %d, quipper %d", k, g, v)
		}
	}
	if len(q.chain) != len(s.Callchain) {
		return fmt.Errorf("callchain of %d, quipper %d", len(s.Callchain), len(q.chain))
	}
	for j, ip := range q.chain {
		// quipper sets bit 63 of user callchain entries it could not map
		// to a DSO (its "unmapped" mark); the recorded value is below.
		if s.Callchain[j] != ip && (s.Callchain[j]|1<<63 != ip || perf.IsCallchainContext(s.Callchain[j])) {
			return fmt.Errorf("callchain[%d] = %#x, quipper %#x", j, s.Callchain[j], ip)
		}
	}
	if len(q.branches) != len(s.Branches) {
		return fmt.Errorf("%d branch entries, quipper %d", len(s.Branches), len(q.branches))
	}
	for j, qb := range q.branches {
		gb := branchFields(s.Branches[j])
		for k, v := range qb {
			if g, ok := gb[k]; ok && g != v {
				return fmt.Errorf("branch %d: %s = %d, quipper %d", j, k, g, v)
			}
		}
	}
	return nil
}

var reportDRE = regexp.MustCompile(`^(0x[0-9a-f]+|0)@\S+ \[0x([0-9a-f]+)\]: event: (\d+)$`)

// TestOrderMatchesPerfReportD: the kernel records come in the order perf
// report -D prints them (the first 4000 lines of its dump, kept in
// expected/), with the same offsets, sizes and types. perf prints a
// kernel record when it delivers it, after sorting its round, so this
// holds the Reader's time order against perf's; perf's own records
// (printed when read) are left out on both sides.
func TestOrderMatchesPerfReportD(t *testing.T) {
	dir := fixtures.Dir(t)
	dumps, _ := filepath.Glob(filepath.Join(dir, "expected", "*", "*.report-D.head4000.txt"))
	if len(dumps) == 0 {
		t.Skip("no perf report -D dumps in the fixtures")
	}
	for _, dump := range dumps {
		rel, _ := filepath.Rel(filepath.Join(dir, "expected"), dump)
		name := strings.TrimSuffix(rel, ".report-D.head4000.txt")
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(dump)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, l := range strings.Split(string(b), "\n") {
				m := reportDRE.FindStringSubmatch(l)
				if m == nil {
					continue
				}
				if typ, _ := strconv.Atoi(m[3]); typ < int(perf.RecordHeaderAttr) {
					off, _ := strconv.ParseUint(strings.TrimPrefix(m[1], "0x"), 16, 64)
					size, _ := strconv.ParseUint(m[2], 16, 64)
					want = append(want, fmt.Sprintf("%#x %d %s", off, size, m[3]))
				}
			}
			r, err := Open(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			base := int64(0)
			if r.Header().Pipe {
				base = pipeHeaderSize // perf counts pipe offsets after the header
			}
			i := 0
			for r.Next() && i < len(want) {
				rec := r.Record()
				if rec.Type() >= perf.RecordHeaderAttr {
					continue
				}
				got := fmt.Sprintf("%#x %d %d", rec.Offset-base, len(rec.Raw), rec.Type())
				if got != want[i] {
					t.Fatalf("record %d: %s, perf report -D %s", i, got, want[i])
				}
				i++
			}
			if i != len(want) || len(want) == 0 {
				t.Errorf("compared %d records of %d", i, len(want))
			}
		})
	}
}
