package perfdata

import (
	"encoding/binary"
	"fmt"
	"io"
	"unsafe"

	"github.com/hwprof/hwprof/buildid"
	"github.com/hwprof/hwprof/perf"
)

// This file decodes the feature sections (after the data in file mode,
// PERF_RECORD_HEADER_FEATURE records in pipe mode), mirroring the process_*
// functions of tools/perf/util/header.c.

// FileFeatures are the feature sections of a recording as read back. The
// embedded Features are the facts the Writer writes; the rest are written
// by perf only. A section that is absent leaves its fields zero; Present
// lists the sections that were there, decoded or not.
type FileFeatures struct {
	Features
	Present        []Feature
	EventDesc      []EventDesc         // HEADER_EVENT_DESC
	CPUTopology    *CPUTopology        // HEADER_CPU_TOPOLOGY
	NUMATopology   []NUMANode          // HEADER_NUMA_TOPOLOGY
	PMUMappings    []PMUMapping        // HEADER_PMU_MAPPINGS
	GroupDesc      []GroupDesc         // HEADER_GROUP_DESC
	HybridTopology []HybridNode        // HEADER_HYBRID_TOPOLOGY
	Compression    *CompressionInfo    // HEADER_COMPRESSED
	EventTypes     []EventTypeName     // the old event_types section or HEADER_EVENT_TYPE records
	TracingData    uint64              // HEADER_TRACING_DATA: bytes of tracing data (not decoded)
	BranchStack    bool                // HEADER_BRANCH_STACK: samples have branch stacks
	Sections       map[Feature]Section // file mode: where each section is
}

// Has reports whether the recording has feature f.
func (f *FileFeatures) Has(feat Feature) bool {
	for _, p := range f.Present {
		if p == feat {
			return true
		}
	}
	return false
}

// EventDesc is one entry of HEADER_EVENT_DESC: an event's attr, name and
// sample ids.
type EventDesc struct {
	Attr perf.Attr
	Name string
	IDs  []uint64
}

// CPUTopology is HEADER_CPU_TOPOLOGY: the sibling lists and, in newer
// files, each CPU's core, socket and die.
type CPUTopology struct {
	CoreSiblings   []string // CPU lists sharing a package ("0-3")
	ThreadSiblings []string // CPU lists sharing a core ("0,4")
	CPUs           []CPUTopo
	DieSiblings    []string
}

// CPUTopo is one CPU's place: core_id, socket_id and die_id (-1 if not
// recorded).
type CPUTopo struct {
	Core, Socket, Die int32
}

// NUMANode is one node of HEADER_NUMA_TOPOLOGY.
type NUMANode struct {
	Node              uint32
	MemTotal, MemFree uint64 // kB
	CPUs              string // CPU list
}

// PMUMapping is one entry of HEADER_PMU_MAPPINGS: a PMU's type number.
type PMUMapping struct {
	Type uint32
	Name string
}

// GroupDesc is one entry of HEADER_GROUP_DESC: an event group.
type GroupDesc struct {
	Name     string
	Leader   uint32 // index of the leader among the events
	NMembers uint32
}

// HybridNode is one entry of HEADER_HYBRID_TOPOLOGY: a core PMU and its
// CPUs.
type HybridNode struct {
	PMU  string
	CPUs string
}

// CompressionInfo is HEADER_COMPRESSED.
type CompressionInfo struct {
	Version, Type, Level, Ratio, MmapLen uint32
}

// EventTypeName names a tracepoint id (struct perf_trace_event_type).
type EventTypeName struct {
	ID   uint64
	Name string
}

// readFeatureSections reads the table of perf_file_section after the data
// and decodes each announced section within the budget (reader_budget.go);
// problems become warnings.
func (r *Reader) readFeatureSections(ra io.ReaderAt) {
	h := &r.hdr
	var feats []Feature
	for f := Feature(1); f < FeatBits; f++ {
		if h.HasFeature(f) {
			feats = append(feats, f)
		}
	}
	if len(feats) == 0 {
		return
	}
	at := h.Data.End()
	size := uint64(h.FileSize)
	if at > size || uint64(len(feats))*fileSectionSize > size-at {
		r.warn(fmt.Sprintf("feature table at %#x (%d sections) lies outside the file of %d bytes: features not read", at, len(feats), size))
		return
	}
	tableAt := Section{at, uint64(len(feats)) * fileSectionSize}
	if c, refused := r.read.claimOne("feature table", tableAt); refused {
		r.warn(fmt.Sprintf("feature table %#x+%#x overlaps the %s (%#x+%#x): features not read", tableAt.Offset, tableAt.Size, c.what, c.Offset, c.Size))
		return
	}
	table, err := r.readSection(ra, tableAt)
	if err != nil {
		r.warn(fmt.Sprintf("feature table at %#x: %v", at, err))
		return
	}
	r.feats.Sections = make(map[Feature]Section)
	var cands []span
	var toRead []Feature
	for i, f := range feats {
		s := Section{binary.LittleEndian.Uint64(table[16*i:]), binary.LittleEndian.Uint64(table[16*i+8:])}
		r.feats.Sections[f] = s
		if r.readableFeature(f, s, at+uint64(16*i)) {
			cands = append(cands, span{s, "feature " + f.String() + "'s section"})
			toRead = append(toRead, f)
		}
	}
	clash := r.read.claim(cands)
	for i, f := range toRead {
		s := cands[i].Section
		if c := clash[i]; c.what != "" {
			r.feats.Present = append(r.feats.Present, f)
			r.warn(fmt.Sprintf("feature %v: section %#x+%#x overlaps the %s (%#x+%#x): skipped, read once", f, s.Offset, s.Size, c.what, c.Offset, c.Size))
			continue
		}
		b, err := r.readSection(ra, s)
		if err != nil {
			r.warn(fmt.Sprintf("feature %v at %#x: %v: skipped", f, s.Offset, err))
			continue
		}
		r.applyFeature(f, b, int64(s.Offset))
	}
}

// readableFeature reports whether section s of feature f (table entry at
// entry) is to be read: it lies in the file, f is decoded and s is within
// f's cap. A section not read is noted as present, with a warning for
// one outside the file or past its cap.
func (r *Reader) readableFeature(f Feature, s Section, entry uint64) bool {
	size := uint64(r.hdr.FileSize)
	if s.Offset > size || s.Size > size-s.Offset {
		r.warn(fmt.Sprintf("feature %v: section %#x+%#x (table entry at %#x) lies outside the file: skipped", f, s.Offset, s.Size, entry))
		return false
	}
	if f == FeatTracingData {
		r.feats.TracingData = s.Size
	}
	limit := featureCap(f)
	if limit == 0 {
		r.feats.Present = append(r.feats.Present, f)
		return false
	}
	if s.Size > limit {
		r.feats.Present = append(r.feats.Present, f)
		r.warn(fmt.Sprintf("feature %v: section %#x+%#x (table entry at %#x) is larger than the %d bytes a %v section may have: skipped", f, s.Offset, s.Size, entry, limit, f))
		return false
	}
	return true
}

// applyFeature decodes one feature section found at off.
func (r *Reader) applyFeature(f Feature, b []byte, off int64) {
	if !r.feats.Has(f) {
		r.feats.Present = append(r.feats.Present, f)
	}
	if err := r.feats.decode(f, b); err != nil {
		r.warn(fmt.Sprintf("feature %v at offset %#x: %v: skipped", f, off, err))
	}
}

// featReader reads the encodings of feature sections: u32, u64, and
// strings as a u32 length followed by that many NUL-padded bytes. The
// items that counts make may cost at most mem bytes (items).
type featReader struct {
	b   []byte
	off int
	err error
	mem int
}

// newFeatReader reads section b, whose items may cost twice its size
// and itemSlack.
func newFeatReader(b []byte) *featReader {
	return &featReader{b: b, mem: 2*len(b) + itemSlack}
}

func (d *featReader) fail(what string, n int) {
	if d.err == nil {
		d.err = fmt.Errorf("%s at byte %d: need %d bytes, %d left", what, d.off, n, len(d.b)-d.off)
	}
}

func (d *featReader) u32(what string) uint32 {
	if d.err != nil || len(d.b)-d.off < 4 {
		d.fail(what, 4)
		return 0
	}
	v := binary.LittleEndian.Uint32(d.b[d.off:])
	d.off += 4
	return v
}

func (d *featReader) u64(what string) uint64 {
	if d.err != nil || len(d.b)-d.off < 8 {
		d.fail(what, 8)
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b[d.off:])
	d.off += 8
	return v
}

func (d *featReader) raw(what string, n uint64) []byte {
	if d.err != nil || uint64(len(d.b)-d.off) < n {
		d.fail(what, int(min(n, 1<<30)))
		return nil
	}
	v := d.b[d.off : d.off+int(n)]
	d.off += int(n)
	return v
}

func (d *featReader) str(what string) string {
	if d.off == 0 && len(d.b) == 0 {
		return "" // an empty section: perf 3.x wrote some (armv7 CPUDESC)
	}
	n := d.u32(what + " length")
	return cstring(d.raw(what, uint64(n)))
}

// count reads a u32 count and checks that n items of at least minSize
// bytes fit in the rest, and that n items of itemSize bytes in memory fit
// in what the section may cost (items).
func (d *featReader) count(what string, minSize int, itemSize uintptr) int {
	n := d.u32(what)
	if d.err == nil && uint64(n)*uint64(minSize) > uint64(len(d.b)-d.off) {
		d.err = fmt.Errorf("%s %d at byte %d: %d items of at least %d bytes do not fit in %d", what, n, d.off-4, n, minSize, len(d.b)-d.off)
		return 0
	}
	if !d.items(what, d.off-4, int(n), itemSize) {
		return 0
	}
	return int(n)
}

// items charges n items of size bytes each to what the section may
// cost; past it, it fails naming what (at byte at) and returns false.
func (d *featReader) items(what string, at, n int, size uintptr) bool {
	if d.err != nil {
		return false
	}
	cost := uint64(n) * uint64(size)
	if cost > uint64(d.mem) {
		d.err = fmt.Errorf("%s %d at byte %d: %d items would take %d bytes in memory, more than twice the section's %d bytes and %d", what, n, at, n, cost, len(d.b), itemSlack)
		return false
	}
	d.mem -= int(cost)
	return true
}

func (d *featReader) strs(what string, n int) []string {
	out := make([]string, 0, n)
	for range n {
		s := d.str(what)
		if d.err != nil {
			return out
		}
		out = append(out, s)
	}
	return out
}

func (d *featReader) left() int { return len(d.b) - d.off }

// decode decodes section f into ff.
func (ff *FileFeatures) decode(f Feature, b []byte) error {
	d := newFeatReader(b)
	switch f {
	case FeatBuildID:
		ids, err := decodeBuildIDSection(d)
		ff.BuildIDs = ids
		return err
	case FeatHostname:
		ff.Hostname = d.str("hostname")
	case FeatOSRelease:
		ff.OSRelease = d.str("osrelease")
	case FeatVersion:
		ff.Version = d.str("version")
	case FeatArch:
		ff.Arch = d.str("arch")
	case FeatCPUDesc:
		ff.CPUDesc = d.str("cpudesc")
	case FeatCPUID:
		ff.CPUID = d.str("cpuid")
	case FeatNrCPUs:
		ff.NrCPUsAvail = d.u32("nr_cpus_avail")
		ff.NrCPUsOnline = d.u32("nr_cpus_online")
	case FeatTotalMem:
		ff.TotalMemKB = d.u64("total_mem")
	case FeatCmdline:
		n := d.count("argc", 4, unsafe.Sizeof(""))
		ff.Cmdline = d.strs("argument", n)
	case FeatEventDesc:
		ff.EventDesc = decodeEventDescSection(d)
	case FeatCPUTopology:
		ff.CPUTopology = decodeCPUTopology(d, int(ff.NrCPUsAvail))
	case FeatNUMATopology:
		n := d.count("nr_nodes", 24, unsafe.Sizeof(NUMANode{}))
		ff.NUMATopology = make([]NUMANode, 0, n)
		for range n {
			node := NUMANode{Node: d.u32("node"), MemTotal: d.u64("mem_total"), MemFree: d.u64("mem_free")}
			node.CPUs = d.str("cpus")
			if d.err != nil {
				break
			}
			ff.NUMATopology = append(ff.NUMATopology, node)
		}
	case FeatPMUMappings:
		n := d.count("pmu_num", 8, unsafe.Sizeof(PMUMapping{}))
		ff.PMUMappings = make([]PMUMapping, 0, n)
		for range n {
			m := PMUMapping{Type: d.u32("type")}
			m.Name = d.str("name")
			if d.err != nil {
				break
			}
			ff.PMUMappings = append(ff.PMUMappings, m)
		}
	case FeatGroupDesc:
		n := d.count("nr_groups", 12, unsafe.Sizeof(GroupDesc{}))
		ff.GroupDesc = make([]GroupDesc, 0, n)
		for range n {
			g := GroupDesc{Name: d.str("name")}
			g.Leader, g.NMembers = d.u32("leader_idx"), d.u32("nr_members")
			if d.err != nil {
				break
			}
			ff.GroupDesc = append(ff.GroupDesc, g)
		}
	case FeatSampleTime:
		ff.SampleTimeFirst, ff.SampleTimeLast = d.u64("first_sample_time"), d.u64("last_sample_time")
	case FeatHybridTopology:
		n := d.count("nr_nodes", 8, unsafe.Sizeof(HybridNode{}))
		ff.HybridTopology = make([]HybridNode, 0, n)
		for range n {
			node := HybridNode{PMU: d.str("pmu_name")}
			node.CPUs = d.str("cpus")
			if d.err != nil {
				break
			}
			ff.HybridTopology = append(ff.HybridTopology, node)
		}
	case FeatCompressed:
		c := &CompressionInfo{Version: d.u32("version"), Type: d.u32("type"), Level: d.u32("level"), Ratio: d.u32("ratio"), MmapLen: d.u32("mmap_len")}
		if d.err == nil {
			ff.Compression = c
		}
	case FeatBranchStack:
		ff.BranchStack = true
	case FeatTracingData:
		ff.TracingData = uint64(len(b))
	}
	return d.err
}

// decodeEventDescSection mirrors read_event_desc: u32 nr, u32 attr size,
// then per event the attr, u32 nr_ids, the name and the ids.
func decodeEventDescSection(d *featReader) []EventDesc {
	n := d.count("nr_events", 8, unsafe.Sizeof(EventDesc{}))
	sz := d.u32("attr_size")
	if d.err == nil && (sz < perf.AttrSizeVer0 || sz > maxAttrSize) {
		d.err = fmt.Errorf("attr_size %d at byte 4: want %d to %d", sz, perf.AttrSizeVer0, maxAttrSize)
	}
	out := make([]EventDesc, 0, n)
	for range n {
		raw := d.raw("attr", uint64(sz))
		if d.err != nil {
			break
		}
		a, err := perf.UnmarshalAttr(raw)
		if err != nil {
			d.err = err
			break
		}
		nids := d.u32("nr_ids")
		e := EventDesc{Attr: a, Name: d.str("name")}
		if d.err == nil && uint64(nids)*8 > uint64(d.left()) {
			d.err = fmt.Errorf("nr_ids %d at byte %d: do not fit", nids, d.off)
		}
		if d.err != nil {
			break
		}
		e.IDs = make([]uint64, nids)
		for i := range e.IDs {
			e.IDs[i] = d.u64("id")
		}
		out = append(out, e)
	}
	return out
}

// decodeCPUTopology mirrors process_cpu_topology: core and thread sibling
// lists, then (newer files) per CPU core_id and socket_id, then die
// sibling lists and per CPU die_id. The per-CPU parts need the number of
// CPUs from HEADER_NRCPUS.
func decodeCPUTopology(d *featReader, nrCPUs int) *CPUTopology {
	t := &CPUTopology{}
	t.CoreSiblings = d.strs("core_siblings", d.count("nr_sibling_cores", 4, unsafe.Sizeof("")))
	t.ThreadSiblings = d.strs("thread_siblings", d.count("nr_sibling_threads", 4, unsafe.Sizeof("")))
	if d.err != nil || nrCPUs <= 0 || d.left() < 8*nrCPUs || !d.items("nr_cpus", d.off, nrCPUs, unsafe.Sizeof(CPUTopo{})) {
		return t
	}
	t.CPUs = make([]CPUTopo, nrCPUs)
	for i := range t.CPUs {
		t.CPUs[i] = CPUTopo{Core: int32(d.u32("core_id")), Socket: int32(d.u32("socket_id")), Die: -1}
	}
	if d.left() < 4 {
		return t
	}
	t.DieSiblings = d.strs("die_siblings", d.count("nr_sibling_dies", 4, unsafe.Sizeof("")))
	if d.err != nil || d.left() < 4*nrCPUs {
		return t
	}
	for i := range t.CPUs {
		t.CPUs[i].Die = int32(d.u32("die_id"))
	}
	return t
}

// decodeBuildIDSection reads the build-id table: perf_record_header_build_id
// entries one after the other. Files written before the pid field was added
// are detected as perf does (the kernel's name then reads
// "nel.kallsyms]") and read in the old layout.
func decodeBuildIDSection(d *featReader) ([]BuildID, error) {
	b := d.b
	var out []BuildID
	quirk := false
	for off := 0; off < len(b); {
		if !d.items("build-id entry", off, 1, unsafe.Sizeof(BuildID{})) {
			return out, d.err
		}
		if len(b)-off < 8 {
			return out, fmt.Errorf("build-id entry at byte %d: %d bytes left, want a header", off, len(b)-off)
		}
		size := int(binary.LittleEndian.Uint16(b[off+6:]))
		if size < 8+4+24 || size > len(b)-off {
			return out, fmt.Errorf("build-id entry at byte %d: size %d (%d bytes left)", off, size, len(b)-off)
		}
		e := b[off : off+size]
		var bid BuildID
		if !quirk {
			m, err := perf.DecodeBuildID(e)
			if err != nil {
				return out, fmt.Errorf("build-id entry at byte %d: %w", off, err)
			}
			if off == 0 && len(m.Filename) >= 13 && m.Filename[:13] == "nel.kallsyms]" {
				quirk = true
			} else {
				id, _ := buildid.New(m.BuildID) // at most 20 bytes: DecodeBuildID checks
				bid = BuildID{PID: m.PID, Misc: m.Misc &^ miscBuildIDSize, ID: id, Path: m.Filename}
			}
		}
		if quirk {
			// struct { header; u8 build_id[24]; char filename[]; }: no pid.
			id, _ := buildid.New(e[8:28]) // 20 bytes, padded: the length was not recorded
			bid = BuildID{PID: hostKernelID, Misc: binary.LittleEndian.Uint16(e[4:]), ID: id, Path: cstring(e[32:])}
		}
		out = append(out, bid)
		off += size
	}
	return out, nil
}
