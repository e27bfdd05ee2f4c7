package redisq

import (
	"encoding/binary"
	"math"
	"sort"
	"sync/atomic"

	"qbench/engines"
)

// Sharding (scenario `shards: N`): every design spreads its queue over N keys named by ShardKey
// (N streams each with the run's groups, N ready lists, N channels). A producer routes each
// message to a shard by route, a pure function of (producer, sequence number), so the runner's
// ledger can tell which messages shared a key and owe each other order (engines.Sharder).
// Consumers split each receiving group's shards between its members (share).

// Routing names, as the scenario spells them.
const (
	RouteRoundRobin = "round-robin"
	RouteProducer   = "producer"
	RouteZipf       = "zipf"
	// DefaultShardSkew is the Zipf exponent when the scenario gives none.
	DefaultShardSkew = 1.1
)

// router decides the shard of a message. It is read-only once made.
type router struct {
	n       int
	routing string
	seed    uint64
	// cdf[k] is P(shard <= k) under Zipf (zipf routing only).
	cdf []float64
}

func newRouter(n int, routing string, skew float64, seed int64) router {
	r := router{n: max(n, 1), routing: routing, seed: uint64(seed)}
	if routing == RouteZipf {
		if skew <= 0 {
			skew = DefaultShardSkew
		}
		r.cdf = zipfCDF(r.n, skew)
	}
	return r
}

// zipfCDF is the cumulative distribution of the finite Zipf law over n ranks: rank k (0-based)
// has weight 1/(k+1)^s. Shard 0 is the hottest.
func zipfCDF(n int, s float64) []float64 {
	cdf := make([]float64, n)
	total := 0.0
	for k := range cdf {
		total += 1 / math.Pow(float64(k+1), s)
		cdf[k] = total
	}
	for k := range cdf {
		cdf[k] /= total
	}
	cdf[n-1] = 1
	return cdf
}

// route is the shard of message seq of producer, in [0, n).
//   - round-robin: producer p's messages go to shards p, p+1, p+2, ... (mod n), so every shard
//     gets an equal share and producers start on different shards.
//   - producer: producer p writes shard p mod n only (a key per producer, as with a key per
//     tenant).
//   - zipf: a seeded draw of the finite Zipf law, a function of (seed, producer, seq), so the
//     same scenario routes the same messages to the same shards.
func (r router) route(producer int, seq uint64) int {
	if r.n <= 1 {
		return 0
	}
	switch r.routing {
	case RouteProducer:
		return producer % r.n
	case RouteZipf:
		// The producer's stream of draws is keyed by (seed, producer), each draw by seq.
		key := mix64(mix64(r.seed) ^ uint64(producer))
		u := float64(mix64(key^seq)>>11) / (1 << 53)
		return min(sort.SearchFloat64s(r.cdf, u), r.n-1)
	default:
		return int((uint64(producer) + seq) % uint64(r.n))
	}
}

// mix64 is SplitMix64's finaliser: a bijection that scatters nearby inputs.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// stampSeq reads the sequence number the runner stamped on a payload: the stamp (bench/stamp.go)
// starts with the magic "qbm1" and carries the sequence number big-endian at bytes 16-24. A
// payload without a stamp reports ok false.
func stampSeq(p []byte) (seq uint64, ok bool) {
	if len(p) < 24 || p[0] != 'q' || p[1] != 'b' || p[2] != 'm' || p[3] != '1' {
		return 0, false
	}
	return binary.BigEndian.Uint64(p[16:24]), true
}

// shards is a run's shard set: how many, the routing, and counters of what each shard carried.
type shards struct {
	n      int
	router router
	// sent counts messages producers pushed to each shard (acknowledged or not); received
	// counts deliveries consumers read from each shard.
	sent, received []atomic.Int64
}

func newShards(spec engines.Spec) *shards {
	n := max(spec.Shards, 1)
	return &shards{n: n, router: newRouter(n, spec.ShardRouting, spec.ShardSkew, spec.Seed),
		sent: make([]atomic.Int64, n), received: make([]atomic.Int64, n)}
}

// keys names each shard of base.
func (s *shards) keys(base string) []string {
	ks := make([]string, s.n)
	for i := range ks {
		ks[i] = ShardKey(base, i, s.n)
	}
	return ks
}

// of is the shard of payload from producer; a payload without a stamp goes by the producer's
// own count of unstamped messages (next).
func (s *shards) of(producer int, payload []byte, next *atomic.Uint64) int {
	if s.n == 1 {
		return 0
	}
	seq, ok := stampSeq(payload)
	if !ok {
		seq = next.Add(1) - 1
	}
	return s.router.route(producer, seq)
}

// split groups a batch by shard, keeping each shard's payloads in batch order: idx[k] lists the
// positions in payloads of shard k's messages. Counts them as sent.
func (s *shards) split(producer int, payloads [][]byte, next *atomic.Uint64) (idx [][]int) {
	idx = make([][]int, s.n)
	for i, pl := range payloads {
		k := s.of(producer, pl, next)
		idx[k] = append(idx[k], i)
	}
	for k, ix := range idx {
		if len(ix) > 0 {
			s.sent[k].Add(int64(len(ix)))
		}
	}
	return idx
}

// share is the shards consumer reads, given that it is member m of members consumers of its
// receiving group: with at least as many members as shards, member m reads shard m mod n; with
// fewer, member m reads every shard k with k mod members == m, so each group covers every shard.
func (s *shards) share(m, members int) []int {
	members = max(members, 1)
	if members >= s.n {
		return []int{m % s.n}
	}
	var ks []int
	for k := m; k < s.n; k += members {
		ks = append(ks, k)
	}
	return ks
}

// member is consumer's index among the consumers of its group and the group's size, when
// consumers are dealt to groups round robin (consumer c is in group c mod groups).
func member(consumer, consumers, groups int) (m, members int) {
	groups = max(groups, 1)
	g := consumer % groups
	members = consumers / groups
	if g < consumers%groups {
		members++
	}
	return consumer / groups, max(members, 1)
}

// perShard fills a lag reading's per-shard part from each shard's backlog and pending; nothing
// with one shard.
func (s *shards) perShard(lag *engines.Lag, backlog, pending []int64) {
	if s.n <= 1 {
		return
	}
	lag.Shards = make([]engines.ShardLag, s.n)
	for k := range lag.Shards {
		lag.Shards[k] = engines.ShardLag{Backlog: backlog[k], Pending: pending[k], Sent: s.sent[k].Load(), Received: s.received[k].Load()}
	}
}

// Shards is how many shards the run's keys are spread over (engines.Sharder).
func (e *engine) Shards() int { return e.shards.n }

// ShardOf is the shard message seq of producer was routed to (engines.Sharder).
func (e *engine) ShardOf(producer int, seq uint64) int { return e.shards.router.route(producer, seq) }

// SoleReaders says whether every shard is read by one consumer of each receiving group
// (engines.SoleReader): share deals each shard to one member when the group has no more members
// than there are shards. With one shard that means one consumer per group.
func (e *engine) SoleReaders() bool {
	groups := max(e.Groups(), 1)
	return (e.spec.Consumers+groups-1)/groups <= e.shards.n
}

var (
	_ engines.Sharder    = (*engine)(nil)
	_ engines.SoleReader = (*engine)(nil)
)
