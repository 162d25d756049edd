package symbolize

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/hwprof/hwprof/addrspace"
)

// TestReadKallsymsChunks checks that kallsyms text read in chunks (of
// sizes from one byte, where every line is longer than a chunk, to more
// than the text, by readers that return a byte or the whole at a time)
// holds the text, in whole lines but the last, and gives the symbols the
// text read at once gives, every symbol (All) and those of addresses
// (For), with line numbers counted across chunks.
func TestReadKallsymsChunks(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "kallsyms.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// every line of the testdata thrice, the last without its newline
	text := strings.Repeat(string(data), 3)
	text = strings.TrimSuffix(text, "\n")
	whole := &KallsymsText{chunks: [][]byte{[]byte(text)}}
	all, err := whole.All()
	if err != nil {
		t.Fatal(err)
	}
	if all.Len() == 0 {
		t.Fatal("no symbols in the testdata")
	}
	var addrs []addrspace.ObjAddr
	for _, s := range all.table.syms {
		addrs = append(addrs, addrspace.ObjAddr(s.start), addrspace.ObjAddr(s.start+1), addrspace.ObjAddr(s.start-1))
	}
	some, err := whole.For(addrs)
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{1, 2, 7, 30, 64, 100, len(text) - 1, len(text), len(text) + 1, kallsymsChunk} {
		for _, reader := range []struct {
			name string
			wrap func(io.Reader) io.Reader
		}{
			{"whole", func(r io.Reader) io.Reader { return r }},
			{"bytes", iotest.OneByteReader},
		} {
			kt, err := readKallsymsChunks(reader.wrap(strings.NewReader(text)), size)
			if err != nil {
				t.Fatalf("size %d, %s: %v", size, reader.name, err)
			}
			if got := string(bytes.Join(kt.chunks, nil)); got != text || textLen(kt) != len(text) {
				t.Fatalf("size %d, %s: chunks hold %d bytes (Len %d), want the text's %d", size, reader.name, len(got), textLen(kt), len(text))
			}
			for i, c := range kt.chunks {
				if len(c) == 0 || i < len(kt.chunks)-1 && c[len(c)-1] != '\n' {
					t.Fatalf("size %d, %s: chunk %d of %d is %q: not whole lines", size, reader.name, i, len(kt.chunks), c)
				}
			}
			if size >= 100 && size < len(text) && len(kt.chunks) < 2 {
				t.Errorf("size %d, %s: %d chunks", size, reader.name, len(kt.chunks))
			}
			gotAll, err := kt.All()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(gotAll.table.syms, all.table.syms) {
				t.Errorf("size %d, %s: All differs from the text read at once", size, reader.name)
			}
			gotSome, err := kt.For(addrs)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(gotSome.table.syms, some.table.syms) {
				t.Errorf("size %d, %s: For differs from the text read at once", size, reader.name)
			}
		}
	}

	// A bad line's number counts the lines of the chunks before.
	bad := text + "\nzz T bad\n"
	kt, err := readKallsymsChunks(strings.NewReader(bad), 50)
	if err != nil {
		t.Fatal(err)
	}
	want := "line " + strconv.Itoa(strings.Count(bad, "\n")) + ":"
	if _, err := kt.All(); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("bad last line: %v, want %q", err, want)
	}
	// Hidden addresses are all zero across every chunk; one shown address
	// in the last chunk is enough.
	zero := strings.Repeat("0000000000000000 T x\n", 40)
	if kt, err = readKallsymsChunks(strings.NewReader(zero), 64); err != nil {
		t.Fatal(err)
	}
	if _, err := kt.For([]addrspace.ObjAddr{1}); !errors.Is(err, ErrKallsymsHidden) {
		t.Errorf("hidden addresses in chunks: %v", err)
	}
	if kt, err = readKallsymsChunks(strings.NewReader(zero+"ffffffff81000000 T y\n"), 64); err != nil {
		t.Fatal(err)
	}
	if k, err := kt.For([]addrspace.ObjAddr{0xffffffff81000010}); err != nil || k.Len() != 1 {
		t.Errorf("one address shown in the last chunk: %v", err)
	}
	// A read error is the error, wrapped.
	boom := errors.New("boom")
	if _, err := readKallsymsChunks(iotest.ErrReader(boom), 64); !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "read kallsyms: ") {
		t.Errorf("read error: %v", err)
	}
	if _, err := ReadKallsyms(filepath.Join(t.TempDir(), "none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// TestReadKallsymsFile checks that a saved kallsyms file reads in one
// chunk and names what the same text read as a stream names.
func TestReadKallsymsFile(t *testing.T) {
	path := filepath.Join("testdata", "kallsyms.txt")
	kt, err := ReadKallsyms(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(kt.chunks) != 1 {
		t.Errorf("%d chunks, want 1", len(kt.chunks))
	}
	k, err := kt.All()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := parseKallsyms(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(k.table.syms, want.table.syms) {
		t.Error("All differs from the text read as a stream")
	}
}

// TestKallsymsRelocate checks RefAddr and Relocate: the kernel's own
// symbols move with its reference symbol, modules' stay.
func TestKallsymsRelocate(t *testing.T) {
	text := "0000000000000000 A fixed_percpu_data\n" +
		"ffffffff81000000 T __pi__text\n" +
		"ffffffff81000000 T _stext\n" +
		"ffffffff81000000 T _text\n" +
		"ffffffff81001000 T do_one_initcall\n" +
		"ffffffff81002000 t kernel_leaf\n" +
		"ffffffffc0000100 t nft_do_chain\t[nf_tables]\n"
	kt, err := readKallsyms(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"_text", "_stext"} {
		if a, ok := kt.RefAddr(name); !ok || a != 0xffffffff81000000 {
			t.Errorf("RefAddr(%s) = %#x, %v; want 0xffffffff81000000", name, a, ok)
		}
	}
	if a, ok := kt.RefAddr("_etext"); ok {
		t.Errorf("RefAddr(_etext) = %#x: no such line", a)
	}
	const up = 0x19200000 // the kernel 402 MB higher
	down := uint64(0xe00000)
	for _, delta := range []uint64{0, up, -down} {
		k, err := kt.All()
		if err != nil {
			t.Fatal(err)
		}
		k.Relocate(delta)
		locs := k.Symbolize([]addrspace.ObjAddr{addrspace.ObjAddr(0xffffffff81001010 + delta), addrspace.ObjAddr(0xffffffff81002004 + delta), 0xffffffffc0000110})
		var got []string
		for _, l := range locs {
			name := "?"
			if l.Symbol != nil {
				off, _ := l.Offset()
				name = fmt.Sprintf("%s+%#x", l.Symbol.Name.Raw, off)
			}
			got = append(got, name)
		}
		if want := []string{"do_one_initcall+0x10", "kernel_leaf+0x4", "nft_do_chain+0x10"}; !slices.Equal(got, want) {
			t.Errorf("moved by %#x: %v, want %v", delta, got, want)
		}
	}
}
