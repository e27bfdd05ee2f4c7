package redisq

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// How a stall is made. DEBUG SLEEP freezes the whole server (its event loop: no command, no
// connection, no replication) and is what qbench uses on servers it starts with
// enable-debug-command. A Redis someone else runs (redis-url) usually refuses DEBUG (Redis 7's
// default, managed services always), so there the stall is CLIENT PAUSE <ms> ALL (Redis 6.2+):
// every normal client's commands wait out the pause while the server itself, its replicas and
// its persistence go on. Producers and consumers see the same thing (no answer for the
// duration); the server's own background work does not.
const (
	stallDebugSleep  = "debug-sleep"
	stallClientPause = "client-pause"
)

// prepareStall chooses how a redis-url target stalls, when the scenario has a stall: CLIENT
// PAUSE 0 ALL (a pause that ends at once) tells whether the server has the ALL form and lets
// this user send it; failing that, DEBUG SLEEP 0 whether DEBUG is enabled. Neither: the run is
// refused before it starts, with both reasons.
func (e *engine) prepareStall(ctx context.Context) error {
	if !slices.Contains(e.spec.Faults, "stall") {
		return nil
	}
	pauseErr := e.client.Do(ctx, "CLIENT", "PAUSE", "0", "ALL").Err()
	if pauseErr == nil {
		e.stallBy = stallClientPause
		return nil
	}
	debugErr := e.client.Do(ctx, "DEBUG", "SLEEP", "0").Err()
	if debugErr == nil {
		e.stallBy = stallDebugSleep
		return nil
	}
	version := "unknown"
	if info, err := e.client.Info(ctx, "server").Result(); err == nil {
		version = InfoField(info, "redis_version")
	}
	return fmt.Errorf("a stall needs CLIENT PAUSE <ms> ALL (Redis 6.2 or later, a user allowed +client|pause) or DEBUG SLEEP (enable-debug-command); the server at %s (redis_version %s) refused both: CLIENT PAUSE 0 ALL: %v; DEBUG SLEEP 0: %v",
		e.addr, version, pauseErr, debugErr)
}

// clientPause pauses every normal client's commands for d, on a connection of its own (the
// pausing connection's own next command would wait too): the server answers OK at once.
func (e *engine) clientPause(ctx context.Context, d time.Duration) error {
	o := *e.client.Options()
	o.PoolSize, o.MinIdleConns = 1, 0
	c := redis.NewClient(&o)
	defer c.Close()
	ms := max(d.Milliseconds(), 1)
	if err := c.Do(ctx, "CLIENT", "PAUSE", strconv.FormatInt(ms, 10), "ALL").Err(); err != nil {
		return fmt.Errorf("CLIENT PAUSE %d ALL: %w", ms, err)
	}
	return nil
}
