package symbolize

import (
	"debug/elf"
	"debug/gosym"
	"errors"
	"fmt"
)

// goTable reads the Go pclntab of f, for Go binaries without DWARF.
func goTable(f *elf.File) (*gosym.Table, *goInlines, error) {
	t, data, err := goLineTable(f)
	if err != nil {
		return nil, nil, err
	}
	return t, newGoInlines(f, data), nil
}

// goLineTable reads the Go pclntab of f: the table and its bytes.
func goLineTable(f *elf.File) (*gosym.Table, []byte, error) {
	data, err := pclntab(f)
	if err != nil {
		return nil, nil, err
	}
	var text uint64
	if s := f.Section(".text"); s != nil {
		text = s.Addr
	}
	var symtab []byte
	if s := f.Section(".gosymtab"); s != nil {
		symtab, _ = s.Data()
	}
	t, err := gosym.NewTable(symtab, gosym.NewLineTable(data, text))
	if err != nil {
		return nil, nil, fmt.Errorf("read Go pclntab: %w", err)
	}
	return t, data, nil
}

// GoFuncs lists the functions of the Go binary f from its pclntab, which
// a Go binary keeps without a symbol table (go build -ldflags=-s, go
// run): what internal/uprobe probes in such a binary. A malformed table
// is an error, not a panic.
func GoFuncs(f *elf.File) (funcs []gosym.Func, err error) {
	defer func() {
		// debug/gosym reads the table lazily
		if recover() != nil {
			funcs, err = nil, errors.New("read Go pclntab: malformed")
		}
	}()
	t, _, err := goLineTable(f)
	if err != nil {
		return nil, err
	}
	return t.Funcs, nil
}

var errNoPclntab = errors.New("no Go pclntab")

// pclntab returns the bytes of .gopclntab, or of runtime.pclntab to
// runtime.epclntab when the section has another name (PIE builds).
func pclntab(f *elf.File) ([]byte, error) {
	if s := f.Section(".gopclntab"); s != nil && s.Type != elf.SHT_NOBITS {
		d, err := s.Data()
		if err != nil {
			return nil, fmt.Errorf("read Go pclntab: %w", err)
		}
		return d, nil
	}
	syms, err := f.Symbols()
	if err != nil {
		return nil, errNoPclntab
	}
	var start, end uint64
	for _, s := range syms {
		switch s.Name {
		case "runtime.pclntab":
			start = s.Value
		case "runtime.epclntab":
			end = s.Value
		}
	}
	if start == 0 || end <= start {
		return nil, errNoPclntab
	}
	for _, s := range f.Sections {
		if s.Type == elf.SHT_NOBITS || start < s.Addr || end > s.Addr+s.Size {
			continue
		}
		d, err := s.Data()
		if err != nil {
			return nil, fmt.Errorf("read Go pclntab: %w", err)
		}
		return d[start-s.Addr : end-s.Addr], nil
	}
	return nil, errNoPclntab
}

// goFrames resolves a with the pclntab: with the inline tree, one frame
// per inlined call and the physical function; without, the physical
// function with the file and line of the innermost inlined position.
func goFrames(t *gosym.Table, inl *goInlines, a uint64, nm names, slab *frameSlab) (frames []Frame, fn *gosym.Func) {
	defer func() {
		// debug/gosym reads the table lazily; a malformed one must not
		// panic here.
		if recover() != nil {
			frames, fn = nil, nil
		}
	}()
	file, line, fn := t.PCToLine(a)
	if fn == nil {
		return nil, nil
	}
	if inl != nil {
		if fr := inl.frames(t, a, nm, slab); fr != nil {
			return fr, fn
		}
	}
	f := Frame{Func: nm.get(fn.Name), File: file, Line: line}
	if inl != nil {
		if raw, _, ok := inl.function(a); ok {
			f.StartLine = inl.startLine(raw)
		}
	}
	return append(slab.take(1), f), fn
}
