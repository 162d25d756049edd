package otlpsend

import (
	"bytes"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

func TestSpoolBoundedOldestDropped(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "spool")
	sp, err := OpenSpool(dir, 100)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if err := sp.Put(bytes.Repeat([]byte{byte('a' + i)}, 40)); err != nil {
			t.Fatal(err)
		}
	}
	if sp.Len() != 2 || sp.Bytes() != 80 || sp.Dropped() != 3 {
		t.Fatalf("after 5 requests of 40 bytes in 100: %d waiting, %d bytes, %d dropped; want 2, 80, 3", sp.Len(), sp.Bytes(), sp.Dropped())
	}
	seq, req, ok := sp.Oldest()
	if !ok || req[0] != 'd' {
		t.Fatalf("oldest: %q %v, want the 4th request", req, ok)
	}
	sp.Remove(seq)
	if err := sp.Put(make([]byte, 101)); !errors.Is(err, ErrTooLarge) || sp.Dropped() != 4 {
		t.Errorf("a request larger than the spool: %v, %d dropped", err, sp.Dropped())
	}
	// A new run takes up what is left; the last request is the 5th.
	sp2, err := OpenSpool(dir, 100)
	if err != nil {
		t.Fatal(err)
	}
	if _, req, ok := sp2.Oldest(); !ok || req[0] != 'e' || sp2.Len() != 1 {
		t.Errorf("reopened: %d waiting, oldest %q", sp2.Len(), req)
	}
}

// TestSpoolLeavesOthersAlone: the spool reads and removes only its own
// regular files, and refuses a path that is not a directory.
func TestSpoolLeavesOthersAlone(t *testing.T) {
	dir := t.TempDir()
	foreign := map[string]string{
		"notes.txt":                 "mine",
		"00000000000000000001.otlp": "", // a directory of that name, below
		"12345.otlp":                "not ours: the wrong length",
	}
	for name, text := range foreign {
		if text == "" {
			if err := os.Mkdir(filepath.Join(dir, name), 0o700); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	target := filepath.Join(t.TempDir(), "target")
	if err := os.WriteFile(target, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, "00000000000000000002.otlp")); err != nil {
		t.Fatal(err)
	}
	sp, err := OpenSpool(dir, 10)
	if err != nil {
		t.Fatal(err)
	}
	if sp.Len() != 0 {
		t.Fatalf("the spool took up %d files that are not its own", sp.Len())
	}
	for range 3 {
		if err := sp.Put([]byte("12345678")); err != nil {
			t.Fatal(err)
		}
	}
	for name, text := range foreign {
		fi, err := os.Lstat(filepath.Join(dir, name))
		if err != nil || (text == "") != fi.IsDir() {
			t.Errorf("%s: changed: %v", name, err)
		}
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "keep" {
		t.Errorf("the link's target changed: %q %v", b, err)
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenSpool(file, 10); err == nil {
		t.Error("a regular file as the spool directory: no error")
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenSpool(link, 10); err == nil {
		t.Error("a symbolic link as the spool directory: no error")
	}
}

// TestSenderRetries: an endpoint that refuses (503) and then takes
// requests gets every one, oldest first, and the Sender says when it
// failed and when it works again.
func TestSenderRetries(t *testing.T) {
	var calls atomic.Int32
	var got [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != HTTPPath || r.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "wrong path or type", http.StatusBadRequest)
			return
		}
		if calls.Add(1) <= 3 {
			http.Error(w, "not yet", http.StatusServiceUnavailable)
			return
		}
		var b bytes.Buffer
		b.ReadFrom(r.Body)
		got = append(got, b.Bytes())
	}))
	defer srv.Close()
	ep, err := ParseEndpoint(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Dial(ep)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sp, err := OpenSpool(t.TempDir(), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	var warnings []string
	s := Start(c, sp, Options{MinBackoff: 10 * time.Millisecond, MaxBackoff: 40 * time.Millisecond, Warn: func(m string) { warnings = append(warnings, m) }})
	for i := range 3 {
		if err := s.Submit([]byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	st := s.Close(time.Minute)
	if st.Sent != 3 || st.Waiting != 0 || st.Failures != 3 || st.LastErr != nil {
		t.Errorf("stats %+v, want 3 sent after 3 failures", st)
	}
	for i, b := range got {
		if len(b) != 1 || b[0] != byte(i) {
			t.Errorf("request %d: %v, want [%d]", i, b, i)
		}
	}
	if len(warnings) != 2 {
		t.Errorf("warnings %q, want one on failing and one on working again", warnings)
	}
}

// TestSubmitDoesNotWait: with an endpoint that takes connections and
// never answers, Submit returns at once and Close gives up after its
// wait, leaving the requests in the spool.
func TestSubmitDoesNotWait(t *testing.T) {
	mute, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer mute.Close()
	ep, _ := ParseEndpoint("http://" + mute.Addr().String())
	c, err := Dial(ep)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sp, err := OpenSpool(t.TempDir(), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	s := Start(c, sp, Options{Timeout: time.Hour})
	start := time.Now()
	for range 20 {
		if err := s.Submit(make([]byte, 1000)); err != nil {
			t.Fatal(err)
		}
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("20 Submits to a mute endpoint took %v", took)
	}
	st := s.Close(200 * time.Millisecond)
	if st.Waiting != 20 || st.Sent != 0 {
		t.Errorf("stats %+v, want 20 waiting", st)
	}
}

func TestParseEndpoint(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"http://127.0.0.1:4318", "http://127.0.0.1:4318/v1development/profiles"},
		{"http://h:1/custom/path", "http://h:1/custom/path"},
		{"grpc://127.0.0.1:4317", "grpc://127.0.0.1:4317"},
		{"ftp://h:1", ""}, {"grpc://h:1/path", ""}, {"127.0.0.1:4318", ""}, {"http://", ""},
	} {
		ep, err := ParseEndpoint(tc.in)
		if (err != nil) != (tc.want == "") || err == nil && ep.String() != tc.want {
			t.Errorf("ParseEndpoint(%q) = %v, %v; want %q", tc.in, ep, err, tc.want)
		}
	}
}
