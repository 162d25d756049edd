package unwind

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// LocalVDSO returns the image of this process's vdso, read from
// /proc/self/mem at the range /proc/self/maps gives for [vdso]. Every
// process on one kernel has the same image, so it serves as Options.VDSO
// for recordings made on this machine since its last boot.
func LocalVDSO() ([]byte, error) {
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return nil, fmt.Errorf("unwind: read vdso: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(maps))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasSuffix(line, " [vdso]") {
			continue
		}
		lo, hi, _ := strings.Cut(strings.Fields(line)[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || end <= start || end-start > 1<<24 {
			return nil, fmt.Errorf("unwind: read vdso: bad range %q", line)
		}
		mem, err := os.Open("/proc/self/mem")
		if err != nil {
			return nil, fmt.Errorf("unwind: read vdso: %w", err)
		}
		defer mem.Close()
		buf := make([]byte, end-start)
		if _, err := mem.ReadAt(buf, int64(start)); err != nil {
			return nil, fmt.Errorf("unwind: read vdso: %w", err)
		}
		return buf, nil
	}
	return nil, errors.New("unwind: read vdso: this process has no [vdso] mapping")
}
