module github.com/hwprof/hwprof

go 1.26.0

require (
	github.com/go-delve/delve v1.27.2
	github.com/ianlancetaylor/demangle v0.0.0-20260724033716-83e58baca724
	github.com/klauspost/compress v1.20.3
	golang.org/x/arch v0.32.0
	golang.org/x/sys v0.49.0
)
