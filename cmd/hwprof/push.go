package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/hwprof/hwprof/internal/otlpsend"
)

// cmdPush sends recordings to an OpenTelemetry Collector as OTLP profiles
// (internal/otlpsend; the conversion: report/otlp).
func cmdPush(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("push", "--otlp URL [-i FILE]... [--service NAME] [--host-name NAME] [--timeout D] [RECORDING...]", stderr)
	var in inputs
	fs.Var(&in, "i", "send the recording `FILE` (repeat -i for several; recordings may also follow the options)")
	var of otlpFlags
	of.registerEndpoint(fs)
	timeout := fs.Duration("timeout", otlpsend.DefaultTimeout, "give up on a send after `D`")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	usage := func(msg string) int {
		fmt.Fprintf(stderr, "hwprof push: %s\n", msg)
		return exitUsage
	}
	paths := append(in, fs.Args()...)
	if len(paths) == 0 {
		paths = inputs{defaultInput}
	}
	ep, err := of.endpoint()
	switch {
	case err != nil:
		return usage(err.Error())
	case *timeout <= 0:
		return usage("--timeout must be positive")
	}
	for _, p := range paths {
		if p == "-" {
			return usage("-i -: push reads files, not standard input")
		}
		if err := haveInput(p); err != nil {
			return fail(stderr, err)
		}
	}
	warn := func(msg string) { fmt.Fprintf(stderr, "hwprof: warning: %s\n", msg) }
	pushed, err := otlpsend.Push(ep, paths, of.names(), *timeout, warn)
	status := 0
	for _, p := range pushed {
		fmt.Fprintf(stdout, "hwprof: sent %s to %v: %d profiles, %d bytes\n", p.Path, ep, p.Profiles, p.Bytes)
		if p.Rejected > 0 {
			warn(fmt.Sprintf("%v refused %d profiles of %s", ep, p.Rejected, p.Path))
			status = exitError
		}
		if p.Partial != nil { // among the warnings: what was read before it was sent
			status = exitError
		}
	}
	if err != nil {
		return fail(stderr, err)
	}
	return status
}

// otlpFlags are the flags that say where profiles go and whose they are,
// shared by push and record.
type otlpFlags struct {
	url, service, host string
}

func (f *otlpFlags) registerEndpoint(fs *flag.FlagSet) {
	fs.StringVar(&f.url, "otlp", "", "send OTLP profiles to `URL`: http://HOST:PORT (OTLP/HTTP) or grpc://HOST:PORT (OTLP/gRPC) of an OpenTelemetry Collector")
	fs.StringVar(&f.service, "service", "", "the profiles' service.name `NAME` (default: the program's name)")
	fs.StringVar(&f.host, "host-name", "", "the profiles' host.name `NAME` (default: the recording's host name; record: this machine's)")
}

// endpoint parses --otlp.
func (f *otlpFlags) endpoint() (otlpsend.Endpoint, error) {
	if f.url == "" {
		return otlpsend.Endpoint{}, fmt.Errorf("--otlp URL is required (http://HOST:PORT or grpc://HOST:PORT)")
	}
	ep, err := otlpsend.ParseEndpoint(f.url)
	if err != nil {
		return ep, fmt.Errorf("--otlp: %w", err)
	}
	return ep, nil
}

// names are the resource names of the flags.
func (f *otlpFlags) names() otlpsend.Names {
	return otlpsend.Names{Service: f.service, Host: f.host, Version: version}
}
