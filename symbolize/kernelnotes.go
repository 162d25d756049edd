package symbolize

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
)

// KernelNotesPath is where the running kernel exposes its ELF notes.
const KernelNotesPath = "/sys/kernel/notes"

// KernelBuildID returns the hex build-id of the running kernel, read from
// the NT_GNU_BUILD_ID note of /sys/kernel/notes, or "" when it has none.
// Kernel symbols from /proc/kallsyms belong to a recording only when its
// [kernel.kallsyms] build-id is this one (perf's test too).
func KernelBuildID() (string, error) {
	data, err := os.ReadFile(KernelNotesPath)
	if err != nil {
		return "", fmt.Errorf("kernel build-id: %w", err)
	}
	return hex.EncodeToString(ParseBuildIDNote(data)), nil
}

// ParseBuildIDNote returns the descriptor of the first GNU NT_GNU_BUILD_ID
// note in a sequence of ELF notes (Elf64_Nhdr in <elf.h>: namesz, descsz,
// type, then name and descriptor each padded to 4 bytes), or nil.
func ParseBuildIDNote(data []byte) []byte {
	const ntGNUBuildID = 3
	for len(data) >= 12 {
		namesz := uint64(binary.LittleEndian.Uint32(data))
		descsz := uint64(binary.LittleEndian.Uint32(data[4:]))
		typ := binary.LittleEndian.Uint32(data[8:])
		data = data[12:]
		nameEnd := (namesz + 3) &^ 3
		descEnd := nameEnd + (descsz+3)&^3
		if descEnd > uint64(len(data)) {
			return nil
		}
		if typ == ntGNUBuildID && namesz == 4 && string(data[:4]) == "GNU\x00" && descsz > 0 {
			return data[nameEnd : nameEnd+descsz]
		}
		data = data[descEnd:]
	}
	return nil
}
