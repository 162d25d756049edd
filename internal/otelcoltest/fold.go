package otelcoltest

import (
	"fmt"
	"strings"

	gprofile "github.com/google/pprof/profile"
	"go.opentelemetry.io/collector/pdata/pprofile"
)

// Key is one sample reduced to what a report of it shows: whose it is
// (service.name, host.name), its sample type ("cpu/nanoseconds"), its
// kind label and its stack, each frame as
// "object@address function file:line" (inlined frames innermost first),
// leaf first, one per line. Folded by context, the leaf is only
// "object function", its function's (the last line's): the context a
// profile's weight is compared by.
type Key struct {
	Service, Host, Type, Kind string
	Stack                     string
}

// Fold adds up the samples of the exports ps by Key (by context: see Key).
func Fold(ps []pprofile.Profiles, byContext bool) (map[Key]int64, error) {
	out := map[Key]int64{}
	for _, p := range ps {
		if err := foldOne(p, byContext, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func foldOne(p pprofile.Profiles, byContext bool, out map[Key]int64) error {
	d := p.Dictionary()
	str := func(i int32) string {
		if i < 0 || int(i) >= d.StringTable().Len() {
			return fmt.Sprintf("<bad string %d>", i)
		}
		return d.StringTable().At(int(i))
	}
	for _, rp := range p.ResourceProfiles().All() {
		attrs := rp.Resource().Attributes()
		var k Key
		if v, ok := attrs.Get("service.name"); ok {
			k.Service = v.Str()
		}
		if v, ok := attrs.Get("host.name"); ok {
			k.Host = v.Str()
		}
		for _, sp := range rp.ScopeProfiles().All() {
			for _, prof := range sp.Profiles().All() {
				k.Type = str(prof.SampleType().TypeStrindex()) + "/" + str(prof.SampleType().UnitStrindex())
				for _, s := range prof.Samples().All() {
					sk := k
					sk.Kind = ""
					for _, ai := range s.AttributeIndices().All() {
						a := d.AttributeTable().At(int(ai))
						if str(a.KeyStrindex()) == "kind" {
							sk.Kind = a.Value().Str()
						}
					}
					st, err := stackOf(d, s.StackIndex(), str, byContext)
					if err != nil {
						return err
					}
					sk.Stack = st
					for _, v := range s.Values().All() {
						out[sk] += v
					}
				}
			}
		}
	}
	return nil
}

// stackOf is stack i of d as Key.Stack.
func stackOf(d pprofile.ProfilesDictionary, i int32, str func(int32) string, byContext bool) (string, error) {
	if i <= 0 || int(i) >= d.StackTable().Len() {
		return "", fmt.Errorf("stack index %d of %d", i, d.StackTable().Len())
	}
	var b strings.Builder
	for j, li := range d.StackTable().At(int(i)).LocationIndices().All() {
		if li <= 0 || int(li) >= d.LocationTable().Len() {
			return "", fmt.Errorf("location index %d of %d", li, d.LocationTable().Len())
		}
		l := d.LocationTable().At(int(li))
		obj := ""
		if mi := l.MappingIndex(); mi > 0 {
			obj = str(d.MappingTable().At(int(mi)).FilenameStrindex())
		}
		if j == 0 && byContext && l.Lines().Len() > 0 {
			f := d.FunctionTable().At(int(l.Lines().At(l.Lines().Len() - 1).FunctionIndex()))
			fmt.Fprintf(&b, "%s %s\n", obj, str(f.NameStrindex()))
			continue
		}
		fmt.Fprintf(&b, "%s@%#x", obj, l.Address())
		for _, ln := range l.Lines().All() {
			f := d.FunctionTable().At(int(ln.FunctionIndex()))
			fmt.Fprintf(&b, " %s %s:%d", str(f.NameStrindex()), str(f.FilenameStrindex()), ln.Line())
		}
		b.WriteByte('\n')
	}
	return b.String(), nil
}

// FoldPProf adds up the samples of pp by Key, as Fold does for what was
// sent of it under service and host: samples/count, which is not sent, is
// left out, and so are zero values.
func FoldPProf(pp *gprofile.Profile, service, host string, byContext bool) map[Key]int64 {
	out := map[Key]int64{}
	for i, st := range pp.SampleType {
		if st.Type == "samples" {
			continue
		}
		k := Key{Service: service, Host: host, Type: st.Type + "/" + st.Unit}
		for _, s := range pp.Sample {
			if s.Value[i] == 0 {
				continue
			}
			sk := k
			if kinds := s.Label["kind"]; len(kinds) > 0 {
				sk.Kind = kinds[0]
			}
			var b strings.Builder
			for j, l := range s.Location {
				obj := ""
				if l.Mapping != nil {
					obj = l.Mapping.File
				}
				if j == 0 && byContext && len(l.Line) > 0 {
					fmt.Fprintf(&b, "%s %s\n", obj, l.Line[len(l.Line)-1].Function.Name)
					continue
				}
				fmt.Fprintf(&b, "%s@%#x", obj, l.Address)
				for _, ln := range l.Line {
					fmt.Fprintf(&b, " %s %s:%d", ln.Function.Name, ln.Function.Filename, ln.Line)
				}
				b.WriteByte('\n')
			}
			sk.Stack = b.String()
			out[sk] += s.Value[i]
		}
	}
	return out
}

// Totals adds up folded samples by service, host and type (the stacks
// and kinds summed).
func Totals(m map[Key]int64) map[Key]int64 {
	out := map[Key]int64{}
	for k, v := range m {
		out[Key{Service: k.Service, Host: k.Host, Type: k.Type}] += v
	}
	return out
}
