package event

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/hwprof/hwprof/perf"
)

// SysfsPMURoot is where the kernel lists its PMUs, one directory each.
const SysfsPMURoot = "/sys/bus/event_source/devices"

// ErrNoPMU reports that a PMU an event needs is not present on this
// machine; BuildAttrs wraps it for a pmu/.../ event whose PMU is missing.
var ErrNoPMU = errors.New("PMU not present")

// PMU is one performance-monitoring unit as sysfs describes it, under
// SysfsPMURoot/<name>.
type PMU struct {
	Name string
	Type perf.EventType // contents of the type file: perf_event_attr.type for its events
	Dir  string         // the directory it was read from; "" for built-ins
	// Caps holds the caps/* files, trimmed: "branches" (LBR depth),
	// "pmu_name", "max_precise", ...
	Caps map[string]string
	// Formats holds the format/* files: how a term such as "event" or
	// "umask" maps onto config, config1, config2 or config3 bits.
	Formats map[string]Format
	// Events holds the events/* aliases: name → terms ("event=0x3c"). The
	// .scale, .unit, .per-pkg and .snapshot companions are not kept.
	Events map[string]string
}

// BranchDepth is the LBR depth from caps/branches, 0 if absent or not a
// number.
func (p *PMU) BranchDepth() int {
	n, err := strconv.Atoi(p.Caps["branches"])
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// CPUName is the micro-architecture from caps/pmu_name ("skylake"), "" if
// absent.
func (p *PMU) CPUName() string { return p.Caps["pmu_name"] }

// DiscoverPMUs reads every PMU directory under root (normally
// SysfsPMURoot). A directory without a readable, numeric type file, or
// with a format file that does not parse, is an error that names the file.
func DiscoverPMUs(root string) (map[string]*PMU, error) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("discover PMUs: %w", err)
	}
	pmus := make(map[string]*PMU, len(ents))
	for _, e := range ents {
		dir := filepath.Join(root, e.Name())
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue // sysfs entries are symlinks to directories
		}
		p, err := readPMU(e.Name(), dir)
		if err != nil {
			return nil, fmt.Errorf("discover PMUs: %w", err)
		}
		pmus[p.Name] = p
	}
	return pmus, nil
}

// PMUType reads the type number of the PMU name under SysfsPMURoot (the
// kernel assigns dynamic PMUs such as uprobe theirs at boot): what
// perf_event_attr.type is for its events.
func PMUType(name string) (perf.EventType, error) {
	return readType(name, filepath.Join(SysfsPMURoot, name))
}

func readType(name, dir string) (perf.EventType, error) {
	typ, err := readTrimmed(filepath.Join(dir, "type"))
	if err != nil {
		return 0, fmt.Errorf("pmu %s: %w", name, err)
	}
	t, err := strconv.ParseUint(typ, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("pmu %s: type %q: not a number", name, typ)
	}
	return perf.EventType(t), nil
}

func readPMU(name, dir string) (*PMU, error) {
	t, err := readType(name, dir)
	if err != nil {
		return nil, err
	}
	p := &PMU{Name: name, Type: t, Dir: dir}
	if p.Caps, err = readFiles(filepath.Join(dir, "caps"), nil); err != nil {
		return nil, fmt.Errorf("pmu %s: %w", name, err)
	}
	if p.Events, err = readFiles(filepath.Join(dir, "events"), isEventCompanion); err != nil {
		return nil, fmt.Errorf("pmu %s: %w", name, err)
	}
	formats, err := readFiles(filepath.Join(dir, "format"), nil)
	if err != nil {
		return nil, fmt.Errorf("pmu %s: %w", name, err)
	}
	p.Formats = make(map[string]Format, len(formats))
	for term, s := range formats {
		f, err := ParseFormat(s)
		if err != nil {
			return nil, fmt.Errorf("pmu %s: format/%s: %w", name, term, err)
		}
		p.Formats[term] = f
	}
	return p, nil
}

// isEventCompanion reports the events/ files that describe an alias
// rather than define one.
func isEventCompanion(name string) bool {
	for _, s := range [...]string{".scale", ".unit", ".per-pkg", ".snapshot"} {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// readFiles reads every regular file of dir, trimmed, keyed by name. A
// missing dir is an empty map; skip leaves out names it reports true for.
func readFiles(dir string, skip func(string) bool) (map[string]string, error) {
	m := map[string]string{}
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		if e.IsDir() || (skip != nil && skip(e.Name())) {
			continue
		}
		s, err := readTrimmed(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		m[e.Name()] = s
	}
	return m, nil
}

func readTrimmed(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// IntelCorePMU returns the "cpu" PMU of an Intel core (Skylake-era
// format/ files and the architectural events/ aliases), Type TypeRaw, for
// building hardware attrs where sysfs has no cpu PMU. Caps is empty: the
// LBR depth cannot be known without the hardware.
func IntelCorePMU() *PMU {
	p := &PMU{Name: "cpu", Type: perf.TypeRaw, Caps: map[string]string{},
		Formats: map[string]Format{}, Events: map[string]string{}}
	for term, f := range intelCoreFormats {
		p.Formats[term] = Format{Field: f.Field, Ranges: append([]BitRange(nil), f.Ranges...)}
	}
	for name, terms := range intelCoreEvents {
		p.Events[name] = terms
	}
	return p
}

// intelCoreFormats mirrors /sys/bus/event_source/devices/cpu/format on
// Intel Skylake-class cores (arch/x86/events/intel/core.c).
var intelCoreFormats = map[string]Format{
	"event":       {"config", []BitRange{{0, 7}}},
	"umask":       {"config", []BitRange{{8, 15}}},
	"edge":        {"config", []BitRange{{18, 18}}},
	"pc":          {"config", []BitRange{{19, 19}}},
	"any":         {"config", []BitRange{{21, 21}}},
	"inv":         {"config", []BitRange{{23, 23}}},
	"cmask":       {"config", []BitRange{{24, 31}}},
	"in_tx":       {"config", []BitRange{{32, 32}}},
	"in_tx_cp":    {"config", []BitRange{{33, 33}}},
	"ldlat":       {"config1", []BitRange{{0, 15}}},
	"frontend":    {"config1", []BitRange{{0, 23}}},
	"offcore_rsp": {"config1", []BitRange{{0, 63}}},
}

// intelCoreEvents mirrors the architectural aliases of
// /sys/bus/event_source/devices/cpu/events on Intel cores.
var intelCoreEvents = map[string]string{
	"branch-instructions": "event=0xc4",
	"branch-misses":       "event=0xc5",
	"bus-cycles":          "event=0x3c,umask=0x01",
	"cache-misses":        "event=0x2e,umask=0x41",
	"cache-references":    "event=0x2e,umask=0x4f",
	"cpu-cycles":          "event=0x3c",
	"instructions":        "event=0xc0",
	"ref-cycles":          "event=0x00,umask=0x03",
}

// lookupPMU finds name in pmus, falling back to IntelCorePMU for "cpu".
// Anything else missing is an error wrapping ErrNoPMU.
func lookupPMU(pmus map[string]*PMU, name string) (*PMU, error) {
	if p, ok := pmus[name]; ok {
		return p, nil
	}
	if name == "cpu" {
		return IntelCorePMU(), nil
	}
	have := make([]string, 0, len(pmus))
	for n := range pmus {
		have = append(have, n)
	}
	sort.Strings(have)
	return nil, fmt.Errorf("no PMU %q (present: %s): %w", name, strings.Join(have, ", "), ErrNoPMU)
}

// Format mirrors one sysfs format/<term> file: which bits of which config
// field a term's value is scattered into, low bits first.
type Format struct {
	Field  string // "config", "config1", "config2" or "config3"
	Ranges []BitRange
}

// BitRange is an inclusive range of bit numbers, Lo ≤ Hi ≤ 63.
type BitRange struct{ Lo, Hi uint }

// ParseFormat parses the contents of a format file: "config:0-7",
// "config1:0-15,32", "config:63".
func ParseFormat(s string) (Format, error) {
	s = strings.TrimSpace(s)
	field, list, ok := strings.Cut(s, ":")
	if !ok {
		return Format{}, fmt.Errorf("format %q: want field:bits", s)
	}
	switch field {
	case "config", "config1", "config2", "config3":
	default:
		return Format{}, fmt.Errorf("format %q: unknown field %q (want config, config1, config2 or config3)", s, field)
	}
	f := Format{Field: field}
	for _, part := range strings.Split(list, ",") {
		r, err := parseBitRange(part)
		if err != nil {
			return Format{}, fmt.Errorf("format %q: %w", s, err)
		}
		f.Ranges = append(f.Ranges, r)
	}
	return f, nil
}

func parseBitRange(s string) (BitRange, error) {
	lo, hi, isRange := strings.Cut(s, "-")
	l, err := strconv.ParseUint(lo, 10, 8)
	if err != nil || l > 63 {
		return BitRange{}, fmt.Errorf("bad bit %q", lo)
	}
	h := l
	if isRange {
		h, err = strconv.ParseUint(hi, 10, 8)
		if err != nil || h > 63 {
			return BitRange{}, fmt.Errorf("bad bit %q", hi)
		}
		if h < l {
			return BitRange{}, fmt.Errorf("bit range %q runs backwards", s)
		}
	}
	return BitRange{Lo: uint(l), Hi: uint(h)}, nil
}

// Width is the number of value bits the format holds.
func (f Format) Width() uint {
	var n uint
	for _, r := range f.Ranges {
		n += r.Hi - r.Lo + 1
	}
	return n
}

// Max is the largest value that fits.
func (f Format) Max() uint64 {
	if f.Width() >= 64 {
		return ^uint64(0)
	}
	return 1<<f.Width() - 1
}

// Apply scatters v into the attr field the format names, bit 0 of v into
// the first bit of the first range and so on. It ORs, as perf does when a
// specification repeats a term; start from a zero field to set. A value
// wider than the format is an error.
func (f Format) Apply(a *perf.Attr, v uint64) error {
	if v > f.Max() {
		return fmt.Errorf("value %#x too big for format %s, maximum is %d", v, f, f.Max())
	}
	var dst *uint64
	switch f.Field {
	case "config":
		dst = &a.Config
	case "config1":
		dst = &a.Config1
	case "config2":
		dst = &a.Config2
	case "config3":
		dst = &a.Config3
	default:
		return fmt.Errorf("format %s: unknown field %q", f, f.Field)
	}
	for _, r := range f.Ranges {
		for b := r.Lo; b <= r.Hi && v != 0; b++ {
			*dst |= (v & 1) << b
			v >>= 1
		}
	}
	return nil
}

// String prints the format as sysfs does.
func (f Format) String() string {
	var b strings.Builder
	b.WriteString(f.Field)
	b.WriteByte(':')
	for i, r := range f.Ranges {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatUint(uint64(r.Lo), 10))
		if r.Hi != r.Lo {
			b.WriteByte('-')
			b.WriteString(strconv.FormatUint(uint64(r.Hi), 10))
		}
	}
	return b.String()
}
