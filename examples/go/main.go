// A pairbench worker in Go, standard library only: it speaks the protocol of
// pairbench's docs/worker-protocol.md over the two pipes pairbench hands it.
//
//	go build -o worker .
//	pairbench bench ./worker
//
// To compare two versions, build each into its own binary
// (`go build -o worker-old .`, edit, `go build -o worker-new .`) and run
// `pairbench bench ./worker-old ./worker-new`. `./worker --list` names the
// benchmarks.
package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

const (
	fdsVariable   = "PAIRBENCH_WORKER_FDS"
	maxLineBytes  = 4096 // a protocol line with its newline
	maxIterations = 1 << 40
	rusageThread  = 1 // RUSAGE_THREAD on Linux; the syscall package does not name it
	threadCPUTime = 3 // CLOCK_THREAD_CPUTIME_ID on Linux
)

// The thread's resource usage is only this benchmark's if the goroutine that
// runs it stays on one OS thread: lock main's goroutine to the main thread.
func init() { runtime.LockOSThread() }

// ------------------------------------------------------------------ benchmarks

// A benchmark's run does its untimed setup, then returns what measure says of
// the timed loop (or an error).
type benchmark struct {
	name string
	run  func(iterations uint64) (sample, error)
}

// sink keeps results: the compiler cannot drop a store to a package variable.
var sink uint64

func benchmarks() []benchmark {
	all := []benchmark{{"checksum", func(iterations uint64) (sample, error) {
		data := make([]byte, 64*1024) // setup
		for i := range data {
			data[i] = byte(i*131 + 7)
		}
		return measure(iterations, func() { sink = fnv1a(data) }), nil
	}}}
	// One base name, several sizes: pairbench shows n as a parameter.
	for _, n := range []uint64{1000, 100000} {
		n := n
		all = append(all, benchmark{fmt.Sprintf("sum[n=%d]", n), func(iterations uint64) (sample, error) {
			return measure(iterations, func() {
				total := uint64(0)
				for i := uint64(0); i < n; i++ {
					total += i ^ (i >> 3)
				}
				sink = total
			}), nil
		}})
	}
	all = append(all, benchmark{"sort[n=1000]", func(iterations uint64) (sample, error) {
		input := make([]uint32, 1000)
		for i := range input {
			input[i] = uint32(i) * 2654435761
		}
		work := make([]uint32, len(input))
		return measure(iterations, func() {
			copy(work, input) // each iteration sorts the same shuffled data
			slices.Sort(work)
			sink = uint64(work[0])
		}), nil
	}})
	return all
}

func fnv1a(data []byte) uint64 {
	hash := uint64(0xcbf29ce484222325)
	for _, b := range data {
		hash = (hash ^ uint64(b)) * 0x100000001b3
	}
	return hash
}

// ------------------------------------------------------------------- measuring

// A sample is an ok reply's fields; the usage fields are absent (haveUsage
// false) when the thread's usage cannot be read.
type sample struct {
	ns                                       uint64
	haveUsage                                bool
	userNs, sysNs, vcs, ivcs, minflt, majflt uint64
	maxrssKib                                uint64
}

// measure runs body iterations times between two readings of the monotonic
// clock (time.Now carries one); the thread's CPU clock is read just outside
// them, and its usage just outside those.
func measure(iterations uint64, body func()) sample {
	var before, after syscall.Rusage
	_, errBefore := threadUsage(&before)
	cpuStart, _ := threadCPUNs()
	start := time.Now()
	for i := uint64(0); i < iterations; i++ {
		body()
	}
	elapsed := time.Since(start)
	cpuStop, errAfter := threadUsage(&after)

	s := sample{ns: nonNegative(int64(elapsed))}
	if errBefore == nil && errAfter == nil {
		// the total is the thread CPU clock's (exact); the system part is
		// getrusage's tick-sampled share, at most the total; user the rest
		cpu := delta(int64(cpuStop), int64(cpuStart))
		s.haveUsage = true
		s.sysNs = min(delta(after.Stime.Nano(), before.Stime.Nano()), cpu)
		s.userNs = cpu - s.sysNs
		s.vcs = delta(int64(after.Nvcsw), int64(before.Nvcsw))
		s.ivcs = delta(int64(after.Nivcsw), int64(before.Nivcsw))
		s.minflt = delta(int64(after.Minflt), int64(before.Minflt))
		s.majflt = delta(int64(after.Majflt), int64(before.Majflt))
	}
	var self syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &self) == nil {
		s.maxrssKib = nonNegative(int64(self.Maxrss)) // KiB on Linux
	}
	return s
}

// threadCPUNs is the CPU time this thread has run. Reading it also brings the
// kernel's account of the thread up to date: getrusage(RUSAGE_THREAD) alone
// returns the runtime as of the thread's last tick or context switch, which
// around a ~1 ms sample misses most of it.
func threadCPUNs() (uint64, error) {
	var t syscall.Timespec
	_, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, threadCPUTime, uintptr(unsafe.Pointer(&t)), 0)
	if errno != 0 {
		return 0, errno
	}
	return nonNegative(t.Nano()), nil
}

// threadUsage reads the thread's usage with its CPU time up to date, and the
// CPU clock it read first.
func threadUsage(usage *syscall.Rusage) (uint64, error) {
	cpu, err := threadCPUNs()
	if err != nil {
		return 0, err
	}
	return cpu, syscall.Getrusage(rusageThread, usage)
}

func nonNegative(v int64) uint64 {
	if v < 0 {
		return 0
	}
	return uint64(v)
}

func delta(after, before int64) uint64 { return nonNegative(after - before) }

func formatOK(s sample) string {
	line := fmt.Sprintf("ok ns=%d", s.ns)
	if s.haveUsage {
		line += fmt.Sprintf(" user_ns=%d sys_ns=%d vcs=%d ivcs=%d minflt=%d majflt=%d",
			s.userNs, s.sysNs, s.vcs, s.ivcs, s.minflt, s.majflt)
	}
	if s.maxrssKib > 0 {
		line += fmt.Sprintf(" maxrss_kib=%d", s.maxrssKib)
	}
	return line
}

// -------------------------------------------------------------------- protocol

func die(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "pairbench worker: "+format+"\n", args...)
	os.Exit(2)
}

// formatError is `error MESSAGE`, with anything but printable ASCII shown as
// \xNN so that text from a request cannot break the reply line.
func formatError(message string) string {
	var b strings.Builder
	b.WriteString("error ")
	for i := 0; i < len(message) && i < 1000; i++ {
		if c := message[i]; c >= ' ' && c <= '~' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, `\x%02x`, c)
		}
	}
	return b.String()
}

// parseIterations accepts 1 to 19 decimal digits (no sign) within 1..2^40.
func parseIterations(text string) (uint64, bool) {
	if len(text) == 0 || len(text) > 19 || strings.Trim(text, "0123456789") != "" {
		return 0, false
	}
	value, err := strconv.ParseUint(text, 10, 64)
	return value, err == nil && value >= 1 && value <= maxIterations
}

// reply answers one request line (without its newline); quit is true for `quit`.
func reply(line string, all []benchmark) (text string, quit bool) {
	words := strings.Split(line, " ")
	switch {
	case line == "quit":
		return "", true
	case line == "list":
		lines := []string{fmt.Sprintf("benchmarks %d", len(all))}
		for _, b := range all {
			lines = append(lines, "benchmark "+b.name)
		}
		return strings.Join(lines, "\n"), false
	case len(words) == 3 && words[0] == "run":
		return runOne(words[1], words[2], all), false
	}
	return formatError("unknown request: " + line), false
}

func runOne(name, count string, all []benchmark) string {
	for _, b := range all {
		if b.name != name {
			continue
		}
		iterations, ok := parseIterations(count)
		if !ok {
			return formatError("the iteration count must be a whole number from 1 to 2^40, not " + count)
		}
		s, err := b.run(iterations)
		if err != nil {
			return formatError(err.Error())
		}
		return formatOK(s)
	}
	return formatError("no such benchmark: " + name)
}

// takeFd checks one descriptor of R,W and marks it close-on-exec, so that
// nothing the benchmarks start inherits the pipe.
func takeFd(text, role string) *os.File {
	if len(text) == 0 || len(text) > 9 || strings.Trim(text, "0123456789") != "" {
		die("%s must be R,W (two file descriptors in decimal)", fdsVariable)
	}
	fd, _ := strconv.Atoi(text)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		die("%s names %d, which is not an open file descriptor", fdsVariable, fd)
	}
	syscall.CloseOnExec(fd)
	return os.NewFile(uintptr(fd), role)
}

func openPipes() (requests, replies *os.File) {
	fds, ok := os.LookupEnv(fdsVariable)
	if !ok {
		fmt.Fprintf(os.Stderr, "%[1]s is a pairbench worker: run its benchmarks with "+
			"`pairbench bench %[1]s` (`%[1]s --list` names them)\n", os.Args[0])
		os.Exit(2)
	}
	r, w, found := strings.Cut(fds, ",")
	if !found {
		die("%s must be R,W (two file descriptors in decimal)", fdsVariable)
	}
	if r == w {
		die("%s names the same descriptor twice", fdsVariable)
	}
	requests, replies = takeFd(r, "requests"), takeFd(w, "replies")
	os.Unsetenv(fdsVariable) // nothing the benchmarks start should see it
	return requests, replies
}

func main() {
	all := benchmarks()
	switch {
	case len(os.Args) == 2 && os.Args[1] == "--list":
		for _, b := range all {
			fmt.Println(b.name)
		}
		return
	case len(os.Args) > 1:
		die("unknown argument (the only one is --list): %s", os.Args[1])
	}
	requests, replies := openPipes()
	send := func(text string) {
		// os.File.Write writes everything or fails, retrying EINTR; a write to
		// a closed pipe other than stdout/stderr is an EPIPE error, not a kill.
		if _, err := io.WriteString(replies, text+"\n"); err != nil {
			die("cannot write a reply (pairbench is gone?): %v", err)
		}
	}
	send("pairbench-worker 1")
	// A buffer of one line's size: ReadSlice fails with ErrBufferFull on a longer one.
	reader := bufio.NewReaderSize(requests, maxLineBytes)
	for {
		line, err := reader.ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			die("a request is longer than 4096 bytes")
		case errors.Is(err, io.EOF) && len(line) == 0:
			return // pairbench has gone
		case errors.Is(err, io.EOF):
			die("the request pipe ended inside a line")
		case err != nil:
			die("cannot read requests: %v", err)
		}
		text, quit := reply(string(line[:len(line)-1]), all)
		if quit {
			return
		}
		send(text)
	}
}
