package launch

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"sync"

	"golang.org/x/sys/unix"
)

// The launcher is what the program's process runs before its execve when
// it can: a static x86-64 executable of 181 bytes of code, written once
// per hwprof process to a sealed memfd and executed as
// /proc/self/fd/N. It does what the trampoline in launch.go does (see
// testdata/launcher.asm) without starting a Go runtime, and so without
// its cost, which lands on the program's own CPU clock: a program
// launched through the trampoline (hwprof's 11 MB binary, its runtime and
// package initialisation) starts with 4 to 5 ms of CPU time already on
// its clock, through the launcher with about 1 ms, as under perf record.
// For a program of one second that is 0.3 to 0.4 points of the work it
// seems to lose to profiling; scripts/bench-pair.sh measured the
// difference.
//
// Where a memfd cannot be executed (vm.memfd_noexec, a security module,
// no /proc), Start falls back to the trampoline for the rest of the
// process.

// launcherCode is testdata/launcher.asm assembled with GNU as (offset 0 is
// the entry; TestLauncherCode assembles the file and compares).
var launcherCode = []byte{
	0x4c, 0x8b, 0x24, 0x24, 0x4c, 0x8d, 0x6c, 0x24, 0x08, 0x4e, 0x8d, 0x74,
	0xe4, 0x10, 0xb8, 0x48, 0x00, 0x00, 0x00, 0xbf, 0x04, 0x00, 0x00, 0x00,
	0xbe, 0x02, 0x00, 0x00, 0x00, 0xba, 0x01, 0x00, 0x00, 0x00, 0x0f, 0x05,
	0x6a, 0x52, 0xb8, 0x01, 0x00, 0x00, 0x00, 0xbf, 0x04, 0x00, 0x00, 0x00,
	0x48, 0x89, 0xe6, 0xba, 0x01, 0x00, 0x00, 0x00, 0x0f, 0x05, 0x48, 0x83,
	0xf8, 0x01, 0x75, 0x69, 0x49, 0x83, 0xfc, 0x02, 0x72, 0x63, 0x31, 0xc0,
	0xbf, 0x03, 0x00, 0x00, 0x00, 0x48, 0x89, 0xe6, 0xba, 0x01, 0x00, 0x00,
	0x00, 0x0f, 0x05, 0x48, 0x83, 0xf8, 0xfc, 0x74, 0xe9, 0x48, 0x83, 0xf8,
	0x01, 0x75, 0x46, 0xb8, 0x03, 0x00, 0x00, 0x00, 0xbf, 0x03, 0x00, 0x00,
	0x00, 0x0f, 0x05, 0xb8, 0x3b, 0x00, 0x00, 0x00, 0x49, 0x8b, 0x7d, 0x08,
	0x49, 0x8d, 0x75, 0x10, 0x4c, 0x89, 0xf2, 0x0f, 0x05, 0x48, 0xf7, 0xd8,
	0x48, 0x89, 0xc3, 0x88, 0x04, 0x24, 0xb8, 0x01, 0x00, 0x00, 0x00, 0xbf,
	0x04, 0x00, 0x00, 0x00, 0x48, 0x89, 0xe6, 0xba, 0x01, 0x00, 0x00, 0x00,
	0x0f, 0x05, 0xbf, 0x7e, 0x00, 0x00, 0x00, 0x48, 0x83, 0xfb, 0x02, 0x75,
	0x05, 0xbf, 0x7f, 0x00, 0x00, 0x00, 0xb8, 0xe7, 0x00, 0x00, 0x00, 0x0f,
	0x05,
}

// launcherBase is the launcher's load address.
const launcherBase = 0x400000

// launcherELF is the launcher's executable: the ELF header, a read-execute
// PT_LOAD of the whole file, a PT_GNU_STACK that keeps its stack
// non-executable, and the code.
func launcherELF() []byte {
	const hdr, phdr = 64, 56
	codeOff := uint64(hdr + 2*phdr)
	size := codeOff + uint64(len(launcherCode))
	var b bytes.Buffer
	h := elf.Header64{
		Type:      uint16(elf.ET_EXEC),
		Machine:   uint16(elf.EM_X86_64),
		Version:   uint32(elf.EV_CURRENT),
		Entry:     launcherBase + codeOff,
		Phoff:     hdr,
		Ehsize:    hdr,
		Phentsize: phdr,
		Phnum:     2,
	}
	copy(h.Ident[:], elf.ELFMAG)
	h.Ident[elf.EI_CLASS] = byte(elf.ELFCLASS64)
	h.Ident[elf.EI_DATA] = byte(elf.ELFDATA2LSB)
	h.Ident[elf.EI_VERSION] = byte(elf.EV_CURRENT)
	h.Ident[elf.EI_OSABI] = byte(elf.ELFOSABI_NONE)
	progs := []elf.Prog64{
		{Type: uint32(elf.PT_LOAD), Flags: uint32(elf.PF_R | elf.PF_X), Vaddr: launcherBase, Paddr: launcherBase, Filesz: size, Memsz: size, Align: 0x1000},
		{Type: uint32(elf.PT_GNU_STACK), Flags: uint32(elf.PF_R | elf.PF_W), Align: 16},
	}
	binary.Write(&b, binary.LittleEndian, &h)
	binary.Write(&b, binary.LittleEndian, progs)
	b.Write(launcherCode)
	return b.Bytes()
}

var (
	launcherMu    sync.Mutex
	launcherTried bool   // newLauncher has run
	launcherPath  string // "" when the trampoline is to be used
)

// launcher returns the path that executes the launcher, creating it on
// first use, or "" when the trampoline is to be used.
func launcher() string {
	launcherMu.Lock()
	defer launcherMu.Unlock()
	if !launcherTried {
		launcherTried = true
		launcherPath, _ = newLauncher() // "" on failure: the trampoline
	}
	return launcherPath
}

// noLauncher makes Start use the trampoline from now on.
func noLauncher() {
	launcherMu.Lock()
	launcherPath = ""
	launcherMu.Unlock()
}

// newLauncher writes the launcher to a sealed memfd that stays open
// (close-on-exec) for the life of the process and returns its
// /proc/self/fd path. The fd is 5 or above, so that the child's fds 3 and
// 4 (the pipes) are never it.
func newLauncher() (string, error) {
	const flags = unix.MFD_CLOEXEC | unix.MFD_ALLOW_SEALING
	fd, err := unix.MemfdCreate("hwprof-launch", flags|unix.MFD_EXEC)
	if err == unix.EINVAL { // before Linux 6.3, which has no MFD_EXEC
		fd, err = unix.MemfdCreate("hwprof-launch", flags)
	}
	if err != nil {
		return "", fmt.Errorf("memfd_create: %w", err)
	}
	high, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 5)
	unix.Close(fd)
	if err != nil {
		return "", fmt.Errorf("dup memfd: %w", err)
	}
	if err := writeLauncher(high); err != nil {
		unix.Close(high)
		return "", err
	}
	// The fd is never closed: the path names it while the process lives.
	return fmt.Sprintf("/proc/self/fd/%d", high), nil
}

func writeLauncher(fd int) error {
	for b := launcherELF(); len(b) > 0; {
		n, err := unix.Write(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("write launcher: %w", err)
		}
		b = b[n:]
	}
	if err := unix.Fchmod(fd, 0o500); err != nil {
		return fmt.Errorf("launcher: chmod: %w", err)
	}
	seals := unix.F_SEAL_SEAL | unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_WRITE
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, seals); err != nil {
		return fmt.Errorf("launcher: seal: %w", err)
	}
	return nil
}
