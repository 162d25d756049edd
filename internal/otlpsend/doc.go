// Package otlpsend sends hwprof's profiles to an OpenTelemetry Collector
// (OTLP profiles, see package report/otlp) and keeps what it cannot send
// yet on disk.
//
//   - Client sends one export request to an endpoint: http://HOST:PORT
//     (OTLP/HTTP, protobuf, POST /v1development/profiles; a URL with a path
//     is used as it is) or grpc://HOST:PORT (OTLP/gRPC, plaintext), each
//     call bounded by the caller's context.
//   - Spool keeps export requests as files in a directory hwprof creates,
//     oldest first, bounded in bytes: a request that does not fit drops the
//     oldest ones (counted). It only ever writes, reads and removes its own
//     regular files (see Spool), so a spool directory left by a run that
//     was killed is taken up again by the next.
//   - A Sender owns one goroutine (started by Start through
//     internal/pipeline.Beside, where the module's goroutines start; ended
//     by Close) that
//     sends the spool's requests oldest first, retrying with exponential
//     backoff while the endpoint is down, slow or refusing (any error or
//     non-2xx answer): Submit only writes to the spool, so a Collector that
//     is away never blocks nor slows the caller (a recording).
//   - Recording and Follow build the requests: Recording of a whole
//     recording (Push sends them: hwprof push), a Follower of a recording
//     being written, one request per interval of the samples added to it
//     since the last, read once each (engine.Follower; hwprof record
//     --otlp). The Follower's goroutine is started by Follow and ended by
//     Stop.
//
// Library code: it never prints; it reports through Options.Warn.
package otlpsend
