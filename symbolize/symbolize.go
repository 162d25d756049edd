package symbolize

import (
	"strings"

	"github.com/ianlancetaylor/demangle"

	"github.com/hwprof/hwprof/addrspace"
)

// RetAddr is a return address taken from a callchain or an unwound stack,
// in the object's address space. It is looked up at [RetAddr.Lookup],
// inside the call instruction.
type RetAddr addrspace.ObjAddr

// Lookup returns the address to symbolize for the call that returns to r:
// r-1. A zero return address stays zero.
func (r RetAddr) Lookup() addrspace.ObjAddr {
	if r == 0 {
		return 0
	}
	return addrspace.ObjAddr(r - 1)
}

// Name is a function or symbol name in three forms.
type Name struct {
	Raw   string // as in the symbol table or DWARF (mangled)
	Full  string // demangled, with parameters (addr2line -C)
	Short string // demangled, without parameters, for reports
}

// Frame is one source-level frame of an address.
type Frame struct {
	Func   Name
	File   string // empty when unknown
	Line   int    // 0 when unknown
	Column int    // 0 when unknown
	// Discriminator tells apart the blocks of one line (DWARF's line
	// table, or the DW_AT_GNU_discriminator of an inlined call); 0 when
	// none.
	Discriminator int
	Inlined       bool // this frame was inlined into the next (outer) frame
	// StartLine is the line where the frame's function is declared
	// (DWARF DW_AT_decl_line, a Go function's start line from its
	// pclntab); 0 when unknown.
	StartLine int
}

// Symbol is the ELF (or kallsyms, or perf map) symbol containing an address.
type Symbol struct {
	Name  Name
	Start addrspace.ObjAddr
	Size  uint64 // 0 when the symbol has no size
	// Local is, for a symbol local to its object (STB_LOCAL: a C static
	// function), its number among the object's local function symbols of
	// its name in address order, from 1 (BOLT names it "name/N"); 0 for
	// a global or weak symbol.
	Local int
}

// Location is what one address resolves to.
type Location struct {
	Addr   addrspace.ObjAddr // the address looked up
	Symbol *Symbol           // nil when no symbol contains Addr
	// Frames lists the source frames, innermost first. It is empty when
	// nothing is known of Addr; without DWARF it has one frame naming the
	// symbol, with no file and line, and from OpenSymbols one frame naming
	// the symbol with the line table's file and line, if any.
	Frames []Frame
}

// Offset returns Addr minus the symbol's start, and false without a symbol.
func (l Location) Offset() (uint64, bool) {
	if l.Symbol == nil {
		return 0, false
	}
	return uint64(l.Addr - l.Symbol.Start), true
}

// Resolver is what an [Object], a [Kallsyms] and a [PerfMap] have in common.
type Resolver interface {
	// Symbolize resolves each address; the result is parallel to addrs.
	Symbolize(addrs []addrspace.ObjAddr) []Location
}

// names interns Names so each distinct raw name is demangled once.
type names map[string]Name

func (n names) get(raw string) Name {
	if v, ok := n[raw]; ok {
		return v
	}
	v := NewName(raw)
	n[raw] = v
	return v
}

// NewName demangles raw (C++ Itanium ABI and Rust legacy or v0 mangling)
// into a Name; other names are kept as they are in all three forms. A
// suffix after '@' (a PLT entry's "@plt", a symbol version's
// "@@GLIBCXX_3.4") is kept after the demangled name, as perf shows
// them: "std::future_category@plt".
func NewName(raw string) Name {
	nm := Name{Raw: raw, Full: raw, Short: raw}
	if !mangled(raw) {
		return nm
	}
	base, suffix := raw, ""
	if i := strings.IndexByte(raw, '@'); i > 0 {
		base, suffix = raw[:i], raw[i:]
	}
	full, err := demangle.ToString(base)
	if err != nil {
		return nm
	}
	nm.Full = full + suffix
	if short, err := demangle.ToString(base, demangle.NoParams, demangle.NoEnclosingParams); err == nil {
		nm.Short = stripRustHash(short) + suffix
	} else {
		nm.Short = nm.Full
	}
	return nm
}

func mangled(s string) bool {
	return strings.HasPrefix(s, "_Z") || strings.HasPrefix(s, "_R") || strings.HasPrefix(s, "__Z")
}

// stripRustHash removes the "::h0123456789abcdef" suffix of Rust legacy
// symbols from a short name.
func stripRustHash(s string) string {
	i := strings.LastIndex(s, "::h")
	if i < 0 || len(s)-i != 3+16 {
		return s
	}
	for _, c := range s[i+3:] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return s
		}
	}
	return s[:i]
}

// Result is what symbolizing one object's addresses gives: the locations,
// parallel to the addresses asked for, or why the object could not be read.
type Result struct {
	Locations []Location
	Err       error
}
