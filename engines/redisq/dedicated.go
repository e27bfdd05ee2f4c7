package redisq

import (
	"context"
	"errors"
	"io"
	"strings"

	"github.com/redis/go-redis/v9"
)

// dedicated is a consumer's own connection (go-redis's Conn, a pool of one). A consumer is one
// goroutine issuing one command after another, so it needs no pool, and a pooled client checks
// every connection it hands out with a non-blocking read (a system call per command: a tenth of
// qbench's CPU at full load). After a network error the connection is dropped and the next
// command takes a fresh one from the client, so a restarted or failed-over server is reached
// again as with the pooled client.
//
// On a Redis Cluster (a *redis.ClusterClient) there is no one connection to dedicate: each
// command goes to the node owning its key's slot, and the client follows MOVED after a
// failover, so the consumer uses the cluster client itself.
type dedicated struct {
	client redis.UniversalClient
	conn   *redis.Conn
}

// consumerConn is what a consumer issues its commands on: a *redis.Conn, or a cluster client.
type consumerConn interface {
	redis.Cmdable
	Process(ctx context.Context, cmd redis.Cmder) error
	DoRawWriteTo(ctx context.Context, w io.Writer, args ...any) *redis.RawWriteToCmd
}

// get returns the connection, opening one if there is none.
func (d *dedicated) get() consumerConn {
	c, ok := d.client.(*redis.Client)
	if !ok {
		return d.client.(consumerConn) // *redis.ClusterClient has DoRawWriteTo too
	}
	if d.conn == nil {
		d.conn = c.Conn()
	}
	return d.conn
}

// check drops the connection after err unless err is the server's reply (an error reply or a
// nil): the connection may hold half a reply, or be dead. It returns err.
func (d *dedicated) check(err error) error {
	if err == nil {
		return nil // before reply, which escapes to the heap when declared
	}
	var reply redis.Error
	if badState(err) || !errors.As(err, &reply) {
		d.close()
	}
	return err
}

// badState reports go-redis's "Conn is in a bad state" error: an earlier reply (READONLY, which
// go-redis takes for a server that has become a replica) marked the connection bad, and nothing
// is sent on it any more. It wraps that reply, so errors.As finds a redis.Error in it, but it is
// no reply to the commands at hand: they were never sent.
func badState(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "redis: Conn is in a bad state")
}

func (d *dedicated) close() error {
	if d.conn == nil {
		return nil
	}
	err := d.conn.Close()
	d.conn = nil
	return err
}
