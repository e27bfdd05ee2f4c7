package redisq

import (
	"context"
	"fmt"
	"testing"
	"time"

	"qbench/engines"
)

// A producer whose server has become a replica is answered READONLY, after which go-redis holds
// the connection in a bad state and sends nothing more on it. Every batch must then fail: none
// may count as acknowledged (the commands it never sent have no error of their own), and the
// next Send must dial again rather than keep the bad connection.
func TestProducerOnAReplicaAcknowledgesNothing(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	// A replica of a primary that does not exist: read-only, never synced.
	m, err := StartRedis(ctx, "", map[string]string{"replicaof": "127.0.0.1 1"})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Stop()
	for _, design := range []string{"stream", "list"} {
		t.Run(design, func(t *testing.T) {
			spec := engines.Spec{RunID: fmt.Sprintf("t%d", time.Now().UnixNano()), Design: design, Producers: 1, Consumers: 1, InFlight: 1}
			e, err := newEngine(ctx, spec, "redis", m.Addr(), "")
			if err != nil {
				t.Fatal(err)
			}
			defer e.client.Close()
			p, err := e.NewProducer(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			for round := range 4 {
				payloads := [][]byte{[]byte("a"), []byte("b"), []byte("c")}
				errs := make([]error, len(payloads))
				p.Send(ctx, payloads, errs)
				for i, err := range errs {
					if err == nil {
						t.Fatalf("round %d: payload %d acknowledged by a read-only replica", round, i)
					}
				}
			}
		})
	}
}
