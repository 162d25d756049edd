package record

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/event"
	"github.com/hwprof/hwprof/perf/perfdata"
)

// asUserEnv marks the copy of this test binary that runs as an
// unprivileged uid (see TestTryOpenAgreesWithRecord).
const asUserEnv = "HWPROF_RECORD_TEST_AS_USER"

// TryOpen opens what Record opens: both succeed or both fail, with the
// same events as opened (a user-only fallback included), and the file
// holds those attrs. Run as this process's user, and, where the test is
// root, again as uid 65534, with what must happen derived from
// kernel.perf_event_paranoid (read, never changed).
func TestTryOpenAgreesWithRecord(t *testing.T) {
	needPerfEvents(t)
	p, err := perf.Paranoid()
	if err != nil {
		t.Skipf("no perf events in this kernel: %v", err)
	}
	dir := t.TempDir()
	if os.Getenv(asUserEnv) != "" {
		dir = os.Getenv(asUserEnv)
	}
	argv := []string{os.Args[0], "workload", "50", "0"}
	o := Options{Events: []perf.Event{cpuClock(100000, event.TargetCommand)}, Argv: argv, Output: filepath.Join(dir, "try.data")}
	var notices []string
	o.Notice = func(m string) { notices = append(notices, m) }
	tried, terr := TryOpen(o)
	if _, err := os.Stat(o.Output); err == nil {
		t.Errorf("TryOpen wrote %s", o.Output)
	}
	st, rerr := Record(o)
	privileged := os.Geteuid() == 0 || perf.HasCapability(perf.CapPerfmon) || perf.HasCapability(perf.CapSysAdmin)
	t.Logf("uid %d, paranoid %d: TryOpen %v, Record %v, notices %q", os.Geteuid(), p, terr, rerr, notices)
	if (terr == nil) != (rerr == nil) {
		t.Fatalf("TryOpen: %v; Record: %v", terr, rerr)
	}
	if !privileged && p > perf.ParanoidUser {
		if terr == nil || !strings.Contains(terr.Error(), "kernel.perf_event_paranoid=2") {
			t.Fatalf("at paranoid %d without CAP_PERFMON: %v", p, terr)
		}
		return
	}
	if terr != nil {
		t.Fatal(terr)
	}
	wantUser := !privileged && p > perf.ParanoidKernel
	if got := len(tried.UserOnly) > 0; got != wantUser || !reflect.DeepEqual(tried.UserOnly, st.UserOnly) {
		t.Errorf("user only: TryOpen %q, Record %q; want fallback %v", tried.UserOnly, st.UserOnly, wantUser)
	}
	if wantUser != (len(notices) == 2) { // one per call
		t.Errorf("notices %q", notices)
	}
	if !reflect.DeepEqual(tried.Events, st.Events) || tried.Opened != st.Opened || tried.Rings != st.Rings {
		t.Errorf("TryOpen opened %d (%d rings) %+v\nRecord opened %d (%d rings) %+v", tried.Opened, tried.Rings, tried.Events, st.Opened, st.Rings, st.Events)
	}
	if o.Events[0].Name != "cpu-clock" || o.Events[0].Attr.Flags.Has(perf.FlagExcludeKernel) {
		t.Error("the caller's events were changed")
	}
	r, err := perfdata.Open(o.Output)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if a := r.Attrs()[0]; a.Name != st.Events[0].Name || a.Attr.Flags != st.Events[0].Attr.Flags {
		t.Errorf("file: %s flags %#x; opened: %s flags %#x", a.Name, a.Attr.Flags, st.Events[0].Name, st.Events[0].Attr.Flags)
	}
	if os.Getenv(asUserEnv) != "" || os.Geteuid() != 0 {
		return
	}
	// Again as an unprivileged uid, from a copy of this binary it may run.
	userDir := t.TempDir()
	if err := os.Chmod(filepath.Dir(userDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(userDir, 0o777); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(userDir, "record.test")
	copyFile(t, os.Args[0], bin)
	cmd := exec.Command(bin, "-test.run=^TestTryOpenAgreesWithRecord$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), asUserEnv+"="+userDir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}}
	out, err := cmd.CombinedOutput()
	t.Logf("as uid 65534:\n%s", out)
	if err != nil || !strings.Contains(string(out), "--- PASS") {
		t.Fatalf("as uid 65534: %v", err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
