package resp

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
)

// chunkReader hands out its input in pieces of at most n bytes, then io.EOF.
type chunkReader struct {
	b []byte
	n int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	k := min(len(p), c.n, len(c.b))
	copy(p, c.b[:k])
	c.b = c.b[k:]
	return k, nil
}

// TestUnfinishedMultibulkIsLinear: a command of n one-byte arguments arriving a few bytes at a
// time costs the parser O(n) bytes examined, not O(n^2) (it used to re-parse the command from
// its start on every read). The count of bytes examined does not depend on the machine's load.
func TestUnfinishedMultibulkIsLinear(t *testing.T) {
	work := func(n int) int64 {
		var b strings.Builder
		b.WriteString("*2147483647\r\n")
		for i := 0; i < n; i++ {
			b.WriteString("$1\r\nx\r\n")
		}
		r := NewReader(&chunkReader{b: []byte(b.String()), n: 7})
		if _, err := r.ReadCommand(); err != io.EOF {
			t.Fatalf("n=%d: err = %v, want EOF (the command never completes)", n, err)
		}
		return r.work
	}
	n := 25_000
	w1, w4 := work(n), work(4*n)
	ratio := float64(w4) / float64(w1)
	t.Logf("bytes examined: %d for %d args, %d for %d args (ratio %.2f; 4 is linear, 16 quadratic)", w1, n, w4, 4*n, ratio)
	if ratio > 6 {
		t.Fatalf("parsing work grows %.1fx for 4x the arguments: not linear", ratio)
	}
	if per := float64(w4) / float64(4*n*7); per > 4 {
		t.Fatalf("%.1f bytes examined per byte received", per)
	}
}

// TestAnnouncedBulkNotReserved: a bulk length announced but not sent does not make the reader
// allocate it; the buffer grows with the bytes that arrive.
func TestAnnouncedBulkNotReserved(t *testing.T) {
	in := "*2\r\n$3\r\nSET\r\n$536870912\r\n" + strings.Repeat("x", 100_000)
	r := NewReader(&chunkReader{b: []byte(in), n: 4096})
	if _, err := r.ReadCommand(); err != io.EOF {
		t.Fatalf("err = %v, want EOF", err)
	}
	if len(r.buf) > 1<<20 {
		t.Fatalf("reader holds %d bytes for %d received", len(r.buf), len(in))
	}
}

// TestHostileInputs: Redis 7.0.15's exact error text, and NUL bytes in an inline request
// (Redis looks for the newline with strchr, which stops at the first NUL, so it waits for more).
func TestHostileInputs(t *testing.T) {
	if got := ErrTooBigMultibulk.Error(); got != "ERR Protocol error: too big mbulk count string" {
		t.Fatalf("got %q", got)
	}
	for _, in := range []string{strings.Repeat("\x00", 64), strings.Repeat("\x00", 64) + "\r\nPING\r\n", "PI\x00NG\r\n"} {
		r := NewReader(strings.NewReader(in))
		args, err := r.ReadCommand()
		if !errors.Is(err, io.EOF) {
			t.Fatalf("%q: got %q, %v; want to wait for more (EOF)", in, args, err)
		}
	}
	r := NewReader(strings.NewReader(strings.Repeat("\x00", InlineMaxSize+1) + "\n"))
	if _, err := r.ReadCommand(); !errors.Is(err, ErrTooBigInline) {
		t.Fatalf("64 KB of NULs: %v, want %v", err, ErrTooBigInline)
	}
}

// TestAnnouncedBulkGrowsWithArrivals: while a huge announced bulk arrives, the buffer holds at
// most about twice what arrived, and the bytes allocated on the way (the doublings) at most 4x.
// Fill asked room for as much as had arrived, so the buffer doubled once half full: 40 MB of a
// 512 MB bulk held 128 MB (3.2x) and allocated 256 MB.
func TestAnnouncedBulkGrowsWithArrivals(t *testing.T) {
	const head = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$536870912\r\n"
	for _, sent := range []int{100 << 10, 1<<20 + 1, 8<<20 + 1, 40 << 20} {
		t.Run(fmt.Sprint(sent), func(t *testing.T) {
			in := append([]byte(head), make([]byte, sent)...)
			r := NewReader(&chunkReader{b: in, n: 64 << 10})
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			if _, err := r.ReadCommand(); err != io.EOF {
				t.Fatalf("err = %v, want EOF", err)
			}
			runtime.ReadMemStats(&m1)
			if r.w != len(in) {
				t.Fatalf("read %d of %d bytes", r.w, len(in))
			}
			if len(r.buf) > 2*len(in)+4096 {
				t.Errorf("buffer of %d bytes for %d received", len(r.buf), len(in))
			}
			if got := m1.TotalAlloc - m0.TotalAlloc; got > uint64(4*len(in)+(1<<20)) {
				t.Errorf("%d bytes allocated for %d received", got, len(in))
			}
		})
	}
}

// TestArgsForgetEarlierCommands: once a command is parsed, no slot of the reader's argument
// list refers to an earlier command's arguments. A shorter command left them there, so a value
// SET had adopted (Adopt: a 150 MB query buffer) stayed reachable after a DEL of it; RSS 10 s
// after the DEL was 174 MB, Redis 12.
func TestArgsForgetEarlierCommands(t *testing.T) {
	in := "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nvalue\r\n*2\r\n$3\r\nDEL\r\n$1\r\nk\r\n*1\r\n$4\r\nPING\r\n"
	r := NewReader(strings.NewReader(in))
	for i := range 3 {
		args, err := r.ReadCommand()
		if err != nil {
			t.Fatal(err)
		}
		for j, a := range r.args[len(args):cap(r.args)] {
			if a != nil {
				t.Fatalf("after command %d, slot %d holds %q", i+1, len(args)+j, a)
			}
		}
	}
}

// TestBigArgumentGrowthAllocs: a large argument arriving in pieces grows the buffer along the
// halvings of the command's end, so the buffers allocated on the way add up to at most twice
// the command. Doubling from 16 KB allocated powers of two short of it and then the command:
// 3.2x for 40 MB (a 150 MB SET peaked at 330-366 MB of RSS, now 296-324; Redis, reserving the
// announced length, 162).
func TestBigArgumentGrowthAllocs(t *testing.T) {
	size := 40<<20 + 17
	in := append([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$"+fmt.Sprint(size)+"\r\n"), make([]byte, size+2)...)
	copy(in[len(in)-2:], "\r\n")
	r := NewReader(&chunkReader{b: in, n: 64 << 10})
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	if args, err := r.ReadCommand(); err != nil || len(args[2]) != size {
		t.Fatalf("%v", err)
	}
	runtime.ReadMemStats(&m1)
	if got := m1.TotalAlloc - m0.TotalAlloc; got > uint64(2*len(in)+(64<<10)) {
		t.Errorf("%d bytes allocated for a %d-byte command (%.2fx)", got, len(in), float64(got)/float64(len(in)))
	}
}
