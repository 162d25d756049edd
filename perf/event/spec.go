package event

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hwprof/hwprof/perf"
)

// This file parses perf's event syntax (what `perf record -e` accepts) into
// a Spec. Nothing here looks at PMUs; BuildAttrs resolves a Spec against
// them.

// SpecKind says which of perf's event forms a Spec uses.
type SpecKind int

const (
	SpecSymbolic SpecKind = iota // a named hardware or software event: cycles, cpu-clock
	SpecRaw                      // rNNNN: a raw hex config for the core PMU
	SpecPMU                      // pmu/term=value,.../
)

func (k SpecKind) String() string {
	switch k {
	case SpecSymbolic:
		return "symbolic"
	case SpecRaw:
		return "raw"
	case SpecPMU:
		return "pmu"
	}
	return "SpecKind(" + strconv.Itoa(int(k)) + ")"
}

// Spec is one event specification, parsed but not resolved.
type Spec struct {
	Text  string   // as written
	Kind  SpecKind // which form
	Name  string   // the event name (SpecSymbolic) or PMU name (SpecPMU)
	Raw   uint64   // the config of an rNNNN event (SpecRaw)
	Terms []Term   // the terms between the slashes, in order
	// Mods are the modifiers after ':' (or after the closing '/'); HasMods
	// says whether any were written, which changes the exclude_guest
	// default.
	Mods    Modifiers
	HasMods bool
}

// Term is one "key=value" or bare "key" between the slashes of an event.
type Term struct {
	Key   string
	Value string // "" for a bare term
	Bare  bool   // no "=value": a format term means 1, a flag term means set
}

// Modifiers are perf's event modifiers, turned into the attr bits perf
// sets for them (tools/perf/util/parse-events.c, get_event_modifier).
type Modifiers struct {
	ExcludeUser, ExcludeKernel, ExcludeHV bool // u, k, h: count only the named levels
	ExcludeHost, ExcludeGuest             bool // G, H, and u or p imply exclude_guest
	ExcludeIdle                           bool // I
	Precise                               uint8
	PreciseMax                            bool // P: the highest precise_ip the PMU takes
	SampleRead                            bool // S: PERF_SAMPLE_READ
	Pinned                                bool // D
	Exclusive                             bool // e
	Weak                                  bool // W: weak group (no attr effect)
}

// modifierLetters are the modifiers perf record accepts; 'b' (BPF
// counters) belongs to perf stat.
const modifierLetters = "ukhGHIpPSDWe"

// ParseModifiers interprets modifier letters as perf 6.1 does: the first
// of u/k/h excludes every level and each of them re-includes its own; u
// and p also exclude guests unless G or H came first. Letters other than p
// may appear once; p at most three times.
func ParseModifiers(s string) (Modifiers, error) {
	var m Modifiers
	if len(s) > len("ukhGHpppPSDIWeb") {
		return m, fmt.Errorf("modifiers %q: too long", s)
	}
	exclude, excludeGH := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if strings.IndexByte(modifierLetters, c) < 0 {
			return m, fmt.Errorf("modifiers %q: unknown modifier %q (valid: %s)", s, c, spaced(modifierLetters))
		}
		if c != 'p' && strings.IndexByte(s[i+1:], c) >= 0 {
			return m, fmt.Errorf("modifiers %q: %q given twice", s, c)
		}
		switch c {
		case 'u', 'k', 'h':
			if !exclude {
				exclude = true
				m.ExcludeUser, m.ExcludeKernel, m.ExcludeHV = true, true, true
			}
			switch c {
			case 'u':
				m.ExcludeUser = false
				if !excludeGH {
					m.ExcludeGuest = true
				}
			case 'k':
				m.ExcludeKernel = false
			case 'h':
				m.ExcludeHV = false
			}
		case 'G', 'H':
			if !excludeGH {
				excludeGH = true
				m.ExcludeGuest, m.ExcludeHost = true, true
			}
			if c == 'G' {
				m.ExcludeGuest = false
			} else {
				m.ExcludeHost = false
			}
		case 'I':
			m.ExcludeIdle = true
		case 'p':
			m.Precise++
			if !excludeGH {
				m.ExcludeGuest = true
			}
		case 'P':
			m.PreciseMax = true
		case 'S':
			m.SampleRead = true
		case 'D':
			m.Pinned = true
		case 'e':
			m.Exclusive = true
		case 'W':
			m.Weak = true
		}
	}
	if m.Precise > 3 {
		return m, fmt.Errorf("modifiers %q: precise level %d, at most 3 (ppp)", s, m.Precise)
	}
	return m, nil
}

func validModifiers(s string) bool {
	_, err := ParseModifiers(s)
	return err == nil
}

func spaced(letters string) string {
	return strings.Join(strings.Split(letters, ""), " ")
}

// SplitList splits one -e argument at the commas that separate
// events, leaving the commas between the slashes of a pmu/.../ alone:
// "cycles,cpu/event=0xc4,umask=0x20/u" is two events.
func SplitList(s string) ([]string, error) {
	if strings.ContainsAny(s, "{}") {
		return nil, fmt.Errorf("event list %q: event groups {...} are not supported", s)
	}
	var out []string
	start, inside := 0, false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '/':
			inside = !inside
		case ',':
			if !inside {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	out = append(out, s[start:])
	for _, e := range out {
		if strings.TrimSpace(e) == "" {
			return nil, fmt.Errorf("event list %q: empty event", s)
		}
	}
	return out, nil
}

// Parse parses one event specification:
//
//	name[:mods]              cycles, instructions:u, cpu-clock, page-faults:k
//	name/terms/[mods]        cpu-clock/period=10000/, cycles/name=c/u
//	rNNNN[:mods]             r20c4:pp (1-16 hex digits)
//	rNNNN/terms/[mods]
//	pmu/terms/[mods]         cpu/event=0xc4,umask=0x20,name=calls/u
//
// Terms are key=value or bare keys, separated by commas; values are
// decimal or 0x-hex numbers, words, or quoted strings. Parse checks
// syntax only: whether a name or term exists depends on the PMUs.
func Parse(s string) (Spec, error) {
	sp := Spec{Text: s}
	head, rest := s, ""
	slash := strings.IndexByte(s, '/')
	if slash >= 0 {
		head, rest = s[:slash], s[slash+1:]
	}
	mods := ""
	if slash < 0 {
		if h, m, ok := strings.Cut(head, ":"); ok {
			head, mods = h, m
			sp.HasMods = m != ""
		}
	} else {
		end := strings.LastIndexByte(rest, '/')
		if end < 0 {
			return sp, specErr(s, "missing closing '/'")
		}
		terms, err := parseTerms(rest[:end])
		if err != nil {
			return sp, specErr(s, err.Error())
		}
		sp.Terms = terms
		mods = rest[end+1:]
		sp.HasMods = mods != ""
	}
	if head == "" {
		return sp, specErr(s, "no event name")
	}
	if !isEventName(head) {
		return sp, specErr(s, fmt.Sprintf("bad event name %q", head))
	}
	sp.Name = head
	switch {
	case isRawName(head):
		v, err := strconv.ParseUint(head[1:], 16, 64)
		if err != nil {
			return sp, specErr(s, fmt.Sprintf("bad raw event %q", head))
		}
		sp.Kind, sp.Raw, sp.Name = SpecRaw, v, ""
	case isSymbolicName(head):
		sp.Kind = SpecSymbolic
	case slash >= 0:
		sp.Kind = SpecPMU
	case len(head) > 1 && head[0] == 'r' && looksRaw(head[1:]):
		return sp, specErr(s, fmt.Sprintf("bad raw event %q: want r and 1-16 hex digits", head))
	case slash < 0 && mods != "" && !validModifiers(mods):
		return sp, specErr(s, fmt.Sprintf("unknown event %q (tracepoints are not supported; %s)", s, knownEventsHint))
	default:
		return sp, specErr(s, fmt.Sprintf("unknown event %q (%s)", head, knownEventsHint))
	}
	m, err := ParseModifiers(mods)
	if err != nil {
		return sp, specErr(s, err.Error())
	}
	sp.Mods = m
	return sp, nil
}

const knownEventsHint = "want a hardware or software event name such as cycles or cpu-clock, rNNNN, or pmu/terms/"

// isRawName reports r followed by 1-16 hex digits, which perf reads as a
// raw event even where a symbolic name could also match.
func isRawName(s string) bool {
	if len(s) < 2 || len(s) > 17 || s[0] != 'r' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isHexDigit(s[i]) {
			return false
		}
	}
	return true
}

// looksRaw reports text that was probably meant as a raw code: it starts
// with a decimal digit or is all letters and digits with a digit in it.
func looksRaw(s string) bool {
	digit := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case '0' <= c && c <= '9':
			digit = true
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		default:
			return false
		}
	}
	return digit
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// isEventName accepts the characters perf allows in event and PMU names.
func isEventName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == '-' || c == '.' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// SpecError is a malformed or unresolvable event specification.
type SpecError struct {
	Spec string // the specification as written
	Msg  string
}

func (e *SpecError) Error() string { return fmt.Sprintf("event %q: %s", e.Spec, e.Msg) }

func specErr(spec, msg string) error { return &SpecError{Spec: spec, Msg: msg} }

// parseTerms splits the text between the slashes into terms.
func parseTerms(s string) ([]Term, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var terms []Term
	for len(s) > 0 {
		t, rest, err := nextTerm(s)
		if err != nil {
			return nil, err
		}
		terms = append(terms, t)
		s = rest
	}
	return terms, nil
}

// nextTerm reads one term and the comma after it.
func nextTerm(s string) (Term, string, error) {
	i := 0
	for i < len(s) && s[i] != ',' && s[i] != '=' {
		i++
	}
	key := strings.TrimSpace(s[:i])
	if key == "" {
		return Term{}, "", fmt.Errorf("empty term in %q", s)
	}
	if !isEventName(key) {
		return Term{}, "", fmt.Errorf("bad term name %q", key)
	}
	if i == len(s) || s[i] == ',' {
		rest, err := afterComma(s[i:])
		return Term{Key: key, Bare: true}, rest, err
	}
	s = strings.TrimLeft(s[i+1:], " ")
	var val string
	if len(s) > 0 && (s[0] == '\'' || s[0] == '"') {
		end := strings.IndexByte(s[1:], s[0])
		if end < 0 {
			return Term{}, "", fmt.Errorf("term %s: unterminated quote", key)
		}
		val, s = s[1:1+end], s[2+end:]
		if t := strings.TrimLeft(s, " "); t != "" && t[0] != ',' {
			return Term{}, "", fmt.Errorf("term %s: text after the quoted value", key)
		}
	} else {
		j := strings.IndexByte(s, ',')
		if j < 0 {
			j = len(s)
		}
		val, s = strings.TrimSpace(s[:j]), s[j:]
		if val == "" {
			return Term{}, "", fmt.Errorf("term %s: empty value", key)
		}
		if strings.ContainsAny(val, "= ") {
			return Term{}, "", fmt.Errorf("term %s: bad value %q", key, val)
		}
	}
	t := Term{Key: key, Value: val}
	rest, err := afterComma(strings.TrimLeft(s, " "))
	return t, rest, err
}

// afterComma consumes the comma that ends a term; a trailing comma is an
// error, as in perf.
func afterComma(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	s = s[1:] // s[0] is ','
	if strings.TrimSpace(s) == "" {
		return "", fmt.Errorf("trailing comma")
	}
	return s, nil
}

// parseTermNumber reads a term value as perf does: decimal, or hex with a
// 0x prefix (a leading 0 is still decimal).
func parseTermNumber(v string) (uint64, error) {
	if strings.HasPrefix(v, "0x") || strings.HasPrefix(v, "0X") {
		return strconv.ParseUint(v[2:], 16, 64)
	}
	return strconv.ParseUint(v, 10, 64)
}

// symbolicEvent is one named event of perf's lexer
// (tools/perf/util/parse-events.l).
type symbolicEvent struct {
	typ    perf.EventType
	config uint64
}

var symbolicEvents = map[string]symbolicEvent{
	"cpu-cycles":              {perf.TypeHardware, perf.HWCPUCycles},
	"cycles":                  {perf.TypeHardware, perf.HWCPUCycles},
	"stalled-cycles-frontend": {perf.TypeHardware, perf.HWStalledCyclesFrontend},
	"idle-cycles-frontend":    {perf.TypeHardware, perf.HWStalledCyclesFrontend},
	"stalled-cycles-backend":  {perf.TypeHardware, perf.HWStalledCyclesBackend},
	"idle-cycles-backend":     {perf.TypeHardware, perf.HWStalledCyclesBackend},
	"instructions":            {perf.TypeHardware, perf.HWInstructions},
	"cache-references":        {perf.TypeHardware, perf.HWCacheReferences},
	"cache-misses":            {perf.TypeHardware, perf.HWCacheMisses},
	"branch-instructions":     {perf.TypeHardware, perf.HWBranchInstructions},
	"branches":                {perf.TypeHardware, perf.HWBranchInstructions},
	"branch-misses":           {perf.TypeHardware, perf.HWBranchMisses},
	"bus-cycles":              {perf.TypeHardware, perf.HWBusCycles},
	"ref-cycles":              {perf.TypeHardware, perf.HWRefCPUCycles},
	"cpu-clock":               {perf.TypeSoftware, perf.SWCPUClock},
	"task-clock":              {perf.TypeSoftware, perf.SWTaskClock},
	"page-faults":             {perf.TypeSoftware, perf.SWPageFaults},
	"faults":                  {perf.TypeSoftware, perf.SWPageFaults},
	"minor-faults":            {perf.TypeSoftware, perf.SWPageFaultsMin},
	"major-faults":            {perf.TypeSoftware, perf.SWPageFaultsMaj},
	"context-switches":        {perf.TypeSoftware, perf.SWContextSwitches},
	"cs":                      {perf.TypeSoftware, perf.SWContextSwitches},
	"cpu-migrations":          {perf.TypeSoftware, perf.SWCPUMigrations},
	"migrations":              {perf.TypeSoftware, perf.SWCPUMigrations},
	"alignment-faults":        {perf.TypeSoftware, perf.SWAlignmentFaults},
	"emulation-faults":        {perf.TypeSoftware, perf.SWEmulationFaults},
	"dummy":                   {perf.TypeSoftware, perf.SWDummy},
	"bpf-output":              {perf.TypeSoftware, perf.SWBPFOutput},
	"cgroup-switches":         {perf.TypeSoftware, perf.SWCgroupSwitches},
}

func isSymbolicName(s string) bool {
	_, ok := symbolicEvents[s]
	return ok
}
