package redisq

import (
	"errors"

	"github.com/redis/go-redis/v9"
)

// dedicated is a consumer's own connection (go-redis's Conn, a pool of one). A consumer is one
// goroutine issuing one command after another, so it needs no pool, and a pooled client checks
// every connection it hands out with a non-blocking read (a system call per command: a tenth of
// qbench's CPU at full load). After a network error the connection is dropped and the next
// command takes a fresh one from the client, so a restarted or failed-over server is reached
// again as with the pooled client.
type dedicated struct {
	client *redis.Client
	conn   *redis.Conn
}

// get returns the connection, opening one if there is none.
func (d *dedicated) get() *redis.Conn {
	if d.conn == nil {
		d.conn = d.client.Conn()
	}
	return d.conn
}

// check drops the connection after err unless err is the server's reply (an error reply or a
// nil): the connection may hold half a reply, or be dead. It returns err.
func (d *dedicated) check(err error) error {
	var reply redis.Error
	if err != nil && !errors.As(err, &reply) {
		d.close()
	}
	return err
}

func (d *dedicated) close() error {
	if d.conn == nil {
		return nil
	}
	err := d.conn.Close()
	d.conn = nil
	return err
}
