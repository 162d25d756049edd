// Command callgrindafdo writes a sample profile of exact counts: valgrind's
// callgrind counts every instruction a program runs and every call it
// makes, and callgrindafdo folds those counts into the LLVM text sample
// profile (report/autofdo) as hwprof folds an LBR recording's: each line
// its most executed instruction's count times its duplication factor,
// the calls as call targets at their lines and as the callees' heads. It
// is what a sample profile holds when nothing in it is estimated — the
// most any profile of the format, hwprof's included, can give clang's
// -fprofile-sample-use — for scripts/bench-fdo.sh to measure.
//
// usage: callgrindafdo [-object PATH] -o OUT CALLGRIND.OUT
//
// CALLGRIND.OUT is callgrind's output with one cost line per instruction,
// absolute addresses and names written out in full, and no jumps:
//
//	valgrind --tool=callgrind --dump-instr=yes --compress-strings=no \
//	    --compress-pos=no --callgrind-out-file=CALLGRIND.OUT PROG ARGS
//
// The profile is of the program's functions (the file's cmd: line names
// it), or of the object -object names (its path as callgrind wrote it, or
// its base name). OUT is created; an existing OUT is replaced only if it
// is a regular file.
package main

import (
	"bufio"
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/ccmap"
	"github.com/hwprof/hwprof/internal/output"
	"github.com/hwprof/hwprof/profile"
	"github.com/hwprof/hwprof/report/autofdo"
	"github.com/hwprof/hwprof/symbolize"
)

func main() {
	out := flag.String("o", "", "write the profile to `FILE`")
	object := flag.String("object", "", "profile the object `PATH` (default: the program)")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: callgrindafdo [-object PATH] -o OUT CALLGRIND.OUT")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 || *out == "" {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *object, *out); err != nil {
		fmt.Fprintln(os.Stderr, "callgrindafdo:", err)
		os.Exit(1)
	}
}

// run writes the profile of object in the callgrind file in to out.
func run(in, object, out string) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	c, err := parse(f)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	obj, err := c.pick(object)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	p, err := c.profile(obj)
	if err != nil {
		return err
	}
	counts, err := autofdo.FromProfile(p, obj)
	if err != nil {
		return err
	}
	prof := autofdo.Combine([]autofdo.Counts{counts})
	o, err := output.Open(out)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(o.File)
	if err := errors.Join(autofdo.WriteText(w, prof), w.Flush()); err != nil {
		return errors.Join(err, o.Discard())
	}
	if err := o.Close(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "callgrindafdo: %s: %d functions of %s; left out: %d instruction executions without a source line\n",
		out, len(prof.Funcs), obj, prof.NoLine)
	return nil
}

// counts are a callgrind file's instruction executions and calls, by
// object.
type counts struct {
	cmd   string                       // the program's path (cmd: line)
	execs map[string]map[uint64]uint64 // object → instruction address → executions
	calls map[string]map[call]uint64   // caller's object → call → calls
}

// call is a call from an instruction to a function: its object, its
// address there and its name as callgrind gives it.
type call struct {
	site       uint64
	calleeObj  string
	callee     uint64
	calleeName string
}

// parse reads a callgrind file (format version 1): its cost lines, each
// an instruction's address and its Ir count, and its calls.
func parse(r io.Reader) (*counts, error) {
	c := &counts{execs: map[string]map[uint64]uint64{}, calls: map[string]map[call]uint64{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var (
		ob, cob, cfn string
		pending      *call // a calls= line, waiting for its cost line
		pendingN     uint64
		positions    = -1 // position columns of a cost line
		irCol        = -1
		n            int
	)
	for sc.Scan() {
		n++
		line := sc.Text()
		switch {
		case line == "" || line[0] == '#':
		case strings.HasPrefix(line, "positions:"):
			fs := strings.Fields(strings.TrimPrefix(line, "positions:"))
			if len(fs) == 0 || fs[0] != "instr" {
				return nil, fmt.Errorf("line %d: positions %q: run callgrind with --dump-instr=yes", n, line)
			}
			positions = len(fs)
		case strings.HasPrefix(line, "events:"):
			fs := strings.Fields(strings.TrimPrefix(line, "events:"))
			if len(fs) == 0 || fs[0] != "Ir" {
				return nil, fmt.Errorf("line %d: events %q: the first event must be Ir (instructions run)", n, line)
			}
			irCol = 0
		case strings.HasPrefix(line, "cmd:"):
			if fs := strings.Fields(strings.TrimPrefix(line, "cmd:")); len(fs) > 0 {
				c.cmd = fs[0]
			}
		case compressed.MatchString(line):
			return nil, fmt.Errorf("line %d: %q: compressed names: run callgrind with --compress-strings=no", n, line)
		case strings.HasPrefix(line, "ob="):
			ob = strings.TrimPrefix(line, "ob=")
		case strings.HasPrefix(line, "cob="):
			cob = strings.TrimPrefix(line, "cob=")
		case strings.HasPrefix(line, "cfn="):
			cfn = strings.TrimPrefix(line, "cfn=")
		case strings.HasPrefix(line, "jump="), strings.HasPrefix(line, "jcnd="):
			return nil, fmt.Errorf("line %d: jumps: run callgrind without --collect-jumps", n)
		case strings.HasPrefix(line, "calls="):
			fs := strings.Fields(strings.TrimPrefix(line, "calls="))
			if len(fs) < 2 {
				return nil, fmt.Errorf("line %d: %q: no call count and target", n, line)
			}
			k, err1 := strconv.ParseUint(fs[0], 10, 64)
			to, err2 := address(fs[1])
			if err := errors.Join(err1, err2); err != nil {
				return nil, fmt.Errorf("line %d: %q: %w", n, line, err)
			}
			pending, pendingN = &call{calleeObj: cmp.Or(cob, ob), callee: to, calleeName: cfn}, k
			cob, cfn = "", ""
		case strings.HasPrefix(line, "0x"), line[0] >= '0' && line[0] <= '9', line[0] == '+', line[0] == '-', line[0] == '*':
			if positions < 0 || irCol < 0 {
				return nil, fmt.Errorf("line %d: a cost line before the positions: and events: lines", n)
			}
			fs := strings.Fields(line)
			at, err := address(fs[0])
			if err != nil {
				return nil, fmt.Errorf("line %d: %q: %w (run callgrind with --compress-pos=no)", n, line, err)
			}
			if pending != nil {
				// The cost line of a call: the call instruction, and the
				// call's inclusive cost (not the instruction's own).
				pending.site = at
				if c.calls[ob] == nil {
					c.calls[ob] = map[call]uint64{}
				}
				c.calls[ob][*pending] += pendingN
				pending = nil
				continue
			}
			if len(fs) <= positions+irCol {
				continue // no Ir cost on this line
			}
			ir, err := strconv.ParseUint(fs[positions+irCol], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: %q: %w", n, line, err)
			}
			if c.execs[ob] == nil {
				c.execs[ob] = map[uint64]uint64{}
			}
			c.execs[ob][at] += ir
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if positions < 0 {
		return nil, errors.New("not a callgrind file (no positions: line)")
	}
	return c, nil
}

// compressed matches a name line of a file written with compressed
// names: "fn=(12) name" the first time, "fn=(12)" after.
var compressed = regexp.MustCompile(`^c?(fn|ob|fl|fi|fe)=\([0-9]+\)`)

// address reads an absolute instruction address (hex with 0x, or
// decimal); relative positions (+N, -N, *) are refused.
func address(s string) (uint64, error) {
	if strings.HasPrefix(s, "0x") {
		return strconv.ParseUint(s[2:], 16, 64)
	}
	if s == "" || s[0] == '+' || s[0] == '-' || s[0] == '*' {
		return 0, fmt.Errorf("relative position %q", s)
	}
	return strconv.ParseUint(s, 10, 64)
}

// pick resolves -object: a path as callgrind wrote it, or a base name;
// "" picks the program (the cmd: line).
func (c *counts) pick(object string) (string, error) {
	want := cmp.Or(object, c.cmd)
	for o := range c.execs {
		if o == want || filepath.Base(o) == filepath.Base(want) {
			return o, nil
		}
	}
	if object == "" {
		return "", fmt.Errorf("no instructions of the program %q (give -object)", c.cmd)
	}
	return "", fmt.Errorf("no instructions of an object %q", object)
}

// profile symbolizes obj's counted instructions and call sites into a
// profile.Profile with Executed and BranchCalls, as an LBR recording
// loaded with its instructions has them.
func (c *counts) profile(obj string) (*profile.Profile, error) {
	o, err := symbolize.Open(symbolize.ObjectKey{Path: obj}, symbolize.Options{})
	if err != nil {
		return nil, err
	}
	if !o.HasDWARF() {
		return nil, fmt.Errorf("%s: no DWARF line table (build it with -g)", obj)
	}
	var addrs []addrspace.ObjAddr
	for a := range c.execs[obj] {
		addrs = append(addrs, addrspace.ObjAddr(a))
	}
	nExec := len(addrs)
	calls := make([]call, 0, len(c.calls[obj]))
	for k := range c.calls[obj] {
		calls = append(calls, k)
		addrs = append(addrs, addrspace.ObjAddr(k.site), addrspace.ObjAddr(k.callee))
	}
	locs := o.Symbolize(addrs)
	p := &profile.Profile{Map: ccmap.New()}
	funcs := map[[2]string]ccmap.FuncID{}
	fn := func(object, name, link string, start uint64) ccmap.FuncID {
		k := [2]string{object, name}
		if id, ok := funcs[k]; ok {
			return id
		}
		id := ccmap.FuncID(len(p.Funcs))
		p.Funcs = append(p.Funcs, profile.Func{Name: name, LinkName: link, Object: object, Start: start})
		funcs[k] = id
		return id
	}
	here := func(l symbolize.Location) ccmap.FuncID {
		if l.Symbol == nil {
			return fn(obj, fmt.Sprintf("[%s+%#x]", filepath.Base(obj), l.Addr), "", 0)
		}
		n := l.Symbol.Name
		return fn(obj, cmp.Or(n.Short, n.Raw), n.Raw, uint64(l.Symbol.Start))
	}
	for i := range nExec {
		l := locs[i]
		p.Executed = append(p.Executed, profile.Instr{Func: here(l), Addr: uint64(l.Addr), Frames: sourceFrames(l.Frames),
			Self: c.execs[obj][uint64(l.Addr)]})
	}
	for j, k := range calls {
		site := locs[nExec+2*j]
		callee := fn(k.calleeObj, k.calleeName, k.calleeName, 0)
		if k.calleeObj == obj {
			callee = here(locs[nExec+2*j+1])
		}
		p.BranchCalls = append(p.BranchCalls, profile.BranchCall{Callee: callee,
			Site: profile.Instr{Func: here(site), Addr: k.site, Frames: sourceFrames(site.Frames), Self: c.calls[obj][k]}})
	}
	return p, nil
}

// sourceFrames are a location's frames as a profile holds them.
func sourceFrames(fr []symbolize.Frame) []profile.SourceFrame {
	out := make([]profile.SourceFrame, len(fr))
	for i, f := range fr {
		out[i] = profile.SourceFrame{Name: cmp.Or(f.Func.Short, f.Func.Full, f.Func.Raw), File: f.File, Line: f.Line,
			StartLine: f.StartLine, LinkName: f.Func.Raw, Discriminator: f.Discriminator}
	}
	return out
}
