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
	if !errors.As(err, &reply) || badConn(err) {
		d.close()
	}
	return err
}

// badConn reports go-redis's answer from a Conn that an earlier error left unusable (a READONLY
// from a primary turned replica, a network error): it answers every later command with "redis:
// Conn is in a bad state: <that error>" without sending it, and sets no command's error. The
// error wraps the earlier reply, so it reads as a reply; it is not one.
func badConn(err error) bool {
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
