package synth

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// Thread is one task of a process, as its COMM and FORK records need it.
type Thread struct {
	PID  int // thread group id (the process), "Tgid:" in status
	TID  int // the task's own id
	PPID int // parent process, "PPid:" in status; used only by AppendFork
	// Comm is the "Name:" of the task's status file, as perf reads it: the
	// kernel escapes a newline as `\n` and a backslash as `\\` there.
	Comm string
}

// Threads lists every task of process pid from procRoot/PID/task, in the
// order the kernel lists them (the leader first), reading each task's
// status file. Tasks that exit while being read are left out. If the
// process is gone, or all its tasks went while being read, the error wraps
// os.ErrNotExist.
func Threads(procRoot string, pid int) ([]Thread, error) {
	dir := filepath.Join(procRoot, strconv.Itoa(pid), "task")
	names, err := readDirNames(dir)
	if err != nil {
		return nil, procErr("list threads", pid, err)
	}
	ts := make([]Thread, 0, len(names))
	for _, name := range names {
		tid, err := strconv.Atoi(name)
		if err != nil || tid <= 0 {
			continue
		}
		file := filepath.Join(dir, name, "status")
		text, err := os.ReadFile(file)
		if gone(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read thread %d of pid %d: %w", tid, pid, err)
		}
		t, err := parseStatus(text)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", file, err)
		}
		t.TID = tid
		ts = append(ts, t)
	}
	if len(ts) == 0 {
		return nil, fmt.Errorf("list threads of pid %d: no task left: %w", pid, os.ErrNotExist)
	}
	return ts, nil
}

// readDirNames lists a directory without sorting, so /proc's own order
// stays.
func readDirNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// ErrStatusSyntax is wrapped by the errors of status files without the
// lines a thread needs.
var ErrStatusSyntax = errors.New("malformed status file")

// parseStatus reads Name, Tgid and PPid from a /proc status file. Name is
// taken as perf takes it: after "Name:" and any white space, up to the end
// of the line.
func parseStatus(text []byte) (Thread, error) {
	var t Thread
	var haveTgid bool
	for len(text) > 0 {
		line := text
		if i := bytes.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = nil
		}
		key, val, ok := bytes.Cut(line, []byte{':'})
		if !ok {
			continue
		}
		switch string(key) {
		case "Name":
			t.Comm = string(bytes.TrimLeft(val, " \t\v\f\r"))
		case "Tgid":
			n, err := strconv.Atoi(string(bytes.TrimSpace(val)))
			if err != nil || n <= 0 {
				return Thread{}, fmt.Errorf("%w: Tgid %q", ErrStatusSyntax, val)
			}
			t.PID, haveTgid = n, true
		case "PPid":
			n, err := strconv.Atoi(string(bytes.TrimSpace(val)))
			if err != nil || n < 0 {
				return Thread{}, fmt.Errorf("%w: PPid %q", ErrStatusSyntax, val)
			}
			t.PPID = n
		}
	}
	if !haveTgid {
		return Thread{}, fmt.Errorf("%w: no Tgid line", ErrStatusSyntax)
	}
	return t, nil
}
