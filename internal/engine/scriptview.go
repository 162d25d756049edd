package engine

import (
	"errors"
	"path/filepath"
	"strings"

	"github.com/hwprof/hwprof/addrspace"
	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/symbolize"
)

// ScriptView is the engine as a per-sample printer sees it, in public
// types only (it is report/script's Analysis): the processes' commands,
// the objects of addresses and their names, and the symbols of addresses,
// asked for while the samples are visited and resolved a window of
// samples at a time (Symbols.ResolveAdded), each object read once.
type ScriptView struct{ e *Engine }

// ScriptView returns the engine's view for a per-sample printer.
func (e *Engine) ScriptView() ScriptView { return ScriptView{e} }

// Comm returns the command of process pid, false when no record named it.
func (v ScriptView) Comm(pid uint32) (string, bool) {
	p, ok := v.e.Maps.Process(pid)
	return p.Comm, ok
}

// Lookup returns the object of a runtime address of s's process at s's
// time (a branch end) and the address in it; a nil object when no mapping
// holds it.
func (v ScriptView) Lookup(s *perf.Sample, a uint64) (*addrspace.Object, addrspace.ObjAddr) {
	return v.e.Lookup(s, a)
}

// ObjectName names an object of this engine as perf's dso name does: the
// recorded path, "[kernel.kallsyms]" for the kernel image (whose mapping
// is "[kernel.kallsyms]_text") and "[name]" for a module
// (kmod_path__parse: the file name without .ko and compression suffix,
// '-' made '_'); "[unknown]" for what is not one.
func (v ScriptView) ObjectName(obj *addrspace.Object) string {
	if obj == nil {
		return "[unknown]"
	}
	switch obj.Kind {
	case addrspace.KindKernel:
		return symbolize.KernelPath
	case addrspace.KindModule:
		if strings.HasPrefix(obj.Path, "[") {
			return obj.Path
		}
		name := filepath.Base(obj.Path)
		for _, ext := range []string{".gz", ".xz", ".zst", ".ko"} {
			name = strings.TrimSuffix(name, ext)
		}
		return "[" + strings.ReplaceAll(name, "-", "_") + "]"
	}
	return obj.Path
}

// Want asks for the symbol at address a of object o (for a return
// address the call's, ra-1) in process pid, and returns the id Location
// takes; false when nothing names o.
func (v ScriptView) Want(obj *addrspace.Object, pid uint32, a addrspace.ObjAddr) (uint64, bool) {
	h := v.e.Symbols.Add(obj, pid, a)
	return uint64(uint32(h.key))<<32 | uint64(h.idx), h.Valid()
}

// Resolve looks up the addresses asked for since the last call, with
// source lines and inlined frames when srcline is set (the first call's
// srcline holds); last lets go of the objects read, and no address may be
// asked for after it.
func (v ScriptView) Resolve(srcline, last bool) {
	if last {
		v.e.Symbols.Resolve(srcline)
	} else {
		v.e.Symbols.ResolveAdded(srcline)
	}
}

// Location returns the location of the address id names once resolved;
// false when its object could not be read.
func (v ScriptView) Location(id uint64) (symbolize.Location, bool) {
	return v.e.Symbols.Location(Handle{key: int32(uint32(id >> 32)), idx: uint32(id)})
}

// Unread returns, after the last Resolve, why kernel addresses asked for
// have no names ("" when a kallsyms names them, or none was asked for),
// and the other objects whose symbols could not be read (not the JIT perf
// maps, whose absence is common) with why, in the order first asked for:
// first the files refused (Objects.Refused: errors matching
// symbolize.ErrRefused, with no object path), then the objects.
func (v ScriptView) Unread() (kernel string, objs []string, errs []error) {
	if _, why := v.e.Objects.Kernel(); why != "" && v.e.Symbols.KernelAsked() {
		kernel = why
	}
	for _, err := range v.e.Objects.Refused() {
		objs = append(objs, "")
		errs = append(errs, err)
	}
	for _, ke := range v.e.Symbols.Errors() {
		if ke.Key.Path == symbolize.KernelPath || IsPerfMap(ke.Key.Path) || errors.Is(ke.Err, symbolize.ErrRefused) {
			continue
		}
		objs = append(objs, ke.Key.Path)
		errs = append(errs, ke.Err)
	}
	return kernel, objs, errs
}
