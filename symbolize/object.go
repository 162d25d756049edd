package symbolize

import (
	"debug/elf"
	"debug/gosym"
	"fmt"
	"os"

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/buildid"
)

// ObjectKey names an object as a recording does: its path and, when known,
// its GNU build-id (the zero ID when not; an all-zero id is none).
type ObjectKey struct {
	Path    string
	BuildID buildid.ID
}

// Object is one ELF file with its tables, built once when it is opened.
// It is safe for concurrent use.
type Object struct {
	key       ObjectKey
	path      string // file read for symbols
	debugPath string // separate debug file, "" if none
	buildID   buildid.ID
	dwarfErr  error

	syms  symTable
	dwarf *dwarfIndex  // nil without DWARF
	lines *dwarfIndex  // OpenSymbols: the line tables alone, nil without
	gosym *gosym.Table // nil unless a Go binary
	goinl *goInlines   // its inline tree, nil if unreadable
}

// Open opens the object named by key (see [Options] for where it is looked
// for), finds its debug information and builds its tables. It fails with a
// *[BuildIDMismatchError] when the file has another build-id than
// key.BuildID and no file with that build-id is found.
func Open(key ObjectKey, opts Options) (*Object, error) {
	return openFound(key, opts, true)
}

// OpenSymbols is Open without DWARF's function and inline tables: the
// object's symbols (and a Go binary's pclntab), so every Location has its
// Symbol and a single frame. That frame has the file and line of its
// address when the object's own file holds DWARF (a program built with
// -g; a Go binary's come from its pclntab): its line tables are read, not
// its DIEs, and not a separate debug file's (a libc debug package), which
// only Open reads. It is much faster for objects with large debug
// information, for callers that need function names and source lines.
func OpenSymbols(key ObjectKey, opts Options) (*Object, error) {
	return openFound(key, opts, false)
}

// openFound finds the object's file and opens it.
func openFound(key ObjectKey, opts Options, withDWARF bool) (*Object, error) {
	fd, err := opts.findBinary(key)
	if err != nil {
		return nil, err
	}
	defer fd.f.Close()
	return guarded(fd.f.Name(), func() (*Object, error) { return open(key, opts, fd, withDWARF) })
}

// guarded runs open, turning a panic into an error of the file at path:
// debug/elf, debug/dwarf and debug/gosym are not proven against every
// malformed file.
func guarded(path string, open func() (*Object, error)) (o *Object, err error) {
	defer func() {
		if r := recover(); r != nil {
			o, err = nil, fmt.Errorf("open object: %s: malformed file: %v", path, r)
		}
	}()
	return open()
}

func open(key ObjectKey, opts Options, fd *found, withDWARF bool) (*Object, error) {
	f, err := elf.NewFile(fd.f)
	if err != nil {
		return nil, fmt.Errorf("open object: %s: %w", fd.f.Name(), err)
	}
	o := &Object{key: key, path: fd.f.Name(), buildID: fd.id}
	var df *elf.File
	if !hasDWARF(f) {
		if dfile := opts.findDebug(fd, key.Path, f); dfile != nil {
			defer dfile.Close()
			if df, err = elf.NewFile(dfile); err == nil {
				o.debugPath = dfile.Name()
			} else {
				df = nil
			}
		}
	}
	o.build(f, df, withDWARF)
	return o, nil
}

// build builds the tables of f, with df its separate debug file (nil if
// none): symbols from both, DWARF from df if given, else from f, and a Go
// binary's pclntab when there is no DWARF.
func (o *Object) build(f, df *elf.File, withDWARF bool) {
	dw := f
	if df != nil {
		dw = df
	}
	o.syms.load(f, df)
	o.syms.addPLT(f)
	o.syms.addPLTGOT(f)
	o.syms.finish(sectionEnds(f))
	if withDWARF && hasDWARF(dw) {
		d, err := dw.DWARF()
		if err == nil {
			o.dwarf, err = buildDWARF(d, lineSection(dw), dw.ByteOrder, true)
		}
		if err == nil {
			o.dwarf.useSymbolNames(&o.syms)
		}
		o.dwarfErr = err
	}
	o.syms.aliasAt = nil
	// A Go binary's pclntab also names what its symbols and DWARF leave
	// out (the padding after an assembly function, where a return
	// address can point), so that both modes name such addresses alike.
	if o.dwarf == nil || withDWARF {
		if t, inl, err := goTable(f); err == nil {
			o.gosym, o.goinl = t, inl
		}
	}
	if !withDWARF && o.gosym == nil && df == nil && hasDWARF(f) {
		d, err := f.DWARF()
		if err == nil {
			o.lines, err = buildDWARF(d, lineSection(f), f.ByteOrder, false)
		}
		o.dwarfErr = err
	}
}

func hasDWARF(f *elf.File) bool {
	for _, n := range []string{".debug_info", ".zdebug_info"} {
		if s := f.Section(n); s != nil && s.Type != elf.SHT_NOBITS && s.Size > 0 {
			return true
		}
	}
	return false
}

func sectionEnds(f *elf.File) func(elf.SectionIndex) uint64 {
	ends := make([]uint64, len(f.Sections))
	for i, s := range f.Sections {
		ends[i] = s.Addr + s.Size
	}
	return func(i elf.SectionIndex) uint64 {
		if int(i) < len(ends) {
			return ends[i]
		}
		return 0
	}
}

// Key returns the key the object was opened with.
func (o *Object) Key() ObjectKey { return o.key }

// Path returns the file the object was read from (after --symfs and
// --debug-dir lookup).
func (o *Object) Path() string { return o.path }

// DebugPath returns the separate debug file used, or "".
func (o *Object) DebugPath() string { return o.debugPath }

// BuildID returns the build-id of the file read (the zero ID if none).
func (o *Object) BuildID() buildid.ID { return o.buildID }

// HasDWARF reports whether DWARF line and inline information was read.
func (o *Object) HasDWARF() bool { return o.dwarf != nil }

// DWARFErr returns the error that made the object's DWARF unusable, if
// any; symbols still resolve then.
func (o *Object) DWARFErr() error { return o.dwarfErr }

// Symbolize resolves a batch of addresses, each as given (an instruction
// pointer); the result is parallel to addrs.
func (o *Object) Symbolize(addrs []addrspace.ObjAddr) []Location {
	nm := names{}
	syms := map[int]*Symbol{}
	slab := &frameSlab{}
	out := make([]Location, len(addrs))
	for i, a := range addrs {
		out[i] = o.locate(a, nm, syms, slab)
	}
	return out
}

// frameSlab hands out Frame slices from large shared blocks, so a batch
// of addresses costs a few allocations instead of one per address.
type frameSlab struct {
	buf []Frame
}

// take returns an empty slice with capacity n (appends beyond n do not
// write into the slab).
func (s *frameSlab) take(n int) []Frame {
	if cap(s.buf)-len(s.buf) < n {
		s.buf = make([]Frame, 0, max(1024, n))
	}
	i := len(s.buf)
	s.buf = s.buf[:i+n]
	return s.buf[i : i : i+n]
}

// SymbolizeReturns resolves a batch of return addresses, each at
// [RetAddr.Lookup]; the result is parallel to ras.
func (o *Object) SymbolizeReturns(ras []RetAddr) []Location {
	addrs := make([]addrspace.ObjAddr, len(ras))
	for i, r := range ras {
		addrs[i] = r.Lookup()
	}
	return o.Symbolize(addrs)
}

func (o *Object) locate(a addrspace.ObjAddr, nm names, syms map[int]*Symbol, slab *frameSlab) Location {
	loc := Location{Addr: a}
	if i := o.syms.lookup(uint64(a)); i >= 0 {
		loc.Symbol = syms[i]
		if loc.Symbol == nil {
			s := o.syms.syms[i]
			loc.Symbol = &Symbol{Name: nm.get(s.name), Start: addrspace.ObjAddr(s.start), Size: s.size, Local: s.local}
			syms[i] = loc.Symbol
		}
	}
	if o.dwarf != nil {
		loc.Frames = o.dwarf.frames(uint64(a), nm, slab)
	}
	if (loc.Frames == nil || loc.Symbol == nil) && o.gosym != nil {
		if fr, fn := goFrames(o.gosym, o.goinl, uint64(a), nm, slab); fr != nil {
			if loc.Frames == nil {
				loc.Frames = fr
			}
			if loc.Symbol == nil {
				loc.Symbol = &Symbol{Name: nm.get(fn.Name), Start: addrspace.ObjAddr(fn.Entry), Size: fn.End - fn.Entry}
			}
		}
	}
	if loc.Frames == nil && loc.Symbol != nil {
		f := Frame{Func: loc.Symbol.Name}
		if row, ok := o.lines.line(uint64(a)); ok {
			f.File, f.Line, f.Column, f.Discriminator = o.lines.fileName(row.file), int(row.line), int(row.col), int(row.disc)
		}
		loc.Frames = append(slab.take(1), f)
	}
	return loc
}

// TempObject writes the image of an object that is in no file (the vdso)
// to a temporary file named after pattern (as os.CreateTemp), which the
// symbolizer can open, and returns its path; the caller removes it.
func TempObject(image []byte, pattern string) (string, error) {
	f, err := os.CreateTemp("", pattern)
	if err != nil {
		return "", err
	}
	_, err = f.Write(image)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}
