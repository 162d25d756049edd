package otlp

import (
	"crypto/rand"
	"errors"
	"fmt"
	"math"

	"github.com/google/pprof/profile"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/hwprof/hwprof/report/pprof"
)

// Attribute keys of OpenTelemetry's semantic conventions that FromPProf
// writes.
const (
	AttrServiceName = "service.name"
	AttrHostName    = "host.name"
	AttrPID         = "process.pid"
	AttrExecutable  = "process.executable.name"
	AttrBuildIDGNU  = "process.executable.build_id.gnu"
	AttrBuildIDGo   = "process.executable.build_id.go"
	AttrComment     = "pprof.profile.comment"
)

// ScopeName is the instrumentation scope of the profiles hwprof sends.
const ScopeName = "github.com/hwprof/hwprof"

// Resource is where a profile comes from, as OpenTelemetry's resource
// attributes say it.
type Resource struct {
	ServiceName string // service.name; required
	HostName    string // host.name; "" leaves it out
	PID         int    // process.pid of the one process profiled; 0 leaves it out
	Executable  string // process.executable.name; "" leaves it out
	BuildID     string // the executable's GNU build-id, hex; "" leaves it out
	Version     string // the instrumentation scope's version: hwprof's
}

// skipped is the sample type FromPProf does not send (see the package doc).
const skipped = "samples"

// FromPProf converts pp into OTLP profiles from res: one resource, one
// scope, one Profile per sample type of pp but samples/count, in pp's
// order. A profile without such a sample type is an error.
func FromPProf(pp *profile.Profile, res Resource) (pprofile.Profiles, error) {
	out := pprofile.NewProfiles()
	if res.ServiceName == "" {
		return out, errors.New("otlp: no service name")
	}
	c := newConv(out.Dictionary())
	rp := out.ResourceProfiles().AppendEmpty()
	res.put(rp.Resource().Attributes())
	sp := rp.ScopeProfiles().AppendEmpty()
	sp.Scope().SetName(ScopeName)
	sp.Scope().SetVersion(res.Version)
	for i, st := range pp.SampleType {
		if st.Type == skipped {
			continue
		}
		if err := c.profile(sp.Profiles().AppendEmpty(), pp, i); err != nil {
			return out, err
		}
	}
	if sp.Profiles().Len() == 0 {
		return out, errors.New("otlp: the profile has no sample type to send")
	}
	return out, nil
}

// put writes r's attributes into m.
func (r Resource) put(m pcommon.Map) {
	m.PutStr(AttrServiceName, r.ServiceName)
	if r.HostName != "" {
		m.PutStr(AttrHostName, r.HostName)
	}
	if r.PID != 0 {
		m.PutInt(AttrPID, int64(r.PID))
	}
	if r.Executable != "" {
		m.PutStr(AttrExecutable, r.Executable)
	}
	if r.BuildID != "" {
		m.PutStr(AttrBuildIDGNU, r.BuildID)
	}
}

// conv fills one dictionary; every table's entry 0 is the zero entry.
type conv struct {
	dict   pprofile.ProfilesDictionary
	strs   map[string]int32
	attrs  map[attr]int32
	maps   map[*profile.Mapping]int32
	fns    map[*profile.Function]int32
	locs   map[*profile.Location]int32
	nodes  map[stackNode]int32 // stack trie: (parent node, location) -> node
	stacks map[int32]int32     // trie node -> stack table index
}

// attr is a string attribute: its key and value.
type attr struct{ key, value string }

// stackNode is a node of the trie stacks are interned in: its parent
// node (0: the root) and its location, leaf first.
type stackNode struct{ parent, loc int32 }

func newConv(d pprofile.ProfilesDictionary) *conv {
	c := &conv{
		dict: d, strs: map[string]int32{}, attrs: map[attr]int32{},
		maps: map[*profile.Mapping]int32{}, fns: map[*profile.Function]int32{},
		locs: map[*profile.Location]int32{}, nodes: map[stackNode]int32{}, stacks: map[int32]int32{},
	}
	c.str("")
	d.MappingTable().AppendEmpty()
	d.LocationTable().AppendEmpty()
	d.FunctionTable().AppendEmpty()
	d.StackTable().AppendEmpty()
	d.AttributeTable().AppendEmpty()
	d.LinkTable().AppendEmpty()
	return c
}

// profile converts sample type i of pp into p.
func (c *conv) profile(p pprofile.Profile, pp *profile.Profile, i int) error {
	st := pp.SampleType[i]
	p.SampleType().SetTypeStrindex(c.str(st.Type))
	p.SampleType().SetUnitStrindex(c.str(st.Unit))
	if pt := pp.PeriodType; pt != nil {
		p.PeriodType().SetTypeStrindex(c.str(pt.Type))
		p.PeriodType().SetUnitStrindex(c.str(pt.Unit))
		p.SetPeriod(pp.Period)
	}
	p.SetTime(pcommon.Timestamp(max(pp.TimeNanos, 0)))
	p.SetDurationNano(uint64(max(pp.DurationNanos, 0)))
	var id [16]byte
	_, _ = rand.Read(id[:]) // never fails (crypto/rand)
	p.SetProfileID(pprofile.ProfileID(id))
	if len(pp.Comments) > 0 {
		p.AttributeIndices().Append(c.commentAttr(pp.Comments))
	}
	for _, s := range pp.Sample {
		if i >= len(s.Value) || s.Value[i] == 0 {
			continue
		}
		stack, err := c.stack(s.Location)
		if err != nil {
			return err
		}
		os := p.Samples().AppendEmpty()
		os.SetStackIndex(stack)
		os.Values().Append(s.Value[i])
		for _, v := range s.Label[pprof.KindLabel] {
			os.AttributeIndices().Append(c.strAttr(pprof.KindLabel, v))
		}
	}
	return nil
}

// str is the index of s in the string table.
func (c *conv) str(s string) int32 {
	if i, ok := c.strs[s]; ok {
		return i
	}
	i := int32(c.dict.StringTable().Len())
	c.dict.StringTable().Append(s)
	c.strs[s] = i
	return i
}

// strAttr is the index of the string attribute key=value.
func (c *conv) strAttr(key, value string) int32 {
	k := attr{key, value}
	if i, ok := c.attrs[k]; ok {
		return i
	}
	t := c.dict.AttributeTable()
	a := t.AppendEmpty()
	a.SetKeyStrindex(c.str(key))
	a.Value().SetStr(value)
	c.attrs[k] = int32(t.Len() - 1)
	return c.attrs[k]
}

// commentAttr adds the attribute holding the profile's comments.
func (c *conv) commentAttr(comments []string) int32 {
	t := c.dict.AttributeTable()
	a := t.AppendEmpty()
	a.SetKeyStrindex(c.str(AttrComment))
	s := a.Value().SetEmptySlice()
	for _, cm := range comments {
		s.AppendEmpty().SetStr(cm)
	}
	return int32(t.Len() - 1)
}

// stack is the index of the stack of locs (leaf first) in the stack
// table.
func (c *conv) stack(locs []*profile.Location) (int32, error) {
	var node int32
	for _, l := range locs {
		li, err := c.location(l)
		if err != nil {
			return 0, err
		}
		k := stackNode{node, li}
		next, ok := c.nodes[k]
		if !ok {
			next = int32(len(c.nodes) + 1)
			c.nodes[k] = next
		}
		node = next
	}
	if i, ok := c.stacks[node]; ok {
		return i, nil
	}
	t := c.dict.StackTable()
	s := t.AppendEmpty()
	for _, l := range locs {
		s.LocationIndices().Append(c.locs[l])
	}
	if t.Len() > math.MaxInt32 {
		return 0, errors.New("otlp: too many stacks")
	}
	c.stacks[node] = int32(t.Len() - 1)
	return c.stacks[node], nil
}

// location is the index of l in the location table.
func (c *conv) location(l *profile.Location) (int32, error) {
	if l == nil {
		return 0, errors.New("otlp: a sample has a nil location")
	}
	if i, ok := c.locs[l]; ok {
		return i, nil
	}
	t := c.dict.LocationTable()
	ol := t.AppendEmpty()
	ol.SetAddress(l.Address)
	if l.Mapping != nil {
		ol.SetMappingIndex(c.mapping(l.Mapping))
	}
	for _, ln := range l.Line {
		if ln.Function == nil {
			return 0, fmt.Errorf("otlp: location %d has a line without a function", l.ID)
		}
		oln := ol.Lines().AppendEmpty()
		oln.SetFunctionIndex(c.function(ln.Function))
		oln.SetLine(ln.Line)
		oln.SetColumn(ln.Column)
	}
	c.locs[l] = int32(t.Len() - 1)
	return c.locs[l], nil
}

// mapping is the index of m in the mapping table.
func (c *conv) mapping(m *profile.Mapping) int32 {
	if i, ok := c.maps[m]; ok {
		return i
	}
	t := c.dict.MappingTable()
	om := t.AppendEmpty()
	om.SetMemoryStart(m.Start)
	om.SetMemoryLimit(m.Limit)
	om.SetFileOffset(m.Offset)
	om.SetFilenameStrindex(c.str(m.File))
	if m.BuildID != "" {
		om.AttributeIndices().Append(c.strAttr(buildIDKey(m.BuildID), m.BuildID))
	}
	c.maps[m] = int32(t.Len() - 1)
	return c.maps[m]
}

// buildIDKey is the attribute key of build-id id: the GNU one (hex) or a
// Go build-id (anything else: "actionID/contentID" in base64).
func buildIDKey(id string) string {
	for _, r := range id {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f' || 'A' <= r && r <= 'F') {
			return AttrBuildIDGo
		}
	}
	return AttrBuildIDGNU
}

// function is the index of f in the function table.
func (c *conv) function(f *profile.Function) int32 {
	if i, ok := c.fns[f]; ok {
		return i
	}
	t := c.dict.FunctionTable()
	of := t.AppendEmpty()
	of.SetNameStrindex(c.str(f.Name))
	of.SetSystemNameStrindex(c.str(f.SystemName))
	of.SetFilenameStrindex(c.str(f.Filename))
	of.SetStartLine(f.StartLine)
	c.fns[f] = int32(t.Len() - 1)
	return c.fns[f]
}
