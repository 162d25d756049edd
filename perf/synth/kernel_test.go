package synth

import (
	"os"
	"path/filepath"
	"testing"
)

func TestReadKernelText(t *testing.T) {
	const (
		head  = "0000000000000000 A fixed_percpu_data\n"
		text  = "ffffffff81000000 T _text\n"
		stext = "ffffffff81000000 T _stext\n"
		etext = "ffffffff822090c8 T _etext\n"
		mods  = "ext4 1 0 - Live 0xffffffffc0400000\nxfs 1 0 - Live 0xffffffffc0010000 (E)\n"
	)
	tests := []struct {
		name     string
		kallsyms string
		modules  string
		want     KernelText
		ok       bool
	}{
		{"_text and _etext", head + stext + text + etext, "",
			KernelText{Start: 0xffffffff81000000, End: 0xffffffff822090c8, RefSym: "_text", RefAddr: 0xffffffff81000000}, true},
		{"_text preferred to _stext even when later", head + "ffffffff81000100 T _stext\n" + text + etext, "",
			KernelText{Start: 0xffffffff81000000, End: 0xffffffff822090c8, RefSym: "_text", RefAddr: 0xffffffff81000000}, true},
		{"only _stext", head + stext + etext, "",
			KernelText{Start: 0xffffffff81000000, End: 0xffffffff822090c8, RefSym: "_stext", RefAddr: 0xffffffff81000000}, true},
		{"absolute _text accepted", "ffffffff81000000 A _text\n" + etext, "",
			KernelText{Start: 0xffffffff81000000, End: 0xffffffff822090c8, RefSym: "_text", RefAddr: 0xffffffff81000000}, true},
		{"data symbol named _text ignored", "ffffffff81000000 D _text\n" + stext + etext, "",
			KernelText{Start: 0xffffffff81000000, End: 0xffffffff822090c8, RefSym: "_stext", RefAddr: 0xffffffff81000000}, true},
		{"no _etext: ends at the lowest module", head + text, mods,
			KernelText{Start: 0xffffffff81000000, End: 0xffffffffc0010000, RefSym: "_text", RefAddr: 0xffffffff81000000}, true},
		{"no _etext, no modules: ends at the top", head + text, "",
			KernelText{Start: 0xffffffff81000000, End: ^uint64(0), RefSym: "_text", RefAddr: 0xffffffff81000000}, true},
		{"kptr_restrict: addresses shown as 0", "0000000000000000 T _stext\n0000000000000000 T _text\n0000000000000000 T _etext\n", "", KernelText{}, false},
		{"neither symbol", head + etext, "", KernelText{}, false},
		{"garbage", "not kallsyms\n\n  \nffff\n", "", KernelText{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "kallsyms"), []byte(tt.kallsyms), 0o644); err != nil {
				t.Fatal(err)
			}
			if tt.modules != "" {
				if err := os.WriteFile(filepath.Join(dir, "modules"), []byte(tt.modules), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			k, ok, err := ReadKernelText(dir)
			if err != nil || ok != tt.ok || k != tt.want {
				t.Errorf("got %+v, %v, %v; want %+v, %v", k, ok, err, tt.want, tt.ok)
			}
		})
	}
	if _, _, err := ReadKernelText(t.TempDir()); err == nil {
		t.Error("ReadKernelText without kallsyms: want an error")
	}
}

// TestReadKernelTextLive reads this machine's /proc/kallsyms; the cross
// check with perf's own kernel MMAP is in TestCrossCheckPerf.
func TestReadKernelTextLive(t *testing.T) {
	k, ok, err := ReadKernelText("/proc")
	if err != nil {
		t.Skipf("no /proc/kallsyms: %v", err)
	}
	if !ok {
		t.Skip("kallsyms addresses are hidden (kptr_restrict or not root)")
	}
	if k.Start == 0 || k.End <= k.Start || k.RefAddr != k.Start || k.Name() != "[kernel.kallsyms]"+k.RefSym {
		t.Errorf("implausible kernel text %+v", k)
	}
}
