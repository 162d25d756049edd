package main

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
)

// helpWidth is the column at which printFlags wraps the flags' help.
const helpWidth = 100

// helpFlag is one option of a command's help: every name the FlagSet
// registers it under (-o and -output set one variable), the usage of the
// name that has one and its default.
type helpFlag struct {
	names []string // short names first
	arg   string   // the argument's name ("" for a boolean flag)
	usage string
	def   string // the default, "" when it is the zero value
}

// printFlags writes fs's options as perf and GNU tools do: each once,
// its forms together, a letter with one dash and a word with two
// (-o, --output FILE), then the help indented below.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	for _, h := range helpFlags(fs) {
		forms := make([]string, len(h.names))
		for i, n := range h.names {
			forms[i] = "-" + n
			if len(n) > 1 {
				forms[i] = "--" + n
			}
		}
		line := "  " + strings.Join(forms, ", ")
		if h.arg != "" {
			line += " " + h.arg
		}
		fmt.Fprintln(w, line)
		text := h.usage
		if h.def != "" {
			text += fmt.Sprintf(" (default %s)", h.def)
		}
		for _, l := range wrap(text, helpWidth-8) {
			fmt.Fprintln(w, "        "+l)
		}
	}
	fmt.Fprintln(w, "  -h, --help")
	fmt.Fprintln(w, "        print this help and exit")
}

// helpFlags groups fs's flags by the value they set, sorted by their
// longest name.
func helpFlags(fs *flag.FlagSet) []helpFlag {
	type key struct {
		t reflect.Type
		p uintptr
		n string // flags that set no pointer are their own group
	}
	groups := map[key]*helpFlag{}
	var out []*helpFlag
	fs.VisitAll(func(fl *flag.Flag) {
		k := key{n: fl.Name}
		if v := reflect.ValueOf(fl.Value); v.Kind() == reflect.Pointer {
			k = key{t: v.Type(), p: v.Pointer()}
		}
		h := groups[k]
		if h == nil {
			h = &helpFlag{}
			groups[k] = h
			out = append(out, h)
		}
		h.names = append(h.names, fl.Name)
		arg, usage := flag.UnquoteUsage(fl)
		if h.usage == "" {
			h.usage, h.arg = usage, arg
			if isBool(fl) {
				h.arg = ""
			}
			if !isZero(fl) {
				h.def = fl.DefValue
			}
		}
	})
	for _, h := range out {
		slices.SortStableFunc(h.names, func(a, b string) int { return cmp.Compare(len(a), len(b)) })
	}
	slices.SortFunc(out, func(a, b *helpFlag) int {
		x, y := a.names[len(a.names)-1], b.names[len(b.names)-1]
		return cmp.Or(cmp.Compare(strings.ToLower(x), strings.ToLower(y)), cmp.Compare(x, y))
	})
	res := make([]helpFlag, len(out))
	for i, h := range out {
		res[i] = *h
	}
	return res
}

// isBool reports whether fl takes no argument (-q, --adaptive).
func isBool(fl *flag.Flag) bool {
	b, ok := fl.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// isZero reports whether fl's default is its type's zero value, which the
// help does not show (as flag.PrintDefaults).
func isZero(fl *flag.Flag) (zero bool) {
	t := reflect.TypeOf(fl.Value)
	if t.Kind() != reflect.Pointer {
		return fl.DefValue == ""
	}
	defer func() {
		if recover() != nil {
			zero = fl.DefValue == ""
		}
	}()
	z, ok := reflect.New(t.Elem()).Interface().(flag.Value)
	return !ok || fl.DefValue == z.String()
}

// wrap splits s into lines of at most width bytes at spaces (a longer
// word is a line of its own).
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for w := range strings.FieldsSeq(s) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return append(lines, line)
}
