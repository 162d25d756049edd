package perf

import (
	"encoding/binary"
	"math"
)

// Decode decodes any record (header included) into its typed struct:
// *Sample for PERF_RECORD_SAMPLE (allocated; use DecodeSample on hot
// paths), *Mmap2, *Comm, ... for the other kernel records, with the
// sample_id trailer of the record's event in their Trailer field, and
// *HeaderAttr, *FinishedRound, ... for perf's own records, which need no
// format (f may be nil for them). A type this package does not know
// decodes to *Unknown. Strings are copied; byte slices alias rec.
func (f *SampleFormat) Decode(rec []byte) (Record, error) {
	h, err := ParseHeader(rec)
	if err != nil {
		return nil, err
	}
	if int(h.Size) != len(rec) || h.Size < RecordHeaderSize {
		return nil, &DecodeError{Type: h.Type, Field: "header size", Offset: 6,
			Detail: "size field " + uitoa(uint64(h.Size)) + " but record of " + uitoa(uint64(len(rec))) + " bytes"}
	}
	if h.Type >= RecordHeaderAttr {
		return decodeUser(h, rec)
	}
	if h.Type == RecordSample {
		if f == nil {
			return nil, &DecodeError{Type: h.Type, Field: "sample", Detail: "no events (attrs) known"}
		}
		s := new(Sample)
		if err := f.DecodeSample(rec, s); err != nil {
			return nil, err
		}
		return s, nil
	}
	if h.Type > RecordAuxOutputHWID {
		return &Unknown{RecordHeader: h, Data: rec[RecordHeaderSize:]}, nil
	}
	var ev *formatEvent
	if f != nil && len(f.events) > 0 {
		if _, ev, err = f.layoutOf(rec); err != nil {
			return nil, err
		}
	}
	var t Trailer
	body, err := decodeTrailer(rec, ev, &t)
	if err != nil {
		return nil, err
	}
	return decodeKernel(h, body, ev, t)
}

func uitoa(v uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			return string(b[i:])
		}
	}
}

// decodeKernel decodes the body (trailer removed) of a kernel record
// other than SAMPLE, following the structs of <linux/perf_event.h>.
func decodeKernel(h RecordHeader, body []byte, ev *formatEvent, t Trailer) (Record, error) {
	c := cursor{b: body, off: RecordHeaderSize, typ: h.Type}
	var r Record
	switch h.Type {
	case RecordMmap:
		m := &Mmap{RecordHeader: h, Trailer: t}
		m.PID, m.TID = c.u32("pid"), c.u32("tid")
		m.Addr, m.Len, m.PgOff = c.u64("addr"), c.u64("len"), c.u64("pgoff")
		m.Filename = c.str("filename", -1)
		r = m
	case RecordMmap2:
		m := &Mmap2{RecordHeader: h, Trailer: t}
		m.PID, m.TID = c.u32("pid"), c.u32("tid")
		m.Addr, m.Len, m.PgOff = c.u64("addr"), c.u64("len"), c.u64("pgoff")
		if m.HasBuildID() {
			n := c.u8("build_id_size")
			c.u8("reserved")
			c.u16("reserved")
			id := c.bytes("build_id", 20)
			if n > 20 {
				c.off -= 24
				c.bad("build_id_size", "%d bytes, at most 20", n)
			} else if id != nil {
				m.BuildID = id[:n:n]
			}
		} else {
			m.Maj, m.Min = c.u32("maj"), c.u32("min")
			m.Ino, m.InoGeneration = c.u64("ino"), c.u64("ino_generation")
		}
		m.Prot, m.Flags = c.u32("prot"), c.u32("flags")
		m.Filename = c.str("filename", -1)
		r = m
	case RecordComm:
		m := &Comm{RecordHeader: h, Trailer: t}
		m.PID, m.TID = c.u32("pid"), c.u32("tid")
		m.Comm = c.str("comm", -1)
		r = m
	case RecordFork, RecordExit:
		m := &Fork{RecordHeader: h, Trailer: t}
		m.PID, m.PPID = c.u32("pid"), c.u32("ppid")
		m.TID, m.PTID = c.u32("tid"), c.u32("ptid")
		m.Time = c.u64("time")
		r = m
	case RecordLost:
		m := &Lost{RecordHeader: h, Trailer: t}
		m.ID, m.Lost = c.u64("id"), c.u64("lost")
		r = m
	case RecordLostSamples:
		r = &LostSamples{RecordHeader: h, Lost: c.u64("lost"), Trailer: t}
	case RecordThrottle, RecordUnthrottle:
		m := &Throttle{RecordHeader: h, Trailer: t}
		m.Time, m.ID, m.StreamID = c.u64("time"), c.u64("id"), c.u64("stream_id")
		r = m
	case RecordRead:
		m := &Read{RecordHeader: h, Trailer: t}
		m.PID, m.TID = c.u32("pid"), c.u32("tid")
		var rf ReadFormat
		if ev != nil {
			rf = ev.attr.ReadFormat
		}
		decodeReadFormat(&c, rf, &m.Values)
		r = m
	case RecordSwitch:
		r = &Switch{RecordHeader: h, Trailer: t}
	case RecordSwitchCPUWide:
		m := &SwitchCPUWide{RecordHeader: h, Trailer: t}
		m.NextPrevPID, m.NextPrevTID = c.u32("next_prev_pid"), c.u32("next_prev_tid")
		r = m
	case RecordNamespaces:
		m := &Namespaces{RecordHeader: h, Trailer: t}
		m.PID, m.TID = c.u32("pid"), c.u32("tid")
		n := c.count("nr_namespaces", 16)
		m.Links = make([]NamespaceLink, n)
		for i := range m.Links {
			m.Links[i] = NamespaceLink{Dev: c.u64("dev"), Ino: c.u64("ino")}
		}
		r = m
	case RecordKsymbol:
		m := &Ksymbol{RecordHeader: h, Trailer: t}
		m.Addr, m.Len = c.u64("addr"), c.u32("len")
		m.KsymType, m.Flags = c.u16("ksym_type"), c.u16("flags")
		m.Name = c.str("name", -1)
		r = m
	case RecordBPFEvent:
		m := &BPFEvent{RecordHeader: h, Trailer: t}
		m.EventType, m.Flags, m.ID = c.u16("type"), c.u16("flags"), c.u32("id")
		copy(m.Tag[:], c.bytes("tag", 8))
		r = m
	case RecordCgroup:
		m := &Cgroup{RecordHeader: h, ID: c.u64("id"), Trailer: t}
		m.Path = c.str("path", -1)
		r = m
	case RecordTextPoke:
		m := &TextPoke{RecordHeader: h, Trailer: t}
		m.Addr = c.u64("addr")
		o, n := c.u16("old_len"), c.u16("new_len")
		m.Old = c.bytes("old bytes", uint64(o))
		m.New = c.bytes("new bytes", uint64(n))
		r = m
	case RecordAux:
		m := &Aux{RecordHeader: h, Trailer: t}
		m.AuxOffset, m.AuxSize, m.Flags = c.u64("aux_offset"), c.u64("aux_size"), c.u64("flags")
		r = m
	case RecordItraceStart:
		m := &ItraceStart{RecordHeader: h, Trailer: t}
		m.PID, m.TID = c.u32("pid"), c.u32("tid")
		r = m
	case RecordAuxOutputHWID:
		r = &AuxOutputHWID{RecordHeader: h, HWID: c.u64("hw_id"), Trailer: t}
	default:
		return &Unknown{RecordHeader: h, Data: body[RecordHeaderSize:]}, nil
	}
	if c.err != nil {
		return nil, c.err
	}
	return r, nil
}

// decodeUser decodes perf's own records (types 64 and up).
func decodeUser(h RecordHeader, rec []byte) (Record, error) {
	c := cursor{b: rec, off: RecordHeaderSize, typ: h.Type}
	var r Record
	switch h.Type {
	case RecordHeaderAttr:
		m := &HeaderAttr{RecordHeader: h}
		attrBytes := c.left()
		if c.left() >= 8 {
			if sz := int(binary.LittleEndian.Uint32(rec[c.off+4:])); sz != 0 {
				attrBytes = sz
			} else {
				attrBytes = AttrSizeVer0
			}
		}
		if attrBytes < AttrSizeVer0 || attrBytes > c.left() {
			c.bad("attr size", "%d bytes, want %d to %d", attrBytes, AttrSizeVer0, c.left())
			break
		}
		m.Attr, _ = UnmarshalAttr(c.bytes("attr", uint64(attrBytes)))
		m.IDs = make([]uint64, c.left()/8)
		for i := range m.IDs {
			m.IDs[i] = c.u64("id")
		}
		r = m
	case RecordHeaderEventType:
		m := &HeaderEventType{RecordHeader: h, EventID: c.u64("event_id")}
		m.Name = c.str("name", min(64, c.left()))
		r = m
	case RecordHeaderTracing:
		r = &HeaderTracingData{RecordHeader: h, Size: c.u32("size")}
	case RecordHeaderBuildID:
		m, err := DecodeBuildID(rec)
		if err != nil {
			return nil, err
		}
		r = m
	case RecordFinishedRound:
		r = &FinishedRound{h}
	case RecordFinishedInit:
		r = &FinishedInit{h}
	case RecordIDIndex:
		m := &IDIndex{RecordHeader: h}
		n := c.count("nr", 32)
		m.Entries = make([]IDIndexEntry, n)
		for i := range m.Entries {
			m.Entries[i] = IDIndexEntry{ID: c.u64("id"), Idx: c.u64("idx"), CPU: c.u64("cpu"), TID: c.u64("tid")}
		}
		r = m
	case RecordAuxtraceInfo:
		m := &AuxtraceInfo{RecordHeader: h, AuxType: c.u32("type")}
		c.u32("reserved")
		m.Priv = make([]uint64, c.left()/8)
		for i := range m.Priv {
			m.Priv[i] = c.u64("priv")
		}
		r = m
	case RecordAuxtrace:
		m := &Auxtrace{RecordHeader: h}
		m.Size, m.Offset, m.Reference = c.u64("size"), c.u64("offset"), c.u64("reference")
		m.Idx, m.TID, m.CPU = c.u32("idx"), c.u32("tid"), c.u32("cpu")
		r = m
	case RecordAuxtraceError:
		m := &AuxtraceError{RecordHeader: h}
		m.ErrType, m.Code, m.CPU = c.u32("type"), c.u32("code"), c.u32("cpu")
		m.PID, m.TID, m.Fmt = c.u32("pid"), c.u32("tid"), c.u32("fmt")
		m.IP = c.u64("ip")
		if m.Fmt >= 2 {
			m.Time = c.u64("time")
		}
		m.Msg = c.str("msg", min(64, c.left()))
		r = m
	case RecordThreadMap:
		m := &ThreadMap{RecordHeader: h}
		n := c.count("nr", 24)
		m.Entries = make([]ThreadMapEntry, n)
		for i := range m.Entries {
			m.Entries[i] = ThreadMapEntry{PID: c.u64("pid"), Comm: c.str("comm", 16)}
		}
		r = m
	case RecordCPUMap:
		m := &CPUMap{RecordHeader: h}
		m.CPUs, m.Any = decodeCPUMapData(&c)
		r = m
	case RecordStatConfig:
		m := &StatConfig{RecordHeader: h}
		n := c.count("nr", 16)
		m.Entries = make([]StatConfigEntry, n)
		for i := range m.Entries {
			m.Entries[i] = StatConfigEntry{Tag: c.u64("tag"), Val: c.u64("val")}
		}
		r = m
	case RecordStat:
		m := &Stat{RecordHeader: h, ID: c.u64("id")}
		m.CPU, m.Thread = c.u32("cpu"), c.u32("thread")
		m.Val, m.Ena, m.Run = c.u64("val"), c.u64("ena"), c.u64("run")
		r = m
	case RecordStatRound:
		r = &StatRound{RecordHeader: h, RoundType: c.u64("type"), Time: c.u64("time")}
	case RecordEventUpdate:
		m := &EventUpdate{RecordHeader: h, UpdateType: c.u64("type"), ID: c.u64("id")}
		switch m.UpdateType {
		case EventUpdateUnit:
			m.Unit = c.str("unit", -1)
		case EventUpdateScale:
			m.Scale = math.Float64frombits(c.u64("scale"))
		case EventUpdateName:
			m.Name = c.str("name", -1)
		case EventUpdateCPUs:
			m.CPUs, _ = decodeCPUMapData(&c)
		}
		r = m
	case RecordTimeConv:
		m := &TimeConv{RecordHeader: h}
		m.TimeShift, m.TimeMult, m.TimeZero = c.u64("time_shift"), c.u64("time_mult"), c.u64("time_zero")
		if c.left() >= 24 {
			m.Full = true
			m.TimeCycles, m.TimeMask = c.u64("time_cycles"), c.u64("time_mask")
			m.CapUserTimeZero = c.u8("cap_user_time_zero") != 0
			m.CapUserTimeShort = c.u8("cap_user_time_short") != 0
		}
		r = m
	case RecordHeaderFeature:
		m := &HeaderFeature{RecordHeader: h, FeatID: c.u64("feat_id")}
		m.Data = c.bytes("data", uint64(c.left()))
		r = m
	case RecordCompressed:
		r = &Compressed{RecordHeader: h, Data: rec[RecordHeaderSize:]}
	case RecordCompressed2:
		n := c.u64("data_size")
		r = &Compressed{RecordHeader: h, Data: c.bytes("data", n)}
	default:
		return &Unknown{RecordHeader: h, Data: rec[RecordHeaderSize:]}, nil
	}
	if c.err != nil {
		return nil, c.err
	}
	return r, nil
}

// DecodeBuildID decodes a struct perf_record_header_build_id: a
// PERF_RECORD_HEADER_BUILD_ID record or an entry of the build-id feature
// section (whose header type is 0). The build-id is 20 bytes unless misc
// has MiscBuildIDSize, then byte 20 of the field gives its length.
func DecodeBuildID(rec []byte) (*HeaderBuildID, error) {
	h, err := ParseHeader(rec)
	if err != nil {
		return nil, err
	}
	if int(h.Size) > len(rec) || h.Size < RecordHeaderSize {
		return nil, &DecodeError{Type: h.Type, Field: "header size", Offset: 6,
			Detail: "size field " + uitoa(uint64(h.Size)) + " but " + uitoa(uint64(len(rec))) + " bytes"}
	}
	c := cursor{b: rec[:h.Size], off: RecordHeaderSize, typ: RecordHeaderBuildID}
	m := &HeaderBuildID{RecordHeader: h, PID: int32(c.u32("pid"))}
	id := c.bytes("build_id", 24)
	m.Filename = c.str("filename", -1)
	if c.err != nil {
		return nil, c.err
	}
	n := 20
	if h.Misc&MiscBuildIDSize != 0 {
		n = min(int(id[20]), 20)
	}
	m.BuildID = id[:n:n]
	return m, nil
}

// decodeCPUMapData mirrors struct perf_record_cpu_map_data: u16 type, then
// a list of u16 CPUs, a mask (u16 nr, u16 long_size, nr masks of
// long_size bytes, 8-byte masks after 4 bytes of padding), or a range (u8 any_cpu, pad,
// u16 start, u16 end).
func decodeCPUMapData(c *cursor) ([]uint32, bool) {
	typ := c.u16("cpu map type")
	var cpus []uint32
	switch typ {
	case 0: // PERF_CPU_MAP__CPUS
		n := int(c.u16("nr"))
		if n > c.left()/2 {
			c.bad("nr", "%d CPUs do not fit in %d bytes", n, c.left())
			return nil, false
		}
		for range n {
			cpus = append(cpus, uint32(c.u16("cpu")))
		}
	case 1: // PERF_CPU_MAP__MASK
		n := int(c.u16("nr"))
		ls := int(c.u16("long_size"))
		if ls == 8 {
			c.u32("pad") // the legacy padding of perf_record_mask_cpu_map64
		} else if ls != 4 {
			c.bad("long_size", "%d, want 4 or 8", ls)
			return nil, false
		}
		if n > c.left()/ls {
			c.bad("nr", "%d masks of %d bytes do not fit in %d bytes", n, ls, c.left())
			return nil, false
		}
		for i := range n {
			var m uint64
			if ls == 4 {
				m = uint64(c.u32("mask"))
			} else {
				m = c.u64("mask")
			}
			for b := range 8 * ls {
				if m&(1<<b) != 0 {
					cpus = append(cpus, uint32(i*8*ls+b))
				}
			}
		}
	case 2: // PERF_CPU_MAP__RANGE_CPUS
		anyCPU := c.u8("any_cpu") != 0
		c.u8("pad")
		lo, hi := c.u16("start_cpu"), c.u16("end_cpu")
		for cpu := uint32(lo); cpu <= uint32(hi); cpu++ {
			cpus = append(cpus, cpu)
		}
		return cpus, anyCPU
	default:
		c.bad("cpu map type", "unknown type %d", typ)
	}
	return cpus, false
}
