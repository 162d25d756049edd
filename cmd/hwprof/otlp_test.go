package main

import (
	"maps"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	gprofile "github.com/google/pprof/profile"

	"github.com/hwprof/hwprof/internal/engine"
	"github.com/hwprof/hwprof/internal/fixtures"
	"github.com/hwprof/hwprof/internal/otelcoltest"
	"github.com/hwprof/hwprof/report"
	"github.com/hwprof/hwprof/report/pprof"
)

// pprofOf is hwprof's own pprof report of the recordings (merge: several
// in one profile).
func pprofOf(t *testing.T, recs ...string) *gprofile.Profile {
	t.Helper()
	out := filepath.Join(t.TempDir(), "report.pb.gz")
	r := hwprof(t, append([]string{"merge", "-o", out}, recs...)...)
	if r.code != 0 {
		t.Fatalf("merge %v: exit %d\n%s", recs, r.code, r.stderr)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pp, err := gprofile.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	return pp
}

// linedPProf is hwprof's pprof profile of the recordings read with source
// positions, as record --otlp reads them (otlpsend.Follower).
func linedPProf(t *testing.T, recs ...string) *gprofile.Profile {
	t.Helper()
	p, err := engine.LoadAll(recs, engine.LoadOptions{SiteLines: true})
	if err != nil {
		t.Fatal(err)
	}
	pp, err := pprof.Build(report.PProfProfile(p), pprof.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return pp
}

// sameSamples fails the test unless got and want hold the same samples
// with the same values.
func sameSamples(t *testing.T, got, want map[otelcoltest.Key]int64) {
	t.Helper()
	bad := 0
	for _, k := range slices.SortedFunc(maps.Keys(want), func(a, b otelcoltest.Key) int { return strings.Compare(a.Stack, b.Stack) }) {
		if got[k] != want[k] {
			if bad++; bad <= 5 {
				t.Errorf("%s %s %s kind=%s, stack\n%s: the Collector got %d, the report has %d", k.Service, k.Host, k.Type, k.Kind, k.Stack, got[k], want[k])
			}
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok && v != 0 { // 0: a context that came and went (a correction)
			if bad++; bad <= 5 {
				t.Errorf("%s %s %s: the Collector got a sample the report lacks (%d):\n%s", k.Service, k.Host, k.Type, v, k.Stack)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d samples differ", bad, len(want))
	}
}

// TestPushMatchesReport pushes recordings to a real Collector over HTTP
// and gRPC and compares what it wrote, sample for sample, with hwprof's
// own pprof report of them: a time recording made here and a real LBR
// recording with call counts.
func TestPushMatchesReport(t *testing.T) {
	t.Parallel()
	recs := []string{filepath.Join(fixtures.Dir(t), "autofdo", "test.lbr")}
	c := otelcoltest.Start(t)
	if testing.Short() {
		t.Log("-short: the fixture only")
	} else {
		rec, _ := workloadRecording(t)
		recs = append(recs, rec)
	}
	for _, rec := range recs {
		t.Run(filepath.Base(rec), func(t *testing.T) {
			before := len(c.Profiles())
			want := map[otelcoltest.Key]int64{}
			report := pprofOf(t, rec) // the same for both sends
			for _, ep := range []struct{ url, service string }{{c.HTTP(), "svc-http"}, {c.GRPC(), "svc-grpc"}} {
				r := hwprof(t, "push", "--otlp", ep.url, "--service", ep.service, "--host-name", "host-1", "-i", rec)
				if r.code != 0 || !strings.Contains(r.stdout, "sent "+rec) {
					t.Fatalf("push to %s: exit %d\n%s%s", ep.url, r.code, r.stdout, r.stderr)
				}
				maps.Copy(want, otelcoltest.FoldPProf(report, ep.service, "host-1", false))
			}
			ps := c.WaitProfiles(before+2, 30*time.Second)[before:]
			got, err := otelcoltest.Fold(ps, false)
			if err != nil {
				t.Fatal(err)
			}
			if len(want) == 0 {
				t.Fatal("the report has no samples")
			}
			sameSamples(t, got, want)
			attrs := ps[0].ResourceProfiles().At(0).Resource().Attributes()
			for _, k := range []string{"service.name", "host.name", "process.executable.name"} {
				if _, ok := attrs.Get(k); !ok {
					t.Errorf("resource attribute %s missing: %v", k, attrs.AsRaw())
				}
			}
		})
	}
}

// TestPushDeadEndpoint: a push to a port where nothing listens, or to one
// that never answers, fails within its timeout with one line and exit 1.
func TestPushDeadEndpoint(t *testing.T) {
	t.Parallel()
	rec := filepath.Join(fixtures.Dir(t), "autofdo", "test.lbr")
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := closed.Addr().String()
	closed.Close()
	mute, err := net.Listen("tcp", "127.0.0.1:0") // accepts, never answers
	if err != nil {
		t.Fatal(err)
	}
	defer mute.Close()
	for _, url := range []string{"http://" + dead, "grpc://" + dead, "http://" + mute.Addr().String(), "grpc://" + mute.Addr().String()} {
		start := time.Now()
		r := hwprof(t, "push", "--otlp", url, "--timeout", "2s", "-i", rec)
		took := time.Since(start)
		var lines []string // the loader's warnings of the fixture aside
		for _, l := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
			if !strings.HasPrefix(l, "hwprof: warning: ") {
				lines = append(lines, l)
			}
		}
		if r.code != exitError || len(lines) != 1 || !strings.HasPrefix(lines[0], "hwprof: "+rec+": send to ") {
			t.Errorf("push to %s: exit %d, want 1 and one line saying so:\n%s", url, r.code, r.stderr)
		}
		if took > 20*time.Second {
			t.Errorf("push to %s took %v with --timeout 2s", url, took)
		}
	}
	r := hwprof(t, "push", "--otlp", "ftp://x:1", "-i", rec)
	if r.code != exitUsage || !strings.Contains(r.stderr, "scheme") {
		t.Errorf("push --otlp ftp://: exit %d, want 2 and the scheme named:\n%s", r.code, r.stderr)
	}
}

// TestRecordOTLPFleet records the workload twice at once under two
// service and host names with --otlp, kills the Collector while they run
// and restarts it, and checks that everything arrived once, labelled
// apart: what the Collector got of each recording adds up, context for
// context (otelcoltest.Key), to hwprof's report of it
// with source positions, and the totals of both to hwprof merge of both.
func TestRecordOTLPFleet(t *testing.T) {
	t.Parallel()
	needPerfEvents(t)
	c := otelcoltest.Start(t)
	dir := t.TempDir()
	type run struct {
		service, host, data, spool string
		r                          result
	}
	runs := []*run{{service: "svc-a", host: "host-a"}, {service: "svc-b", host: "host-b"}}
	var wg sync.WaitGroup
	for i, rn := range runs {
		rn.data = filepath.Join(dir, rn.service+".data")
		rn.spool = filepath.Join(dir, rn.service+".spool")
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(i) * 300 * time.Millisecond)
			rn.r = hwprofExec(t, "record", "-g", "-o", rn.data, "--otlp", c.HTTP(), "--interval", "1s",
				"--service", rn.service, "--host-name", rn.host, "--otlp-spool", rn.spool,
				"--", hwprofBin, workloadArg, "4s")
		}()
	}
	// Once both sent something, the Collector goes away until both have
	// profiles waiting in their spools, then comes back.
	c.WaitProfiles(2, time.Minute)
	c.Kill()
	deadline := time.Now().Add(time.Minute)
	for _, rn := range runs {
		for {
			if waiting, _ := filepath.Glob(filepath.Join(rn.spool, "*.otlp")); len(waiting) > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("record %s: nothing waits in its spool a minute after the Collector went away", rn.service)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	c.Restart()
	wg.Wait()
	for _, rn := range runs {
		if rn.r.code != 0 {
			t.Fatalf("record %s: exit %d\n%s", rn.service, rn.r.code, rn.r.stderr)
		}
		if !strings.Contains(rn.r.stderr, "hwprof: otlp: send to") || !strings.Contains(rn.r.stderr, "answers again") {
			t.Errorf("record %s: the Collector's absence and return are not said:\n%s", rn.service, rn.r.stderr)
		}
		if m := regexp.MustCompile(`hwprof: otlp: \d+ profiles made.*`).FindString(rn.r.stderr); m == "" || strings.Contains(m, "wait in") || strings.Contains(m, "dropped") {
			t.Errorf("record %s: profiles were left or dropped:\n%s", rn.service, rn.r.stderr)
		}
		if left, _ := filepath.Glob(filepath.Join(rn.spool, "*")); len(left) > 0 {
			t.Errorf("record %s: the spool still holds %v", rn.service, left)
		}
	}
	ps := c.Profiles()
	got, err := otelcoltest.Fold(ps, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) < 4 {
		t.Errorf("the Collector got %d exports of two recordings of 4s of CPU time at --interval 1s", len(ps))
	}
	want := map[otelcoltest.Key]int64{}
	for _, rn := range runs {
		maps.Copy(want, otelcoltest.FoldPProf(linedPProf(t, rn.data), rn.service, rn.host, true))
	}
	gotT, wantT := otelcoltest.Totals(got), otelcoltest.Totals(want)
	if !maps.Equal(gotT, wantT) {
		t.Errorf("totals by service, host and type: the Collector got %v, the reports have %v", gotT, wantT)
	}
	sameSamples(t, got, want)
	var sum, merged int64
	for k, v := range gotT {
		if k.Type == "cpu/nanoseconds" {
			sum += v
		}
	}
	for k, v := range otelcoltest.Totals(otelcoltest.FoldPProf(pprofOf(t, runs[0].data, runs[1].data), "", "", false)) {
		if k.Type == "cpu/nanoseconds" {
			merged += v
		}
	}
	if sum != merged || sum == 0 {
		t.Errorf("cpu/nanoseconds: the Collector got %d in all, hwprof merge of both recordings has %d", sum, merged)
	}
}

// TestRecordOTLPFlags: --otlp needs a file to read back, its options go
// with it, and a bad value is a usage error, before anything is recorded.
func TestRecordOTLPFlags(t *testing.T) {
	t.Parallel()
	needPerfEvents(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--otlp", "http://127.0.0.1:1", "-o", "-"}, "give -o a regular file"},
		{[]string{"--interval", "5s"}, "--interval goes with --otlp"},
		{[]string{"--otlp", "http://127.0.0.1:1", "--interval", "10ms"}, "at least 1s"},
		{[]string{"--otlp", "udp://127.0.0.1:1"}, "scheme"},
		{[]string{"--otlp", "http://127.0.0.1:1", "--otlp-spool-size", "lots"}, "--otlp-spool-size"},
		{[]string{"--otlp", "http://127.0.0.1:1", "--otlp-spool", filepath.Join(dir, "file")}, "not a directory"},
	} {
		if err := os.WriteFile(filepath.Join(dir, "file"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		args := append([]string{"record"}, tc.args...)
		if !slices.Contains(tc.args, "-o") {
			args = append(args, "-o", filepath.Join(dir, "x.data"))
		}
		r := hwprofExec(t, append(args, "--", "true")...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, want 2 and %q:\n%s", tc.args, r.code, tc.want, r.stderr)
		}
		if _, err := os.Stat(filepath.Join(dir, "x.data")); err == nil {
			t.Errorf("%v: a recording was written", tc.args)
		}
	}
}
