package otelcoltest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pprofile"
)

// Collector is a test Collector.
type Collector struct {
	t          testing.TB
	bin, dir   string
	grpc, http string    // HOST:PORT
	cmd        *exec.Cmd // nil while killed
	starts     int       // outputs written so far: out-N.jsonl
}

// Binary returns the test Collector's binary, building it if needed.
func Binary(t testing.TB) string {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "build-otelcol.sh"))
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("build the test Collector: %v\n%s", err, errb.String())
	}
	return strings.TrimSpace(out.String())
}

// moduleRoot is the directory of hwprof's go.mod above the working
// directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && bytes.HasPrefix(b, []byte("module github.com/hwprof/hwprof\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("otelcoltest: no hwprof go.mod above the working directory")
		}
		dir = parent
	}
}

// Start starts a Collector on two free loopback ports; it is killed when
// the test ends.
func Start(t testing.TB) *Collector {
	t.Helper()
	c := &Collector{t: t, bin: Binary(t), dir: t.TempDir(), grpc: freePort(t), http: freePort(t)}
	c.start()
	t.Cleanup(c.Kill)
	return c
}

// HTTP is the Collector's OTLP/HTTP endpoint, http://HOST:PORT.
func (c *Collector) HTTP() string { return "http://" + c.http }

// GRPC is its OTLP/gRPC endpoint, grpc://HOST:PORT.
func (c *Collector) GRPC() string { return "grpc://" + c.grpc }

func freePort(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

const config = `receivers:
  otlp:
    protocols:
      grpc: {endpoint: "%s"}
      http: {endpoint: "%s"}
exporters:
  file: {path: "%s"}
service:
  telemetry: {logs: {level: warn}, metrics: {level: none}}
  pipelines:
    profiles: {receivers: [otlp], exporters: [file]}
`

// start starts the Collector with a new output file and waits until both
// ports answer.
func (c *Collector) start() {
	c.t.Helper()
	c.starts++
	cfg := filepath.Join(c.dir, fmt.Sprintf("config-%d.yaml", c.starts))
	out := filepath.Join(c.dir, fmt.Sprintf("out-%d.jsonl", c.starts))
	if err := os.WriteFile(cfg, fmt.Appendf(nil, config, c.grpc, c.http, out), 0o600); err != nil {
		c.t.Fatal(err)
	}
	log, err := os.Create(filepath.Join(c.dir, fmt.Sprintf("log-%d.txt", c.starts)))
	if err != nil {
		c.t.Fatal(err)
	}
	defer log.Close()
	cmd := exec.Command(c.bin, "--config", cfg, "--feature-gates=+service.profilesSupport")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		c.t.Fatalf("start the test Collector: %v", err)
	}
	c.cmd = cmd
	deadline := time.Now().Add(60 * time.Second)
	for _, addr := range []string{c.http, c.grpc} {
		for {
			conn, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				conn.Close()
				break
			}
			var ws syscall.WaitStatus
			if pid, _ := syscall.Wait4(cmd.Process.Pid, &ws, syscall.WNOHANG, nil); pid == cmd.Process.Pid {
				c.cmd = nil
				b, _ := os.ReadFile(log.Name())
				c.t.Fatalf("the test Collector exited (status %v):\n%s", ws, b)
			}
			time.Sleep(50 * time.Millisecond)
			if time.Now().After(deadline) {
				c.t.Fatalf("the test Collector does not listen on %s after 60s", addr)
			}
		}
	}
}

// Kill kills the Collector (SIGKILL, as a crash) and waits for its end.
func (c *Collector) Kill() {
	if c.cmd == nil {
		return
	}
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	_ = c.cmd.Wait() // killed: its status says so
	c.cmd = nil
}

// Restart starts the Collector again on the same ports, writing a new
// output file (Profiles reads them all).
func (c *Collector) Restart() {
	c.t.Helper()
	c.start()
}

// Profiles decodes every export the Collector wrote, in order.
func (c *Collector) Profiles() []pprofile.Profiles {
	c.t.Helper()
	var all []pprofile.Profiles
	var u pprofile.JSONUnmarshaler
	for i := 1; i <= c.starts; i++ {
		f, err := os.Open(filepath.Join(c.dir, fmt.Sprintf("out-%d.jsonl", i)))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			c.t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 256<<20)
		for sc.Scan() {
			if len(bytes.TrimSpace(sc.Bytes())) == 0 {
				continue
			}
			ps, err := u.UnmarshalProfiles(sc.Bytes())
			if err != nil {
				f.Close()
				c.t.Fatalf("decode what the Collector wrote: %v", err)
			}
			all = append(all, ps)
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			c.t.Fatal(err)
		}
	}
	return all
}

// WaitProfiles waits until the Collector has written at least n exports
// (its file exporter writes them about every second), failing the test
// after timeout, and returns them all.
func (c *Collector) WaitProfiles(n int, timeout time.Duration) []pprofile.Profiles {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ps := c.Profiles()
		if len(ps) >= n || time.Now().After(deadline) {
			if len(ps) < n {
				c.t.Fatalf("the Collector wrote %d exports in %v, want %d", len(ps), timeout, n)
			}
			return ps
		}
		time.Sleep(100 * time.Millisecond)
	}
}
