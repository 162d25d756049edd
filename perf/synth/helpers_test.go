package synth

import "golang.org/x/sys/unix"

// perms prints Prot and Flags the way maps and perf report -D do: "r-xp".
func perms(m Mapping) string {
	p := []byte("---p")
	if m.Prot&unix.PROT_READ != 0 {
		p[0] = 'r'
	}
	if m.Prot&unix.PROT_WRITE != 0 {
		p[1] = 'w'
	}
	if m.Prot&unix.PROT_EXEC != 0 {
		p[2] = 'x'
	}
	if m.Flags&unix.MAP_SHARED != 0 {
		p[3] = 's'
	}
	return string(p)
}

// parseMapsLine parses one line of /proc/PID/maps (without its newline)
// as Mappings does each.
func parseMapsLine(line []byte) (Mapping, error) {
	var m Mapping
	path, err := parseMapsFields(line, &m)
	if err != nil {
		return Mapping{}, err
	}
	m.Path = string(path)
	return m, nil
}
