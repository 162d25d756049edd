// Command leafcalls calls main.leaf exactly 3 × n times from two
// functions, through Go's register ABI, for the exact source's Go test:
//
//	leafcalls N
//
// (a count, not a time: exact counts are compared with N).
package main

import (
	"fmt"
	"os"
	"strconv"
)

var sink int

//go:noinline
func leaf(x int) int { sink += x; return x + 1 }

//go:noinline
func twice(x int) int { return leaf(x) + leaf(x+1) }

func main() {
	n, _ := strconv.Atoi(os.Args[1])
	for i := 0; i < n; i++ {
		sink += twice(i) + leaf(i)
	}
	fmt.Println(sink)
}
