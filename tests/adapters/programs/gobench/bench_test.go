// Go benchmarks for pairbench's adapter tests (tests/adapters/conftest.py builds them with go test -c):
// -ldflags "-X example.com/pairbench/gobench.work=16000" makes BenchmarkWork's chain eight times as long,
// "-X example.com/pairbench/gobench.crash=yes" makes BenchmarkPanic panic, and
// "-X example.com/pairbench/gobench.grow=yes" makes BenchmarkAlloc allocate 16 bytes more an iteration.
package gobench

import (
	"strconv"
	"testing"
)

var (
	work  = "2000"
	crash = ""
	grow  = ""
	sink  uint64
	kept  []byte
	extra []byte
)

func chain(x uint64, n int) uint64 {
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

func BenchmarkWork(b *testing.B) {
	n, _ := strconv.Atoi(work)
	x := uint64(1)
	for i := 0; i < b.N; i++ {
		x = chain(x, n)
	}
	sink = x
}

func BenchmarkSame(b *testing.B) {
	x := uint64(1)
	for i := 0; i < b.N; i++ {
		x = chain(x, 2000)
	}
	sink = x
}

func BenchmarkAlloc(b *testing.B) {
	for i := 0; i < b.N; i++ {
		kept = make([]byte, 64+i%2)
		if grow != "" {
			extra = make([]byte, 16)
		}
	}
	b.ReportMetric(3, "widgets/op")
}

// BenchmarkGarbage allocates 4 KiB an iteration and keeps only the latest: the heap grows with the
// garbage until Go's collector runs (its first collection waits for a 4 MiB heap), as strconv's
// FormatInt's does, and nothing is retained.
func BenchmarkGarbage(b *testing.B) {
	for i := 0; i < b.N; i++ {
		kept = make([]byte, 4096)
	}
}

func BenchmarkSizes(b *testing.B) {
	for _, n := range []int{100, 400} {
		b.Run("n="+strconv.Itoa(n), func(b *testing.B) {
			x := uint64(1)
			for i := 0; i < b.N; i++ {
				x = chain(x, n)
			}
			sink = x
		})
	}
}

// BenchmarkPanic panics where crash is set; elsewhere it reports a time of 0, which go test prints
// as a line without ns/op (as when its timer does not advance).
func BenchmarkPanic(b *testing.B) {
	if crash != "" {
		panic("the fixture is broken")
	}
	x := uint64(1)
	for i := 0; i < b.N; i++ {
		x = chain(x, 100)
	}
	sink = x
	b.ReportMetric(0, "ns/op")
}
