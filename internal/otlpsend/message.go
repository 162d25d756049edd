package otlpsend

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	gprofile "github.com/google/pprof/profile"
	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"

	"github.com/hwprof/hwprof/internal/engine"
	"github.com/hwprof/hwprof/perf/perfdata"
	"github.com/hwprof/hwprof/profile"
	"github.com/hwprof/hwprof/report"
	"github.com/hwprof/hwprof/report/otlp"
	"github.com/hwprof/hwprof/report/pprof"
)

// Names are the resource names the caller gives; "" takes each from the
// recording.
type Names struct {
	Service string // service.name; default: the program's name
	Host    string // host.name; default: the recording's host name
	Version string // hwprof's version, the scope's
}

// unknownService is service.name when neither the caller nor the
// recording names the program (OpenTelemetry's "unknown_service:" form).
const unknownService = "unknown_service:hwprof"

// LoadOptions are the loader's options for sending: source positions on,
// as for `hwprof report --format pprof`.
func LoadOptions() engine.LoadOptions { return engine.LoadOptions{SiteLines: true} }

// Recording loads the recording at path and returns its export request
// (one resource, a profile per sample type; see package report/otlp), the
// pprof profile it was made from, and the loader's warnings. A recording
// that cannot be read whole gives what was read and the error, as
// engine.Load does.
func Recording(path string, n Names, o engine.LoadOptions, warn func(string)) ([]byte, *gprofile.Profile, error) {
	p, lerr := engine.Load(path, o)
	if p == nil {
		return nil, nil, lerr
	}
	for _, w := range p.Warnings {
		warn(w)
	}
	pp, err := build(p, warn)
	if err != nil {
		return nil, nil, err
	}
	req, err := request(pp, resource(p, pp, n, hostOf(path)))
	if err != nil {
		return nil, nil, err
	}
	return req, pp, lerr
}

// build is p's pprof profile, as `hwprof report --format pprof` writes it.
func build(p *profile.Profile, warn func(string)) (*gprofile.Profile, error) {
	return pprof.Build(report.PProfProfile(p), pprof.Options{Warn: warn})
}

// request is the export request of pp from res.
func request(pp *gprofile.Profile, res otlp.Resource) ([]byte, error) {
	ps, err := otlp.FromPProf(pp, res)
	if err != nil {
		return nil, err
	}
	req, err := pprofileotlp.NewExportRequestFromProfiles(ps).MarshalProto()
	if err != nil {
		return nil, fmt.Errorf("otlp: %w", err)
	}
	return req, nil
}

// hostOf is the host name a recording gives (perf's HOSTNAME feature), ""
// when it gives none or cannot be read.
func hostOf(path string) string {
	r, err := perfdata.Open(path)
	if err != nil {
		return ""
	}
	defer r.Close()
	return r.Features().Hostname
}

// hexID is a GNU build-id as hwprof writes it.
var hexID = regexp.MustCompile(`^[0-9a-f]+$`)

// resource is the resource of p (pp its pprof profile): the program is
// the busiest process's, under the full name of its executable when that
// is pp's main mapping (a process's command name is cut at 15 bytes), and
// its build-id then that mapping's; the pid is given when the recording
// has one process.
func resource(p *profile.Profile, pp *gprofile.Profile, n Names, host string) otlp.Resource {
	r := otlp.Resource{ServiceName: n.Service, HostName: n.Host, Version: n.Version}
	if r.HostName == "" {
		r.HostName = host
	}
	rec := &p.Recording
	if len(rec.Processes) > 0 {
		r.Executable = rec.Processes[0].Comm
	}
	if len(rec.Processes) == 1 {
		r.PID = int(rec.Processes[0].PID)
	}
	if len(pp.Mapping) > 0 && r.Executable != "" {
		if m := pp.Mapping[0]; strings.HasPrefix(filepath.Base(m.File), r.Executable) {
			r.Executable = filepath.Base(m.File)
			if hexID.MatchString(m.BuildID) {
				r.BuildID = m.BuildID
			}
		}
	}
	if r.ServiceName == "" {
		r.ServiceName = r.Executable
	}
	if r.ServiceName == "" {
		r.ServiceName = unknownService
	}
	return r
}
