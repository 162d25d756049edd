package otlpsend

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"
)

// Pushed says what Push sent of one recording.
type Pushed struct {
	Path     string
	Profiles int   // OTLP profiles in its request (one per sample type)
	Bytes    int   // the request's size
	Rejected int64 // profiles the endpoint refused
	// Partial is the error that stopped reading the recording early: what
	// was read before it was sent.
	Partial error
}

// Push sends each recording at paths to ep as one export request, each
// send bounded by timeout, and stops at the first recording that cannot
// be read at all or sent. warn is told the loaders' warnings, each after
// the path of its recording (Partial among them).
func Push(ep Endpoint, paths []string, n Names, timeout time.Duration, warn func(string)) ([]Pushed, error) {
	c, err := Dial(ep)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	var out []Pushed
	for _, path := range paths {
		req, _, lerr := Recording(path, n, LoadOptions(), func(s string) { warn(path + ": " + s) })
		if req == nil {
			return out, fmt.Errorf("%s: %w", path, lerr)
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		res, err := c.Send(ctx, req)
		cancel()
		if err != nil {
			return out, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, Pushed{Path: path, Profiles: profileCount(req), Bytes: len(req), Rejected: res.Rejected, Partial: lerr})
	}
	return out, nil
}

// profileCount is the number of profiles in an export request.
func profileCount(req []byte) int {
	r := pprofileotlp.NewExportRequest()
	if r.UnmarshalProto(req) != nil {
		return 0
	}
	return r.Profiles().ProfileCount()
}
