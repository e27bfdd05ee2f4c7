// Package redisq holds the Redis queue designs (stream, list, reliable-list, pub/sub),
// all through one go-redis v9 code path, and the targets they run against: the in-repo server
// embedded in the process, or an existing Redis at an address. A comparison between targets
// therefore differs only in the server.
package redisq

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"qbench/engines"
)

// engine is one design on one Redis-protocol server: what every target shares. The fault
// capabilities that only some targets have (Crasher, DiskFiller, FailoverTarget) are methods of
// the target's own type, which embeds engine, so an interface assertion is true only where the
// capability exists.
type engine struct {
	spec   engines.Spec
	wait   WaitOptions // the scenario's redis.wait
	target string
	addr   string
	client *redis.Client
	design design
	// shards is the run's shard set (one shard without `shards:`).
	shards *shards
	// closeTarget stops what the target started (the embedded server); nil for an existing Redis.
	closeTarget func() error
	// pid is the server process's, for Facts and Health; nil when qbench did not start it.
	pid func() string
	// WAIT / WAITAOF outcomes: batches waited for, those that fell short, errors.
	waits WaitTally
	// version overrides the server's INFO redis_version in Facts (the in-repo server reports the
	// Redis version it emulates there).
	version string
	// spin is the connections' busy-polling policy and counts (spin.go).
	spin *spinner
	// stallBy is how Stall stops the server answering (pause.go): DEBUG SLEEP unless
	// prepareStall chose CLIENT PAUSE.
	stallBy string
}

// design is the part that differs between queue designs.
type design interface {
	setup(ctx context.Context) error
	// push queues the commands that send payloads, one Cmder per payload (the same one for
	// several when one command carries them all). byShard[k] lists the positions of shard k's
	// payloads, in batch order; nil means every payload is for shard 0 (one shard).
	// buf is the sending connection's reusable argument space; the returned slice is buf's
	// too, valid until the next push with it.
	push(ctx context.Context, pipe redis.Pipeliner, payloads [][]byte, byShard [][]int, buf *pushBuf) []redis.Cmder
	newConsumer(ctx context.Context, id int) (engines.Consumer, error)
	lag(ctx context.Context) (engines.Lag, error)
	teardown(ctx context.Context) error
}

// keyPrefix names every key a run creates, so a shared Redis is never touched outside it.
func keyPrefix(spec engines.Spec) string { return "qbench:" + spec.RunID + ":" }

func newEngine(ctx context.Context, spec engines.Spec, target, addr, password string) (*engine, error) {
	return newEngineWith(ctx, spec, target, &redis.Options{Addr: addr, Password: password})
}

// newEngineWith connects with opts (address, password, TLS), sized and timed for a benchmark.
func newEngineWith(ctx context.Context, spec engines.Spec, target string, opts *redis.Options) (*engine, error) {
	o, err := OptionsOf(spec)
	if err != nil {
		return nil, err
	}
	// Each producer may have InFlight batches in flight at once, each a pipeline on a connection
	// of its own (go-redis's client is safe for concurrent use; a pipeline holds its connection
	// until the replies are read), and each consumer blocks on one; 4 spare for lag, facts and
	// faults.
	poolSize := spec.Producers*max(spec.InFlight, 1) + spec.Consumers + 4
	opts.PoolSize = poolSize
	// Keep the pool warm: a benchmark must not measure connection set-up.
	opts.MinIdleConns = min(poolSize, 64)
	// A stalled or crashed server shows up as latency or errors, not as a hang.
	opts.ReadTimeout = 10 * time.Second
	opts.WriteTimeout = 10 * time.Second
	// RESP2: under RESP3 go-redis peeks every connection for push notifications (a recvfrom
	// system call per command), and the designs use none (pub/sub has its own connections).
	opts.Protocol = 2
	// Honour the caller's deadline (the sampler's 500 ms lag query, the sweep's and tear-down's
	// bounds, the short ones after Ctrl-C): without this go-redis waits out ReadTimeout.
	opts.ContextTimeoutEnabled = true
	// TCP connections make their socket calls without waking the runtime's monitor, move their
	// deadlines rarely and may busy-poll for replies (quietconn_unix.go, spin.go); not over TLS.
	spin, err := newSpinner()
	if err != nil {
		return nil, err
	}
	if opts.Dialer == nil && opts.TLSConfig == nil {
		if opts.DialTimeout == 0 {
			opts.DialTimeout = 5 * time.Second // go-redis's default, which its dialer reads from opts
		}
		opts.Dialer = quietDialer(spin, redis.NewDialer(opts))
	}
	client := redis.NewClient(opts)
	addr := opts.Addr
	if err := client.Ping(ctx).Err(); err != nil {
		client.Close()
		return nil, fmt.Errorf("connecting to %s: %w", addr, err)
	}
	e := &engine{spec: spec, wait: o.Wait, target: target, addr: addr, client: client, shards: newShards(spec), spin: spin}
	switch spec.Design {
	case "stream":
		e.design = newStreamDesign(client, spec, e.shards)
	case "list":
		e.design = newListDesign(client, spec, e.shards)
	case "reliable-list":
		e.design = newReliableDesign(client, spec, e.shards)
	case "pubsub":
		e.design = newPubSubDesign(client, spec, e.shards)
	default:
		client.Close()
		return nil, fmt.Errorf("design %q is not implemented", spec.Design)
	}
	return e, nil
}

func (e *engine) Setup(ctx context.Context) error { return e.design.setup(ctx) }

// grouped is implemented by designs with several receiving groups.
type grouped interface {
	groups() int
	groupOf(consumer int) int
}

// Groups is the number of receiving groups (engines.Grouper).
func (e *engine) Groups() int {
	if g, ok := e.design.(grouped); ok {
		return g.groups()
	}
	return 1
}

// GroupOf is consumer's receiving group (engines.Grouper).
func (e *engine) GroupOf(consumer int) int {
	if g, ok := e.design.(grouped); ok {
		return g.groupOf(consumer)
	}
	return 0
}

func (e *engine) NewProducer(_ context.Context, id int) (engines.Producer, error) {
	return &producer{e: e, id: id, idle: make(chan *sendConn, max(e.spec.InFlight, 1))}, nil
}

// producer sends a batch as one pipeline on one connection, followed, when the scenario asks,
// by WAIT or WAITAOF on the same connection, so that it covers exactly these writes. Concurrent
// Sends (batches in flight) each hold a connection of their own: the producer keeps up to
// InFlight dedicated connections and hands an idle one to each Send. Taking one from the
// client's pool instead costs a health-check read system call per batch, which at one message
// per batch (the latency floor) is a fifth of the round trip. With several shards the batch is
// split by shard inside the one pipeline.
type producer struct {
	e    *engine
	id   int
	idle chan *sendConn
	// unstamped counts payloads without a runner's stamp, for routing them (see shards.of).
	unstamped atomic.Uint64
}

// sendConn is a producer's connection with the argument space its Sends reuse (pushBuf) and its
// pipeline.
type sendConn struct {
	dedicated
	buf    pushBuf
	pipe   redis.Pipeliner
	pipeOf consumerConn
}

// pipeline returns the connection's pipeline, made once per connection (again after a network
// error replaced it): an executed pipeline is empty and reusable, and making one per batch (as
// Pipelined does, with its closure) cost five allocations.
func (d *sendConn) pipeline() redis.Pipeliner {
	c := d.get()
	if d.pipe == nil || d.pipeOf != c {
		d.pipe, d.pipeOf = c.Pipeline(), c
	}
	return d.pipe
}

// conn returns an idle dedicated connection, or a new one when all are busy.
func (p *producer) conn() *sendConn {
	select {
	case d := <-p.idle:
		return d
	default:
		return &sendConn{dedicated: dedicated{client: p.e.client}}
	}
}

// release keeps d for the next Send, or closes it when InFlight are already kept.
func (p *producer) release(d *sendConn) {
	select {
	case p.idle <- d:
	default:
		d.close()
	}
}

func (p *producer) Send(ctx context.Context, payloads [][]byte, errs []error) {
	w := p.e.wait
	var byShard [][]int
	if p.e.shards.n > 1 {
		byShard = p.e.shards.split(p.id, payloads, &p.unstamped)
	} else {
		p.e.shards.sent[0].Add(int64(len(payloads)))
	}
	d := p.conn()
	defer p.release(d)
	pipe := d.pipeline()
	cmds := p.e.design.push(ctx, pipe, payloads, byShard, &d.buf)
	wait := p.e.waits.Queue(ctx, pipe, w)
	_, err := pipe.Exec(ctx)
	// A network error may leave half a reply on the connection: drop it, the next Send dials.
	_ = d.check(err)
	for i, c := range cmds {
		errs[i] = c.Err()
		// A command go-redis never sent (its connection already in a bad state) has no error
		// of its own: without this it would count as acknowledged.
		if errs[i] == nil && badState(err) {
			errs[i] = err
		}
	}
	d.buf.done()
	p.e.waits.Note(wait, w, errs)
}

func (p *producer) Close() error {
	for {
		select {
		case d := <-p.idle:
			d.close()
		default:
			return nil
		}
	}
}

func (e *engine) NewConsumer(ctx context.Context, id int) (engines.Consumer, error) {
	return e.design.newConsumer(ctx, id)
}

func (e *engine) Lag(ctx context.Context) (engines.Lag, error) { return e.design.lag(ctx) }

// Teardown removes the design's keys, then sweeps anything else under the run's prefix (delivery
// counters, dead letters) with SCAN, so a shared Redis is left as it was found.
func (e *engine) Teardown(ctx context.Context) error {
	err := e.design.teardown(ctx)
	iter := e.client.Scan(ctx, 0, keyPrefix(e.spec)+"*", 1000).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if len(keys) > 0 {
		if derr := e.client.Del(ctx, keys...).Err(); err == nil {
			err = derr
		}
	}
	return err
}

func (e *engine) Close() error {
	err := e.client.Close()
	if e.closeTarget != nil {
		if cerr := e.closeTarget(); err == nil {
			err = cerr
		}
	}
	return err
}

// Command sends an administrative command on a connection of its own (engines.Commander).
func (e *engine) Command(ctx context.Context, args ...string) (string, error) {
	a := make([]any, len(args))
	for i, s := range args {
		a[i] = s
	}
	v, err := e.client.Do(ctx, a...).Result()
	return fmt.Sprint(v), err
}

// BackgroundBusy reports whether a log rewrite or a snapshot is running or scheduled
// (engines.BackgroundReporter), from INFO persistence, which redis-server and the in-repo server
// both give.
func (e *engine) BackgroundBusy(ctx context.Context) (bool, error) {
	info, err := e.client.Info(ctx, "persistence").Result()
	if err != nil {
		return false, err
	}
	for _, f := range []string{"aof_rewrite_in_progress", "rdb_bgsave_in_progress", "aof_rewrite_scheduled"} {
		if InfoField(info, f) == "1" {
			return true, nil
		}
	}
	return false, nil
}

// Stall makes the server stop answering for d (engines.Staller): DEBUG SLEEP on a connection of
// its own. Redis 7 refuses DEBUG unless started with enable-debug-command; on a Redis someone
// else runs, CLIENT PAUSE when prepareStall chose it (pause.go).
func (e *engine) Stall(ctx context.Context, d time.Duration) error {
	if e.stallBy == stallClientPause {
		return e.clientPause(ctx, d)
	}
	c := redis.NewClient(&redis.Options{Addr: e.addr, Password: e.client.Options().Password, ReadTimeout: d + 5*time.Second})
	errc := make(chan error, 1)
	go func() {
		defer c.Close()
		errc <- c.Do(context.WithoutCancel(ctx), "DEBUG", "SLEEP", fmt.Sprintf("%.3f", d.Seconds())).Err()
	}()
	// The command is on its way once it has been written; give it a moment to arrive.
	select {
	case err := <-errc:
		return err
	case <-time.After(5 * time.Millisecond):
		return nil
	}
}

// Facts reports the server's version and persistence settings.
func (e *engine) Facts(ctx context.Context) engines.Facts {
	f := engines.Facts{Name: e.target, Design: e.spec.Design, Address: e.addr, Settings: map[string]string{}}
	if info, err := e.client.Info(ctx, "server").Result(); err == nil {
		f.Version = InfoField(info, "redis_version")
	}
	if e.version != "" {
		f.Version = e.version
	}
	if e.pid != nil {
		f.Settings["pid"] = e.pid()
	}
	if e.stallBy != "" {
		f.Settings["stall_by"] = e.stallBy // how a stall fault was made (pause.go)
	}
	f.Stats = map[string]int64{}
	if st, ok := e.design.(interface {
		stats(ctx context.Context) map[string]int64
	}); ok {
		f.Stats = st.stats(ctx)
	}
	if f.Stats == nil {
		f.Stats = map[string]int64{}
	}
	e.waits.AddStats(f.Stats)
	// The in-repo server counts its log's fsyncs (aof_fsyncs); redis-server counts none.
	if info, err := e.client.Info(ctx, "persistence").Result(); err == nil {
		if v, err := strconv.ParseInt(InfoField(info, "aof_fsyncs"), 10, 64); err == nil {
			f.Stats["aof_fsyncs"] = v
		}
		addLogSize(info, f.Stats)
	}
	e.spin.stats(f.Stats)
	FactSettings(ctx, e.client, f.Settings)
	return f
}
