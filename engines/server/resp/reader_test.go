package resp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
)

func TestReadCommand(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		unauth bool
		want   [][]string // commands read before the error (or EOF)
		err    error      // nil means io.EOF after want
	}{
		{"multibulk", "*2\r\n$4\r\nPING\r\n$2\r\nhi\r\n", false, [][]string{{"PING", "hi"}}, nil},
		{"pipelined", "*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nPING\r\n", false, [][]string{{"PING"}, {"PING"}}, nil},
		{"empty bulk", "*2\r\n$4\r\nECHO\r\n$0\r\n\r\n", false, [][]string{{"ECHO", ""}}, nil},
		{"zero and negative count skipped", "*0\r\n*-1\r\n*1\r\n$1\r\nA\r\n", false, [][]string{{"A"}}, nil},
		{"inline", "SET k \"a b\"\r\nGET k\n", false, [][]string{{"SET", "k", "a b"}, {"GET", "k"}}, nil},
		{"inline escapes", "ECHO \"\\x41\\n\" 'it\\'s'\r\n", false, [][]string{{"ECHO", "A\n", "it's"}}, nil},
		{"blank inline lines skipped", "\r\n  \r\nPING\r\n", false, [][]string{{"PING"}}, nil},
		{"binary bulk", "*1\r\n$3\r\na\r\n\r\n", false, [][]string{{"a\r\n"}}, nil},
		{"bad count", "*x\r\n", false, nil, ErrInvalidMultibulkLen},
		{"leading zero count", "*01\r\n", false, nil, ErrInvalidMultibulkLen},
		{"huge count", "*2147483648\r\n", false, nil, ErrInvalidMultibulkLen},
		{"expected dollar", "*1\r\n:3\r\n", false, nil, ProtocolError("expected '$', got ':'")},
		{"negative bulk", "*1\r\n$-1\r\n", false, nil, ErrInvalidBulkLen},
		{"bulk over limit", "*1\r\n$536870913\r\n", false, nil, ErrInvalidBulkLen},
		{"unbalanced quotes", "ECHO \"abc\r\n", false, nil, ErrUnbalancedQuotes},
		{"quote followed by text", "ECHO \"a\"b\r\n", false, nil, ErrUnbalancedQuotes},
		{"unauth count", "*11\r\n", true, nil, ErrUnauthMultibulkLen},
		{"unauth bulk", "*1\r\n$16385\r\n", true, nil, ErrUnauthBulkLen},
		{"error after good command", "*1\r\n$4\r\nPING\r\n*z\r\n", false, [][]string{{"PING"}}, ErrInvalidMultibulkLen},
		{"inline too big", strings.Repeat("a", InlineMaxSize+1), false, nil, ErrTooBigInline},
		{"count line too big", "*" + strings.Repeat("1", InlineMaxSize+1), false, nil, ErrTooBigMultibulk},
		{"bulk count line too big", "*1\r\n$" + strings.Repeat("1", InlineMaxSize+1), false, nil, ErrTooBigBulkCount},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Feed one byte at a time to exercise partial reads.
			var src io.Reader = strings.NewReader(tc.in)
			if len(tc.in) < 1000 {
				src = &oneByteReader{r: src}
			}
			r := NewReader(src)
			r.Unauthenticated = tc.unauth
			var got [][]string
			var err error
			for {
				var args [][]byte
				args, err = r.ReadCommand()
				if err != nil {
					break
				}
				var cmd []string
				for _, a := range args {
					cmd = append(cmd, string(a))
				}
				got = append(got, cmd)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got commands %q, want %q", got, tc.want)
			}
			for i := range got {
				if strings.Join(got[i], "\x00") != strings.Join(tc.want[i], "\x00") {
					t.Fatalf("command %d = %q, want %q", i, got[i], tc.want[i])
				}
			}
			want := tc.err
			if want == nil {
				want = io.EOF
			}
			if !errors.Is(err, want) {
				t.Fatalf("err = %v, want %v", err, want)
			}
		})
	}
}

type oneByteReader struct{ r io.Reader }

func (o *oneByteReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	return o.r.Read(p[:1])
}

func TestProtocolErrorText(t *testing.T) {
	if got := errExpectedDollar('x').Error(); got != "ERR Protocol error: expected '$', got 'x'" {
		t.Fatalf("got %q", got)
	}
	if got := ErrInvalidMultibulkLen.Error(); got != "ERR Protocol error: invalid multibulk length" {
		t.Fatalf("got %q", got)
	}
}

func TestAppendValue(t *testing.T) {
	tests := []struct {
		v     any
		resp2 string
		resp3 string
	}{
		{nil, "$-1\r\n", "_\r\n"},
		{NullArray, "*-1\r\n", "_\r\n"},
		{OK, "+OK\r\n", "+OK\r\n"},
		{Error("ERR x\ny"), "-ERR x y\r\n", "-ERR x y\r\n"},
		{42, ":42\r\n", ":42\r\n"},
		{"ab", "$2\r\nab\r\n", "$2\r\nab\r\n"},
		{Array{1, "a"}, "*2\r\n:1\r\n$1\r\na\r\n", "*2\r\n:1\r\n$1\r\na\r\n"},
		{Map{"k", 1}, "*2\r\n$1\r\nk\r\n:1\r\n", "%1\r\n$1\r\nk\r\n:1\r\n"},
		{Set{"a"}, "*1\r\n$1\r\na\r\n", "~1\r\n$1\r\na\r\n"},
		{Push{"message", "c", "m"}, "*3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$1\r\nm\r\n", ">3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$1\r\nm\r\n"},
		{Double(1.5), "$3\r\n1.5\r\n", ",1.5\r\n"},
		{Bool(true), ":1\r\n", "#t\r\n"},
		{Verbatim("hi"), "$2\r\nhi\r\n", "=6\r\ntxt:hi\r\n"},
		{[][]byte{[]byte("x")}, "*1\r\n$1\r\nx\r\n", "*1\r\n$1\r\nx\r\n"},
	}
	for _, tc := range tests {
		if got := string(AppendValue(nil, tc.v, 2)); got != tc.resp2 {
			t.Errorf("RESP2 %#v = %q, want %q", tc.v, got, tc.resp2)
		}
		if got := string(AppendValue(nil, tc.v, 3)); got != tc.resp3 {
			t.Errorf("RESP3 %#v = %q, want %q", tc.v, got, tc.resp3)
		}
	}
}

// FuzzReader checks that the reader never panics, never returns an argument that is not in
// the input, and that a well-formed re-encoding of what it read parses back identically.
func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"*2\r\n$4\r\nPING\r\n$2\r\nhi\r\n", "PING\r\n", "SET a \"b c\"\r\n", "*1\r\n$-1\r\n",
		"*x\r\n", "ECHO 'a\\'b'\r\n", "*3\r\n$1\r\na\r\n$0\r\n\r\n$1\r\nb\r\n", "\"\\x4", "*1\r\n:1\r\n",
		// Hostile inputs: NULs before a newline, a huge announced count and bulk,
		// an HTTP request.
		strings.Repeat("\x00", 64) + "\r\nPING\r\n", "*2147483647\r\n$1\r\nx\r\n$1\r\ny\r\n",
		"*2\r\n$3\r\nSET\r\n$536870912\r\nx", "POST / HTTP/1.1\r\nHost: x\r\n\r\nSET a b\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		r := NewReader(bytes.NewReader(in))
		var cmds [][][]byte
		for i := 0; i < 1000; i++ {
			args, err := r.ReadCommand()
			if err != nil {
				if err != io.EOF && !IsProtocolError(err) {
					t.Fatalf("unexpected error type %T: %v", err, err)
				}
				break
			}
			if len(args) == 0 {
				t.Fatal("empty command returned")
			}
			cp := make([][]byte, len(args))
			for j, a := range args {
				cp[j] = append([]byte(nil), a...)
			}
			cmds = append(cmds, cp)
		}
		var enc []byte
		for _, c := range cmds {
			enc = AppendArrayLen(enc, len(c))
			for _, a := range c {
				enc = AppendBulk(enc, a)
			}
		}
		r2 := NewReader(bytes.NewReader(enc))
		for i, want := range cmds {
			got, err := r2.ReadCommand()
			if err != nil {
				t.Fatalf("re-read command %d: %v", i, err)
			}
			if len(got) != len(want) {
				t.Fatalf("re-read command %d has %d args, want %d", i, len(got), len(want))
			}
			for j := range got {
				if !bytes.Equal(got[j], want[j]) {
					t.Fatalf("re-read command %d arg %d = %q, want %q", i, j, got[j], want[j])
				}
			}
		}
	})
}

func TestReaderShrinksAfterHugeArgument(t *testing.T) {
	big := strings.Repeat("x", 4<<20)
	in := "*2\r\n$3\r\nSET\r\n$" + fmt.Sprint(len(big)) + "\r\n" + big + "\r\n*1\r\n$4\r\nPING\r\n"
	r := NewReader(strings.NewReader(in))
	if args, err := r.ReadCommand(); err != nil || len(args[1]) != len(big) {
		t.Fatalf("big command: %v", err)
	}
	if args, err := r.ReadCommand(); err != nil || string(args[0]) != "PING" {
		t.Fatalf("after big command: %q %v", args, err)
	}
	r.ReadCommand() // EOF; the buffer is empty now
	if len(r.buf) > 1<<20 {
		t.Fatalf("buffer still %d bytes", len(r.buf))
	}
}

// TestReaderGrowsToTheArgument: a large argument arriving in pieces grows the buffer by
// doubling, but to no more than the command needs (a 150 MB SET left a 256 MB buffer); the
// buffer goes once the command is consumed.
func TestReaderGrowsToTheArgument(t *testing.T) {
	for _, size := range []int{3 << 20, 40<<20 + 17} {
		big := strings.Repeat("x", size)
		in := "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$" + fmt.Sprint(size) + "\r\n" + big + "\r\n"
		r := NewReader(&chunkReader{b: []byte(in), n: 64 << 10})
		args, err := r.ReadCommand()
		if err != nil || len(args[2]) != size {
			t.Fatalf("%d: %v", size, err)
		}
		if len(r.buf) > len(in)+64<<10 {
			t.Errorf("a %d-byte command left a %d-byte buffer", len(in), len(r.buf))
		}
		r.ReadCommand() // EOF: consumed
		if len(r.buf) > 1<<20 {
			t.Errorf("buffer still %d bytes after the command", len(r.buf))
		}
		// Nor kept through the argument slices of the last command (the reader reuses their
		// array): they pinned the 150 MB buffer of a SET after the next command.
		for i, a := range r.args[:cap(r.args)] {
			if len(a) > 1<<20 {
				t.Errorf("args[%d] still holds %d bytes of the old buffer", i, len(a))
			}
		}
	}
}

// TestReaderAdopt: a large argument that fills the buffer is handed over: the reader goes on
// in a fresh buffer (with the pipelined commands after it) and never writes the old one
// again; a small one, or one not from the reader, is refused.
func TestReaderAdopt(t *testing.T) {
	big := strings.Repeat("v", 3<<20)
	in := "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$" + fmt.Sprint(len(big)) + "\r\n" + big + "\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n*1\r\n$4\r\nPING\r\n"
	r := NewReader(&chunkReader{b: []byte(in), n: 1 << 20})
	args, err := r.ReadCommand()
	if err != nil || len(args) != 3 {
		t.Fatalf("%q %v", args, err)
	}
	if r.Adopt(args[1]) || r.Adopt([]byte(big)) {
		t.Fatal("adopted a small argument, or one not in the buffer")
	}
	val := args[2]
	if !r.Adopt(val) {
		t.Fatal("did not adopt a 3 MB argument filling the buffer")
	}
	for _, want := range []string{"GET", "PING"} {
		a, err := r.ReadCommand()
		if err != nil || string(a[0]) != want {
			t.Fatalf("after adopting: %q %v, want %s", a, err, want)
		}
	}
	if string(val) != big {
		t.Fatal("the adopted value changed")
	}
}

// TestReaderManyArgumentsGrowLinearly: a command of many arguments arriving in pieces grows the
// buffer by doubling. Capping the growth at the pending argument's end (right for one huge
// argument) grew it an argument at a time and copied it each time: 2,048 arguments of 4 KB
// took seconds under -race (8.6 GB allocated). Bound: bytes allocated at most 5x the command.
func TestReaderManyArgumentsGrowLinearly(t *testing.T) {
	var b strings.Builder
	b.WriteString("*2049\r\n$5\r\nRPUSH\r\n")
	arg := strings.Repeat("b", 4096)
	for range 2048 {
		b.WriteString("$4096\r\n" + arg + "\r\n")
	}
	in := b.String()
	r := NewReader(&chunkReader{b: []byte(in), n: 64 << 10})
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	args, err := r.ReadCommand()
	runtime.ReadMemStats(&m1)
	if err != nil || len(args) != 2049 {
		t.Fatalf("%d args, %v", len(args), err)
	}
	if got := m1.TotalAlloc - m0.TotalAlloc; got > uint64(5*len(in)) {
		t.Errorf("%d bytes allocated reading a %d-byte command", got, len(in))
	}
}
