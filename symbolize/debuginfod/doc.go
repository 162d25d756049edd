// Package debuginfod fetches debug files by build-id from debuginfod
// servers (the protocol of elfutils' debuginfod: GET
// URL/buildid/HEX/debuginfo), keeping them in the cache debuginfod-client
// keeps (CACHE/HEX/debuginfo, by default ~/.cache/debuginfod_client), so
// that hwprof, gdb and perf share what any of them fetched.
//
// [FromEnv] reads the client's settings as debuginfod-client does:
// DEBUGINFOD_URLS (servers, space-separated), DEBUGINFOD_CACHE_PATH and
// DEBUGINFOD_TIMEOUT. Offline, it reads the cache alone. A server that
// does not answer within the timeout, or answers with an error, is asked
// nothing more for the rest of the run, and said once ([Client.Warnings]):
// a server that is down or slow costs at most one timeout per server, never
// a hang. A build-id a server does not have (404) is remembered in the
// cache for ten minutes, as debuginfod-client does.
//
// What a server sends is untrusted: it is written to a temporary file in
// the cache, bounded in size (MaxSize), and renamed into place only when
// whole; the caller checks that the file has the build-id it asked for
// (package symbolize does) and opens it through package internal/safefile.
// The client is safe for concurrent use and starts no goroutines of its
// own beyond net/http's.
package debuginfod
