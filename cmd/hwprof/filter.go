package main

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/hwprof/hwprof/profile"
)

// processFilter is report's --pid, --tid and --comm as given, and the
// values read from them.
type processFilter struct {
	pids, tids, comms string // as given
	pidList, tidList  []int
	commList          []string
}

func (f processFilter) on() bool { return len(f.given()) > 0 }

// given is the filter's flags that were given, as "--pid 12".
func (f processFilter) given() []string {
	var parts []string
	for _, fl := range []struct{ name, val string }{{"--pid", f.pids}, {"--tid", f.tids}, {"--comm", f.comms}} {
		if fl.val != "" {
			parts = append(parts, fl.name+" "+fl.val)
		}
	}
	return parts
}

// String is the filter as flags: "--pid 12 --comm app".
func (f processFilter) String() string { return strings.Join(f.given(), " ") }

// maxListed bounds the processes, threads or names a filter's message
// lists.
const maxListed = 8

// check says what the filter did with a recording read through it: an
// error when it kept no sample, naming the filter and what the recording
// has (Recording.Sampled); else a warning for each value given that
// matches no sample of the recording.
func (f processFilter) check(rec *profile.Recording) (warnings []string, err error) {
	if rec.Samples == 0 {
		verb := "matches"
		if len(f.given()) > 1 {
			verb = "match" // together
		}
		return nil, fmt.Errorf("%s %s no sample: %s", f, verb, f.has(rec.Sampled))
	}
	for _, pid := range f.pidList {
		if !slices.ContainsFunc(rec.Sampled, func(s profile.SampledThread) bool { return int(s.PID) == pid }) {
			warnings = append(warnings, fmt.Sprintf("--pid %d matches no sample: the recording has no process %d", pid, pid))
		}
	}
	for _, tid := range f.tidList {
		if !slices.ContainsFunc(rec.Sampled, func(s profile.SampledThread) bool { return int(s.TID) == tid }) {
			warnings = append(warnings, fmt.Sprintf("--tid %d matches no sample: the recording has no thread %d", tid, tid))
		}
	}
	for _, comm := range f.commList {
		if !slices.ContainsFunc(rec.Sampled, func(s profile.SampledThread) bool { return s.Comm == comm }) {
			warnings = append(warnings, fmt.Sprintf("--comm %s matches no sample: no process of the recording is named %s", comm, comm))
		}
	}
	return warnings, nil
}

// has says what the recording has, in the terms of the filter: the
// names (--comm alone), the threads (with --tid) or the processes, the
// busiest first.
func (f processFilter) has(sampled []profile.SampledThread) string {
	if len(sampled) == 0 {
		return "the recording has no samples that name their process"
	}
	type group struct {
		key     string
		samples uint64
	}
	var groups []group
	index := map[string]int{}
	byName := f.pids == "" && f.tids == ""
	what := map[bool]string{true: "threads", false: "processes"}[f.tids != ""]
	if byName {
		what = "command names"
	}
	for _, s := range sampled {
		var key string
		switch {
		case byName:
			key = s.Comm
		case f.tids != "":
			key = fmt.Sprintf("tid %d (pid %d, %s", s.TID, s.PID, s.Comm)
		default:
			key = fmt.Sprintf("pid %d (%s", s.PID, s.Comm)
		}
		i, ok := index[key]
		if !ok {
			i = len(groups)
			index[key] = i
			groups = append(groups, group{key: key})
		}
		groups[i].samples += s.Samples
	}
	slices.SortStableFunc(groups, func(a, b group) int { return cmp.Compare(b.samples, a.samples) })
	var list []string
	for i, g := range groups {
		if i == maxListed {
			list = append(list, "and "+strconv.Itoa(len(groups)-i)+" more")
			break
		}
		if byName {
			list = append(list, fmt.Sprintf("%s (%d samples)", cmp.Or(g.key, "(unnamed)"), g.samples))
		} else {
			list = append(list, fmt.Sprintf("%s, %d samples)", g.key, g.samples))
		}
	}
	if len(groups) == 1 {
		if byName {
			return "the recording's samples are all of processes named " + list[0]
		}
		return "the recording's samples are all of " + list[0]
	}
	return fmt.Sprintf("the recording's samples are of %d %s: %s", len(groups), what, strings.Join(list, ", "))
}
