package script

import (
	"strings"
	"testing"
)

// -F brstack/brstacksym keep the default layout and add the branch
// stack; any perf field selects perf's field layout; srcline sets
// Srcline; an unknown field is an error naming it and the known ones.
func TestParseFields(t *testing.T) {
	for _, c := range []struct {
		list                                   string
		perfFields, brstack, brstackSym, srcln bool
	}{
		{"", false, false, false, false},
		{"brstack", false, true, false, false},
		{"brstack, brstacksym", false, true, true, false},
		{"comm,ip,sym", true, false, false, false},
		{"ip,srcline", true, false, false, true},
		{"brstacksym,dso", true, false, true, false},
	} {
		o, err := ParseFields(c.list)
		if err != nil {
			t.Fatalf("%q: %v", c.list, err)
		}
		if o.perfFields != c.perfFields || o.brstack != c.brstack || o.brstackSym != c.brstackSym || o.Srcline != c.srcln {
			t.Errorf("%q: %+v", c.list, o)
		}
	}
	o, _ := ParseFields("dso,comm")
	if !o.has(fieldDSO) || !o.has(fieldComm) || o.has(fieldIP) {
		t.Errorf("dso,comm: fields %b", o.fields)
	}
	_, err := ParseFields("comm,nonsense")
	if err == nil || !strings.Contains(err.Error(), `"nonsense"`) || !strings.Contains(err.Error(), "brstacksym") {
		t.Errorf("unknown field: %v", err)
	}
	if n := FieldNames(); len(n) != int(numFields) || n[0] != "comm" {
		t.Errorf("FieldNames() = %v", n)
	}
}

// The appenders print as perf's printf formats do.
func TestAppenders(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{string(appendPadLeft(nil, "ab", 5)), "   ab"},
		{string(appendPadLeft(nil, "abcdef", 3)), "abcdef"},
		{string(appendPadRight(nil, "ab", 4)), "ab  "},
		{string(appendHexPad(nil, 0x4011d6, 16)), "          4011d6"},
		{string(appendZeroPad(nil, 7, 3)), "007"},
		{string(appendTime(nil, 12345678901234)), "12345.678901"},
		{string(appendTime(nil, 1000)), "0.000001"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
