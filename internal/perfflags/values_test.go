package perfflags

import (
	"os"
	"slices"
	"strings"
	"testing"
)

func TestParsePIDs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		err  string
	}{
		{"412", []int{412}, ""},
		{"412,413", []int{412, 413}, ""},
		{"412, 413", []int{412, 413}, ""},
		{"0", nil, `bad pid "0" in -p 0`},
		{"-5", nil, `bad pid "-5"`},
		{"412,", nil, `bad pid "" in -p 412,`},
		{"abc", nil, `bad pid "abc"`},
	} {
		got, err := ParsePIDs(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParsePIDs(%q) = %v, %v; want an error with %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("ParsePIDs(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestParseRingSize(t *testing.T) {
	if p := os.Getpagesize(); p != 4096 {
		t.Fatalf("the rows are in 4 KiB pages (x86-64); this machine's pages are %d bytes", p)
	}
	for _, tc := range []struct {
		in   string
		want int
		err  string
	}{
		{"8", 8, ""},
		{"128", 128, ""},
		{"512K", 128, ""}, // the default
		{"4M", 1024, ""},  // the shared ring's default
		{"1g", 262144, ""},
		{"3K", 1, ""},    // rounded up to a page
		{"100K", 32, ""}, // 25 pages, rounded up to a power of two
		{"6", 0, "must be a power of two"},
		{"0", 0, "want pages (a power of two) or a size like 512K"},
		{"K", 0, "want pages"},
		{"1.5M", 0, "want pages"},
		{"", 0, "empty"},
	} {
		got, err := ParseRingSize(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseRingSize(%q) = %d, %v; want an error with %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseRingSize(%q) = %d, %v; want %d pages", tc.in, got, err, tc.want)
		}
	}
}
