package redisq

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"qbench/engines"
)

// reliableCmds is a reliable-list consumer's commands and reply buffers, reused from call to
// call, so that a move or an acknowledgement costs no command object, argument list or string of
// its own (go-redis's typed LMOVE and LREM made a command, an argument list and, for LMOVE, a
// string per message, and Receive a copy of each payload). Each shard of the consumer's share has
// its BLMOVE, LMOVEs and LREMs, made on first use (as many as a call has needed); their arguments
// never change but an LREM's element (a payloadArg its argument list points to), so a command's
// key, and the cluster slot go-redis caches in it, stay its own. They are RawWriteToCmds: the
// moves' replies are appended to buf and the acknowledgements' to ackBuf, and read with
// rawReply, so a payload is a slice of buf (valid until the next Receive, as are the handles,
// pointers into hs). Reuse is safe because a consumer runs one pipeline at a time and Exec
// returns only once every reply is read or the connection has failed; after a failure the error
// is taken from Exec, never from a command, and a command's next use overwrites its state.
type reliableCmds struct {
	r       *reliableDesign
	name    string
	timeout any // the BLMOVE's, formatted once
	shards  []*reliableShardCmds
	// acked counts, per shard, the LREMs of the Ack being built.
	acked       []int
	pipe        redis.Pipeliner
	pipeOf      consumerConn
	queued      []redis.Cmder // a pipeline's commands, reused
	buf, ackBuf bytes.Buffer
	hs          []reliableHandle
	ds          []engines.Delivery
}

// reliableShardCmds is one shard's commands (see reliableCmds).
type reliableShardCmds struct {
	moveArgs []any
	proc     any
	block    *redis.RawWriteToCmd
	moves    []*redis.RawWriteToCmd
	acks     []*lremCmd
}

// lremCmd is an LREM whose element is set before each use.
type lremCmd struct {
	cmd  *redis.RawWriteToCmd
	elem payloadArg
}

// minusOne is LREM's count, boxed once.
var minusOne any = -1

func (c *reliableCmds) init(r *reliableDesign, name string, timeout time.Duration) {
	c.r, c.name, c.timeout = r, name, seconds(timeout)
	c.shards = make([]*reliableShardCmds, r.shards.n)
	c.acked = make([]int, r.shards.n)
}

// shard returns shard k's commands, making them on first use.
func (c *reliableCmds) shard(k int) *reliableShardCmds {
	if s := c.shards[k]; s != nil {
		return s
	}
	pop, _ := c.r.ends()
	var ready, proc any = c.r.readys[k], c.r.processing(c.name, k)
	s := &reliableShardCmds{moveArgs: []any{"LMOVE", ready, proc, pop, "LEFT"}, proc: proc}
	s.block = redis.NewRawWriteToCmd(context.Background(), &c.buf, "BLMOVE", ready, proc, pop, "LEFT", c.timeout)
	c.shards[k] = s
	return s
}

// pipeline returns the connection's pipeline, made once per connection (as sendConn's is).
func (c *reliableCmds) pipeline(conn consumerConn) redis.Pipeliner {
	if c.pipe == nil || c.pipeOf != conn {
		c.pipe, c.pipeOf = conn.Pipeline(), conn
	}
	return c.pipe
}

// move runs n moves from shard k's ready list to its processing list in one pipeline, the first
// a BLMOVE if block, leaving their replies in buf. It returns Exec's error.
func (c *reliableCmds) move(ctx context.Context, conn consumerConn, k int, block bool, n int) error {
	s := c.shard(k)
	c.buf.Reset()
	queued := c.queued[:0]
	if block {
		queued = append(queued, s.block)
		n--
	}
	for len(s.moves) < n {
		s.moves = append(s.moves, redis.NewRawWriteToCmd(context.Background(), &c.buf, append([]any(nil), s.moveArgs...)...))
	}
	for _, m := range s.moves[:n] {
		queued = append(queued, m)
	}
	return c.exec(ctx, conn, queued)
}

// exec runs queued as one pipeline. They are queued in one BatchProcess: the pipeline's own
// command slice starts empty after every Exec, and grown one Process at a time it took five or
// six allocations a batch.
func (c *reliableCmds) exec(ctx context.Context, conn consumerConn, queued []redis.Cmder) error {
	pipe := c.pipeline(conn)
	_ = pipe.BatchProcess(ctx, queued...)
	_, err := pipe.Exec(ctx)
	clear(queued)
	c.queued = queued[:0]
	return err
}

// ack LREMs each delivery's element from its shard's processing list in one pipeline (and DELs
// its delivery counter if counted, with go-redis's typed command: only with max_deliveries). It
// returns Exec's error, or the first error reply.
func (c *reliableCmds) ack(ctx context.Context, conn consumerConn, ds []engines.Delivery, counted bool) error {
	c.ackBuf.Reset()
	clear(c.acked)
	queued := c.queued[:0]
	for _, d := range ds {
		h := d.Handle.(*reliableHandle)
		s := c.shard(h.shard)
		i := c.acked[h.shard]
		c.acked[h.shard]++
		if i == len(s.acks) {
			a := &lremCmd{}
			a.cmd = redis.NewRawWriteToCmd(context.Background(), &c.ackBuf, "LREM", s.proc, minusOne, &a.elem)
			s.acks = append(s.acks, a)
		}
		s.acks[i].elem.b = h.value
		queued = append(queued, s.acks[i].cmd)
		if counted {
			queued = append(queued, redis.NewIntCmd(ctx, "DEL", c.r.deliveryKey(h.value)))
		}
	}
	err := c.exec(ctx, conn, queued)
	for k, n := range c.acked {
		for _, a := range c.shards[k].acksUpTo(n) {
			a.elem.b = nil // retain no payload
		}
	}
	if err != nil {
		return err
	}
	r := rawReply{b: c.ackBuf.Bytes()}
	for r.pos < len(r.b) {
		if err := r.skip(); err != nil {
			return err
		}
	}
	return nil
}

// acksUpTo is the first n LREMs (none of a shard never used).
func (s *reliableShardCmds) acksUpTo(n int) []*lremCmd {
	if s == nil {
		return nil
	}
	return s.acks[:n]
}

// moved reads a BLMOVE's or LMOVE's reply: the element, or null when there was none (a null bulk
// string from LMOVE, a null array from a BLMOVE that timed out).
func (r *rawReply) moved() (v []byte, null bool, err error) {
	if r.pos < len(r.b) && r.b[r.pos] == '*' {
		n, null, err := r.array()
		if err == nil && !null {
			err = fmt.Errorf("redis reply: a move's reply is an array of %d", n)
		}
		return nil, null, err
	}
	return r.bulk()
}
