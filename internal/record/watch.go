package record

import (
	"bytes"
	"os"
	"strconv"
	"time"
)

// WatchInterval is how often Options.Watch is called.
const WatchInterval = 250 * time.Millisecond

// Usage is what the targets have used while recording, for Options.Watch.
type Usage struct {
	Samples uint64 // samples written so far, every event's
	// User and System are the CPU time of the processes recorded (the
	// program, or the -p processes; every thread of each, and their
	// children waited for), from /proc/PID/stat at its resolution of
	// clock ticks (10 ms). The time the kernel spends for a task, a uprobe
	// trap's included, is System.
	User, System time.Duration
}

// clockTick is the unit of /proc/PID/stat's times (USER_HZ, 100 on
// x86-64).
const clockTick = 10 * time.Millisecond

// watch calls Options.Watch about every WatchInterval (last: when it
// did) with the usage of the processes pids, passes its note to
// Options.Notice, and sets Stats.Stop to StopLimit (Stats.Limit saying
// why) when it asks to stop.
func (r *recorder) watch(last *time.Time, pids []int) {
	if r.o.Watch == nil || time.Since(*last) < WatchInterval {
		return
	}
	*last = time.Now()
	u := Usage{Samples: r.stats.Samples}
	for _, pid := range pids {
		user, sys, ok := cpuTimes(pid)
		if ok {
			u.User += user
			u.System += sys
		}
	}
	note, stop := r.o.Watch(u)
	if stop {
		r.stats.Stop, r.stats.Limit = StopLimit, note
		return
	}
	if note != "" && r.o.Notice != nil {
		r.o.Notice(note)
	}
}

// cpuTimes reads the user and system time of process pid and of its
// children it waited for (utime + cutime, stime + cstime: fields 14 to 17
// of /proc/PID/stat).
func cpuTimes(pid int) (user, sys time.Duration, ok bool) {
	b, err := os.ReadFile(procRoot + "/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// The command name, field 2, is in parentheses and may hold spaces:
	// the fields after it start at the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := bytes.Fields(b[i+1:]) // f[0] is field 3
	if len(f) < 15 {
		return 0, 0, false
	}
	var t [4]int64
	for k := range t {
		if t[k], err = strconv.ParseInt(string(f[11+k]), 10, 64); err != nil {
			return 0, 0, false
		}
	}
	return time.Duration(t[0]+t[2]) * clockTick, time.Duration(t[1]+t[3]) * clockTick, true
}

// stopAsked sets Stats.Stop when the recording is to end for a reason of
// its own (a failed write, Options.Duration, Options.Watch's limit) and
// reports whether it is.
func (r *recorder) stopAsked(start time.Time, watched *time.Time, pids []int) bool {
	switch {
	case r.writeErr != nil:
		r.stats.Stop = StopWrite
	case r.o.Duration > 0 && time.Since(start) >= r.o.Duration:
		r.stats.Stop = StopDuration
	default:
		r.watch(watched, pids) // StopLimit
	}
	return r.stats.Stop != StopTargets
}
