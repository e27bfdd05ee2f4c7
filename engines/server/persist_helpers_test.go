package server

import (
	"bufio"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"
)

// pconn is a minimal RESP2 client: cheap enough to drive hundreds of crash trials, and it
// sees exactly which replies arrived before a connection died.
type pconn struct {
	nc net.Conn
	br *bufio.Reader
	bw *bufio.Writer
}

func pdial(addr string) (*pconn, error) {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	return &pconn{nc: nc, br: bufio.NewReader(nc), bw: bufio.NewWriter(nc)}, nil
}

func mustPDial(t testing.TB, addr string) *pconn {
	t.Helper()
	c, err := pdial(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.nc.Close() })
	return c
}

func (c *pconn) send(args ...string) {
	fmt.Fprintf(c.bw, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(c.bw, "$%d\r\n%s\r\n", len(a), a)
	}
}

// do sends one command and reads its reply: string (simple or bulk), int64, nil, []any, or
// replyErr.
func (c *pconn) do(args ...string) (any, error) {
	c.send(args...)
	if err := c.bw.Flush(); err != nil {
		return nil, err
	}
	return c.read()
}

type replyErr string

func (e replyErr) Error() string { return string(e) }

func (c *pconn) read() (any, error) {
	line, err := c.br.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 3 {
		return nil, fmt.Errorf("short reply line %q", line)
	}
	body := line[1 : len(line)-2]
	switch line[0] {
	case '+':
		return body, nil
	case '-':
		return replyErr(body), nil
	case ':':
		return strconv.ParseInt(body, 10, 64)
	case '$':
		n, _ := strconv.Atoi(body)
		if n < 0 {
			return nil, nil
		}
		b := make([]byte, n+2)
		if _, err := ioReadFull(c.br, b); err != nil {
			return nil, err
		}
		return string(b[:n]), nil
	case '*':
		n, _ := strconv.Atoi(body)
		if n < 0 {
			return nil, nil
		}
		out := make([]any, n)
		for i := range out {
			if out[i], err = c.read(); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("bad reply line %q", line)
}

func ioReadFull(r *bufio.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := r.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// mustDo runs a command that must not fail.
func (c *pconn) mustDo(t testing.TB, args ...string) any {
	t.Helper()
	v, err := c.do(args...)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	if e, ok := v.(replyErr); ok {
		t.Fatalf("%v: %v", args, e)
	}
	return v
}
