// The Go workload of benchmarks/suites.py: BenchmarkChain, a dependent chain of `work` 64-bit
// multiply-adds per iteration, set at build time: go test -c -ldflags "-X example.com/pairbench/gochain.work=1010".
package gochain

import (
	"strconv"
	"testing"
)

var (
	work = "1000"
	sink uint64
)

func BenchmarkChain(b *testing.B) {
	n, _ := strconv.Atoi(work)
	x := uint64(1)
	for i := 0; i < b.N; i++ {
		for j := 0; j < n; j++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	sink = x
}
