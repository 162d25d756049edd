package symbolize

import (
	"debug/elf"
	"fmt"
	"io"

	"github.com/hwprof/hwprof/buildid"
)

// openELF builds the Object of an ELF file held in r, as Open does once it
// has found the file, without looking for a separate debug file: the
// tables of a file in memory (the fuzz tests' mutated files).
func openELF(key ObjectKey, r io.ReaderAt, withDWARF bool) (*Object, error) {
	return guarded(key.Path, func() (*Object, error) {
		f, err := elf.NewFile(r)
		if err != nil {
			return nil, fmt.Errorf("open object: %w", err)
		}
		id, _ := buildid.FromELF(f) // the zero ID when it has none
		o := &Object{key: key, path: key.Path, buildID: id}
		o.build(f, nil, withDWARF)
		return o, nil
	})
}

// loadKallsyms reads every text symbol of the kallsyms file at path.
func loadKallsyms(path string) (*Kallsyms, error) {
	text, err := ReadKallsyms(path)
	if err != nil {
		return nil, err
	}
	return text.All()
}

// parseKallsyms reads every text symbol of kallsyms text.
func parseKallsyms(r io.Reader) (*Kallsyms, error) {
	text, err := readKallsyms(r)
	if err != nil {
		return nil, err
	}
	return text.All()
}

// resolver opens the resolver of key as the report does for a recording
// of this machine: /proc/kallsyms for the kernel, else the ELF object.
func resolver(key ObjectKey, o Options) (Resolver, error) {
	if key.Path == KernelPath {
		return loadKallsyms("/proc/kallsyms")
	}
	return Open(key, o)
}
