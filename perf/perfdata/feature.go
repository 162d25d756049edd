package perfdata

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/hwprof/hwprof/buildid"
	"github.com/hwprof/hwprof/perf"
)

// Feature is a bit of perf_file_header.adds_features: one optional section
// after the data. Mirrors enum HEADER_* in tools/perf/util/header.h (Linux
// 6.1); the numbers are file format and never change.
type Feature int

const (
	FeatReserved       Feature = 0  // HEADER_RESERVED
	FeatTracingData    Feature = 1  // HEADER_TRACING_DATA
	FeatBuildID        Feature = 2  // HEADER_BUILD_ID
	FeatHostname       Feature = 3  // HEADER_HOSTNAME
	FeatOSRelease      Feature = 4  // HEADER_OSRELEASE
	FeatVersion        Feature = 5  // HEADER_VERSION
	FeatArch           Feature = 6  // HEADER_ARCH
	FeatNrCPUs         Feature = 7  // HEADER_NRCPUS
	FeatCPUDesc        Feature = 8  // HEADER_CPUDESC
	FeatCPUID          Feature = 9  // HEADER_CPUID
	FeatTotalMem       Feature = 10 // HEADER_TOTAL_MEM
	FeatCmdline        Feature = 11 // HEADER_CMDLINE
	FeatEventDesc      Feature = 12 // HEADER_EVENT_DESC
	FeatCPUTopology    Feature = 13 // HEADER_CPU_TOPOLOGY
	FeatNUMATopology   Feature = 14 // HEADER_NUMA_TOPOLOGY
	FeatBranchStack    Feature = 15 // HEADER_BRANCH_STACK
	FeatPMUMappings    Feature = 16 // HEADER_PMU_MAPPINGS
	FeatGroupDesc      Feature = 17 // HEADER_GROUP_DESC
	FeatAuxtrace       Feature = 18 // HEADER_AUXTRACE
	FeatStat           Feature = 19 // HEADER_STAT
	FeatCache          Feature = 20 // HEADER_CACHE
	FeatSampleTime     Feature = 21 // HEADER_SAMPLE_TIME
	FeatMemTopology    Feature = 22 // HEADER_MEM_TOPOLOGY
	FeatClockID        Feature = 23 // HEADER_CLOCKID
	FeatDirFormat      Feature = 24 // HEADER_DIR_FORMAT
	FeatBPFProgInfo    Feature = 25 // HEADER_BPF_PROG_INFO
	FeatBPFBTF         Feature = 26 // HEADER_BPF_BTF
	FeatCompressed     Feature = 27 // HEADER_COMPRESSED
	FeatCPUPMUCaps     Feature = 28 // HEADER_CPU_PMU_CAPS
	FeatClockData      Feature = 29 // HEADER_CLOCK_DATA
	FeatHybridTopology Feature = 30 // HEADER_HYBRID_TOPOLOGY
	FeatPMUCaps        Feature = 31 // HEADER_PMU_CAPS

	// FeatBits is the size of the adds_features bitmap (HEADER_FEAT_BITS).
	FeatBits = 256
)

var featureNames = [...]string{
	"RESERVED", "TRACING_DATA", "BUILD_ID", "HOSTNAME", "OSRELEASE", "VERSION",
	"ARCH", "NRCPUS", "CPUDESC", "CPUID", "TOTAL_MEM", "CMDLINE", "EVENT_DESC",
	"CPU_TOPOLOGY", "NUMA_TOPOLOGY", "BRANCH_STACK", "PMU_MAPPINGS",
	"GROUP_DESC", "AUXTRACE", "STAT", "CACHE", "SAMPLE_TIME", "MEM_TOPOLOGY",
	"CLOCKID", "DIR_FORMAT", "BPF_PROG_INFO", "BPF_BTF", "COMPRESSED",
	"CPU_PMU_CAPS", "CLOCK_DATA", "HYBRID_TOPOLOGY", "PMU_CAPS",
}

// String returns perf's name of the feature ("BUILD_ID"), as
// `perf report --header-only` lists missing features.
func (f Feature) String() string {
	if f >= 0 && int(f) < len(featureNames) {
		return featureNames[f]
	}
	return "FEATURE(" + strconv.Itoa(int(f)) + ")"
}

// Features are the facts written into the feature sections at Close. Empty
// strings, zero numbers and nil slices leave their section out, except
// BUILD_ID, which is always written (perf writes it even when empty). The
// EVENT_DESC section is derived from the attrs given to Create, and
// BRANCH_STACK (an empty marker section) is set when any attr samples
// PERF_SAMPLE_BRANCH_STACK, as perf record does.
type Features struct {
	Hostname  string // HEADER_HOSTNAME: uname nodename
	OSRelease string // HEADER_OSRELEASE: uname release
	Version   string // HEADER_VERSION: the recorder's version ("perf version" in perf's header print)
	Arch      string // HEADER_ARCH: uname machine, "x86_64"
	CPUDesc   string // HEADER_CPUDESC: /proc/cpuinfo "model name", spaces squashed
	CPUID     string // HEADER_CPUID: on x86 "GenuineIntel,6,85,7" (vendor,family,model,stepping)

	// HEADER_NRCPUS. Written when either is non-zero. NrCPUsAvail is
	// perf's nr_cpus_avail: the highest present CPU number plus one.
	NrCPUsOnline, NrCPUsAvail uint32

	TotalMemKB uint64   // HEADER_TOTAL_MEM: /proc/meminfo MemTotal, kB
	Cmdline    []string // HEADER_CMDLINE: argv, the first element the recorder's path

	// HEADER_SAMPLE_TIME: perf_clock times of the first and last sample.
	// When both are zero the writer uses the times it saw in the SAMPLE
	// records it wrote, if their layout let it find them.
	SampleTimeFirst, SampleTimeLast uint64

	BuildIDs []BuildID // HEADER_BUILD_ID
}

// BuildID is one entry of the HEADER_BUILD_ID table: a build-id and the
// path of the object it belongs to. Mirrors struct
// perf_record_header_build_id in tools/lib/perf/include/perf/event.h.
type BuildID struct {
	// PID is the machine: -1 (HOST_KERNEL_ID) for every object of the host,
	// kernel or user, as perf record writes; 0 is the default guest.
	PID int32
	// Misc is the cpumode: perf.MiscKernel for the kernel and modules,
	// perf.MiscUser for user objects. The writer adds
	// PERF_RECORD_MISC_BUILD_ID_SIZE itself.
	Misc uint16
	ID   buildid.ID // perf pads it to 24 bytes in the file
	Path string     // "[kernel.kallsyms]", "[vdso]" or the object's path
}

// nameAlign is NAME_ALIGN in tools/perf/util/header.h: strings in feature
// sections and build-id filenames are NUL-padded to a multiple of it.
const nameAlign = 64

// Build-id record constants from tools/lib/perf/include/perf/event.h.
const (
	buildIDSize     = 20      // BUILD_ID_SIZE
	buildIDField    = 24      // PERF_ALIGN(BUILD_ID_SIZE, sizeof(u64))
	miscBuildIDSize = 1 << 15 // PERF_RECORD_MISC_BUILD_ID_SIZE
	hostKernelID    = -1      // HOST_KERNEL_ID in tools/perf/util/machine.h
)

// errFeature wraps problems in the facts given to Close.
var errFeature = errors.New("invalid feature")

// featBuf appends feature payloads in perf's encodings, little-endian.
type featBuf struct{ b []byte }

func (f *featBuf) u16(v uint16) { f.b = binary.LittleEndian.AppendUint16(f.b, v) }
func (f *featBuf) u32(v uint32) { f.b = binary.LittleEndian.AppendUint32(f.b, v) }
func (f *featBuf) u64(v uint64) { f.b = binary.LittleEndian.AppendUint64(f.b, v) }

// str writes a string as do_write_string does: u32 length of the padded
// buffer (including the NUL), then the bytes, NUL-padded to nameAlign.
// A NUL inside s ends the string, as it would for perf's C readers.
func (f *featBuf) str(s string) {
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	n := alignUp(len(s)+1, nameAlign)
	f.u32(uint32(n))
	f.padded(s, n)
}

// padded writes s followed by NULs up to n bytes (n > len(s)).
func (f *featBuf) padded(s string, n int) {
	f.b = append(f.b, s...)
	for range n - len(s) {
		f.b = append(f.b, 0)
	}
}

func alignUp(n, a int) int { return (n + a - 1) / a * a }

// featSection is one feature to write: its bit and its payload.
type featSection struct {
	feat Feature
	data []byte
}

// eventDesc is what HEADER_EVENT_DESC needs from one attr.
type eventDesc struct {
	attr []byte // the attr as written in the attrs section
	ids  []uint64
	name string
}

// encodeFeatures returns the feature sections in bit order, as they are
// laid out after the data.
func encodeFeatures(f *Features, events []eventDesc, branchStack bool) ([]featSection, error) {
	var out []featSection
	add := func(feat Feature, enc func(*featBuf)) {
		var b featBuf
		enc(&b)
		out = append(out, featSection{feat, b.b})
	}
	addStr := func(feat Feature, s string) {
		if s != "" {
			add(feat, func(b *featBuf) { b.str(s) })
		}
	}
	bids, err := encodeBuildIDs(f.BuildIDs)
	if err != nil {
		return nil, err
	}
	out = append(out, featSection{FeatBuildID, bids})
	addStr(FeatHostname, f.Hostname)
	addStr(FeatOSRelease, f.OSRelease)
	addStr(FeatVersion, f.Version)
	addStr(FeatArch, f.Arch)
	if f.NrCPUsOnline != 0 || f.NrCPUsAvail != 0 {
		// process_nrcpus reads nr_cpus_avail first, then nr_cpus_online.
		add(FeatNrCPUs, func(b *featBuf) { b.u32(f.NrCPUsAvail); b.u32(f.NrCPUsOnline) })
	}
	addStr(FeatCPUDesc, f.CPUDesc)
	addStr(FeatCPUID, f.CPUID)
	if f.TotalMemKB != 0 {
		add(FeatTotalMem, func(b *featBuf) { b.u64(f.TotalMemKB) })
	}
	if len(f.Cmdline) > 0 {
		add(FeatCmdline, func(b *featBuf) { encodeCmdline(b, f.Cmdline) })
	}
	add(FeatEventDesc, func(b *featBuf) { encodeEventDesc(b, events) })
	if branchStack {
		out = append(out, featSection{FeatBranchStack, nil}) // write_branch_stack writes nothing
	}
	if f.SampleTimeFirst != 0 || f.SampleTimeLast != 0 {
		add(FeatSampleTime, func(b *featBuf) { b.u64(f.SampleTimeFirst); b.u64(f.SampleTimeLast) })
	}
	return out, nil
}

// encodeCmdline mirrors write_cmdline: u32 argc, then each argument as a
// string.
func encodeCmdline(b *featBuf, argv []string) {
	b.u32(uint32(len(argv)))
	for _, a := range argv {
		b.str(a)
	}
}

// encodeEventDesc mirrors write_event_desc: u32 number of events, u32 attr
// size, then per event the attr, u32 number of ids, the name as a string,
// and the ids.
func encodeEventDesc(b *featBuf, events []eventDesc) {
	b.u32(uint32(len(events)))
	sz := 0
	if len(events) > 0 {
		sz = len(events[0].attr)
	}
	b.u32(uint32(sz))
	for _, e := range events {
		b.b = append(b.b, e.attr...)
		b.u32(uint32(len(e.ids)))
		b.str(e.name)
		for _, id := range e.ids {
			b.u64(id)
		}
	}
}

// encodeBuildIDs mirrors write_buildid in tools/perf/util/build-id.c: per
// object a perf_record_header_build_id with header.type 0, misc = cpumode |
// PERF_RECORD_MISC_BUILD_ID_SIZE, the build-id in a 24-byte field whose
// byte 20 holds its length, and the path NUL-padded to a multiple of 64.
func encodeBuildIDs(ids []BuildID) ([]byte, error) {
	var b featBuf
	for i, id := range ids {
		if id.ID.Len() == 0 {
			return nil, fmt.Errorf("build-id %d (%s): %d bytes, want 1..%d: %w", i, id.Path, id.ID.Len(), buildIDSize, errFeature)
		}
		if id.Path == "" || strings.IndexByte(id.Path, 0) >= 0 {
			return nil, fmt.Errorf("build-id %d: path %q: %w", i, id.Path, errFeature)
		}
		nameLen := alignUp(len(id.Path)+1, nameAlign)
		size := 8 + 4 + buildIDField + nameLen
		if size > 0xffff {
			return nil, fmt.Errorf("build-id %d: path of %d bytes is too long: %w", i, len(id.Path), errFeature)
		}
		b.u32(0) // header.type: perf leaves it zero in the feature section
		b.u16(id.Misc&perf.MiscCPUModeMask | miscBuildIDSize)
		b.u16(uint16(size))
		b.u32(uint32(id.PID))
		var field [buildIDField]byte
		copy(field[:], id.ID.Bytes())
		field[buildIDSize] = byte(id.ID.Len())
		b.b = append(b.b, field[:]...)
		b.padded(id.Path, nameLen)
	}
	return b.b, nil
}
