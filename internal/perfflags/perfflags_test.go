package perfflags

import (
	"bytes"
	"flag"
	"reflect"
	"strings"
	"testing"

	"github.com/hwprof/hwprof/perf/event"
)

func parseFlags(args ...string) (event.RecordConfig, error) {
	var c event.RecordConfig
	fs := flag.NewFlagSet("record", flag.ContinueOnError)
	fs.SetOutput(new(bytes.Buffer))
	Register(fs, &c)
	err := fs.Parse(args)
	return c, err
}

func TestRegister(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want event.RecordConfig
	}{
		{"events repeat", []string{"-e", "cycles", "--event", "a,b", "-e=cpu-clock"},
			event.RecordConfig{Events: []string{"cycles", "a,b", "cpu-clock"}}},
		{"count", []string{"-c", "10007"}, event.RecordConfig{Period: 10007}},
		{"count long", []string{"--count=5"}, event.RecordConfig{Period: 5}},
		{"freq", []string{"-F", "999"}, event.RecordConfig{Freq: 999}},
		{"freq max", []string{"--freq", "max"}, event.RecordConfig{Freq: event.FreqMax}},
		{"g", []string{"-g"}, event.RecordConfig{CallGraph: "fp"}},
		{"g then call-graph", []string{"-g", "--call-graph", "dwarf"}, event.RecordConfig{CallGraph: "dwarf"}},
		{"call-graph then g", []string{"--call-graph", "dwarf,4096", "-g"}, event.RecordConfig{CallGraph: "dwarf,4096"}},
		{"branch filter", []string{"-j", "any_call,u"}, event.RecordConfig{BranchFilter: "any_call,u"}},
		{"branch any", []string{"-b"}, event.RecordConfig{BranchFilter: "any"}},
		{"branch any long", []string{"--branch-any"}, event.RecordConfig{BranchFilter: "any"}},
		{"no-inherit", []string{"--no-inherit"}, event.RecordConfig{NoInherit: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseFlags(tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("%q:\n got %+v\nwant %+v", tt.args, got, tt.want)
			}
		})
	}
}

func TestRegisterErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"b with j", []string{"-b", "-j", "any_call"}, "cannot use --branch-any (-b) with --branch-filter (-j)"},
		{"j with b", []string{"-j", "any_call", "-b"}, "cannot use --branch-any (-b) with --branch-filter (-j)"},
		{"j twice", []string{"-j", "any_call", "-j", "u"}, "-j twice"},
		{"bad j word", []string{"-j", "any_cal"}, `unknown word "any_cal"`},
		{"zero count", []string{"-c", "0"}, "want a positive decimal period"},
		{"hex count", []string{"-c", "0x10"}, "want a positive decimal period"},
		{"negative freq", []string{"-F", "-5"}, "want a positive decimal frequency or max"},
		{"freq garbage", []string{"-F", "10abc"}, "want a positive decimal frequency or max"},
		{"freq over uint", []string{"-F", "4294967297"}, "want a positive decimal frequency or max"},
		{"bad call graph", []string{"--call-graph", "dwarf,abc"}, "bad stack dump size"},
		{"group", []string{"-e", "{cycles,instructions}"}, "event groups"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseFlags(tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%q: error %v, want it to contain %q", tt.args, err, tt.want)
			}
		})
	}
}
