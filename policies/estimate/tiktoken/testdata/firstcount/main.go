// Command firstcount counts the tokens of "hello world" and prints the
// count, or prints 0 without counting when given -n: the smallest process
// that counts, for BenchmarkStartToFirstCount.
package main

import (
	"os"
	"strconv"

	"github.com/ctxsim/ctxsim/policies/estimate/tiktoken"
)

func main() {
	n := 0
	if len(os.Args) < 2 || os.Args[1] != "-n" {
		enc, _ := tiktoken.Get("o200k_base")
		n = enc.Count("hello world")
	}
	os.Stdout.WriteString(strconv.Itoa(n) + "\n")
}
