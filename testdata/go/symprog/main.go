// A Go test program for package symbolize.
package main

import (
	"fmt"
	"os"
)

func small(a, b int) int { return a*31 ^ (b + 7) }

//go:noinline
func hot(n int) int {
	acc := 0
	for i := 0; i < n; i++ {
		acc += small(acc, i)
	}
	return acc
}

//go:noinline
func depth(n int) int {
	if n == 0 {
		return hot(100)
	}
	return depth(n-1) + 1
}

func main() {
	fmt.Println(depth(len(os.Args) + 10))
}
