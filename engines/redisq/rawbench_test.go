package redisq

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"

	"qbench/engines/server"
)

// BenchmarkReadReply compares ways of reading one XREADGROUP-sized reply (200 entries of 256 B)
// through go-redis: the typed XRangeN, the generic Do, DoRaw (a fresh buffer per reply) and
// DoRawWriteTo into a reused buffer. The server's time is in every figure alike.
func BenchmarkReadReply(b *testing.B) {
	// QBENCH_BENCH_ADDR names a redis-server to read from, so that the client's cost is not
	// drowned by the in-process server's.
	addr := os.Getenv("QBENCH_BENCH_ADDR")
	if addr == "" {
		s := server.New(server.Config{})
		if err := s.Start(); err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		addr = s.Addr()
	}
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2})
	c.Del(ctx, "s")
	defer c.Close()
	payload := bytes.Repeat([]byte("x"), 256)
	for i := 0; i < 200; i++ {
		c.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []any{streamField, payload}})
	}
	conn := c.Conn()
	defer conn.Close()
	b.Run("typed", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := conn.XRangeN(ctx, "s", "-", "+", 200).Result(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("do", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := conn.Do(ctx, "XRANGE", "s", "-", "+", "COUNT", 200).Result(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("doraw", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			raw, err := conn.DoRaw(ctx, "XRANGE", "s", "-", "+", "COUNT", 200).Result()
			if err != nil || len(raw) == 0 {
				b.Fatal(err)
			}
		}
	})
	b.Run("dorawwriteto", func(b *testing.B) {
		var buf bytes.Buffer
		for i := 0; i < b.N; i++ {
			buf.Reset()
			if err := conn.DoRawWriteTo(ctx, &buf, "XRANGE", "s", "-", "+", "COUNT", 200).Err(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
