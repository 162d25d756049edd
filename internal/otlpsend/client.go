package otlpsend

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// HTTPPath is where an OTLP/HTTP endpoint takes profiles (the
// v1development protocol).
const HTTPPath = "/v1development/profiles"

// Endpoint is where profiles are sent.
type Endpoint struct {
	GRPC   bool   // OTLP/gRPC; else OTLP/HTTP
	Target string // HOST:PORT for gRPC, the full URL for HTTP
}

func (e Endpoint) String() string {
	if e.GRPC {
		return "grpc://" + e.Target
	}
	return e.Target
}

// ParseEndpoint parses http://HOST:PORT[/PATH], https://… or
// grpc://HOST:PORT. Without a path an HTTP endpoint gets HTTPPath.
func ParseEndpoint(s string) (Endpoint, error) {
	u, err := url.Parse(s)
	if err != nil {
		return Endpoint{}, fmt.Errorf("endpoint %q: %w", s, err)
	}
	if u.Host == "" {
		return Endpoint{}, fmt.Errorf("endpoint %q: no host (give http://HOST:PORT or grpc://HOST:PORT)", s)
	}
	switch u.Scheme {
	case "grpc":
		if u.Path != "" && u.Path != "/" {
			return Endpoint{}, fmt.Errorf("endpoint %q: a gRPC endpoint has no path", s)
		}
		return Endpoint{GRPC: true, Target: u.Host}, nil
	case "http", "https":
		if u.Path == "" || u.Path == "/" {
			u.Path = HTTPPath
		}
		return Endpoint{Target: u.String()}, nil
	}
	return Endpoint{}, fmt.Errorf("endpoint %q: scheme %q is neither http, https nor grpc", s, u.Scheme)
}

// Client sends export requests to one endpoint. It is safe for use by one
// goroutine at a time.
type Client struct {
	ep   Endpoint
	http *http.Client
	conn *grpc.ClientConn
	grpc pprofileotlp.GRPCClient
}

// Dial makes a client of ep; a gRPC connection is made at the first Send.
func Dial(ep Endpoint) (*Client, error) {
	c := &Client{ep: ep}
	if !ep.GRPC {
		c.http = &http.Client{}
		return c, nil
	}
	conn, err := grpc.NewClient(ep.Target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("endpoint %v: %w", ep, err)
	}
	c.conn, c.grpc = conn, pprofileotlp.NewGRPCClient(conn)
	return c, nil
}

// Close closes the client's connections.
func (c *Client) Close() error {
	if c.conn != nil {
		return c.conn.Close()
	}
	c.http.CloseIdleConnections()
	return nil
}

// Result is what the endpoint said of a request it took.
type Result struct {
	Rejected int64  // profiles it refused (partial success)
	Message  string // its message about them
}

// Send sends one export request, as ExportRequest.MarshalProto gives it.
// An error says the request was not taken (network, timeout, non-2xx
// answer): it may be sent again.
func (c *Client) Send(ctx context.Context, req []byte) (Result, error) {
	if c.ep.GRPC {
		return c.sendGRPC(ctx, req)
	}
	return c.sendHTTP(ctx, req)
}

func (c *Client) sendGRPC(ctx context.Context, body []byte) (Result, error) {
	req := pprofileotlp.NewExportRequest()
	if err := req.UnmarshalProto(body); err != nil {
		return Result{}, fmt.Errorf("send: the request does not decode: %w", err)
	}
	resp, err := c.grpc.Export(ctx, req)
	if err != nil {
		return Result{}, fmt.Errorf("send to %v: %w", c.ep, err)
	}
	ps := resp.PartialSuccess()
	return Result{Rejected: ps.RejectedProfiles(), Message: ps.ErrorMessage()}, nil
}

// maxAnswer bounds the answer read from an HTTP endpoint.
const maxAnswer = 1 << 20

func (c *Client) sendHTTP(ctx context.Context, body []byte) (Result, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.ep.Target, bytes.NewReader(body))
	if err != nil {
		return Result{}, fmt.Errorf("send to %v: %w", c.ep, err)
	}
	hr.Header.Set("Content-Type", "application/x-protobuf")
	resp, err := c.http.Do(hr)
	if err != nil {
		return Result{}, fmt.Errorf("send to %v: %w", c.ep, unwrapURL(err))
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return Result{}, fmt.Errorf("send to %v: reading the answer: %w", c.ep, err)
	}
	if resp.StatusCode/100 != 2 {
		return Result{}, fmt.Errorf("send to %v: %s%s", c.ep, resp.Status, excerpt(answer, resp.Header.Get("Content-Type")))
	}
	r := pprofileotlp.NewExportResponse()
	if len(answer) == 0 || r.UnmarshalProto(answer) != nil {
		return Result{}, nil // taken; an answer we cannot read says nothing more
	}
	ps := r.PartialSuccess()
	return Result{Rejected: ps.RejectedProfiles(), Message: ps.ErrorMessage()}, nil
}

// unwrapURL drops net/url's "Post URL:" prefix, which repeats the
// endpoint the message names already.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// excerpt is a short readable part of an error answer, "" for a binary
// one.
func excerpt(answer []byte, contentType string) string {
	if len(answer) == 0 || strings.Contains(contentType, "protobuf") {
		return ""
	}
	s := strings.Join(strings.Fields(string(answer)), " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return ": " + s
}
