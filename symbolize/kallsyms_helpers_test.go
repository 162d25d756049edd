package symbolize

import "github.com/hwprof/hwprof/addrspace"

// kallsymsFor resolves the kernel addresses addrs with kallsyms text,
// keeping only the symbols that contain them, as KallsymsText.For does.
// text must not be written again: the names are substrings of it.
func kallsymsFor(text []byte, addrs []addrspace.ObjAddr) (*Kallsyms, error) {
	return (&KallsymsText{chunks: [][]byte{text}}).For(addrs)
}

// textLen returns the number of bytes of the text t holds.
func textLen(t *KallsymsText) int {
	n := 0
	for _, c := range t.chunks {
		n += len(c)
	}
	return n
}
