package server

import (
	"sort"
	"time"

	"qbench/engines/server/resp"
)

var pubsubCommands = []*command{
	{name: "subscribe", arity: -2, flags: flagPubSub | flagNoScript | flagLoading | flagStale | flagSubscribeOK, group: "pubsub", summary: "Listen for messages published to the given channels", h: cmdSubscribe},
	{name: "unsubscribe", arity: -1, flags: flagPubSub | flagNoScript | flagLoading | flagStale | flagSubscribeOK, group: "pubsub", summary: "Stop listening for messages posted to the given channels", h: cmdUnsubscribe},
	{name: "psubscribe", arity: -2, flags: flagPubSub | flagNoScript | flagLoading | flagStale | flagSubscribeOK, group: "pubsub", summary: "Listen for messages published to channels matching the given patterns", h: cmdPsubscribe},
	{name: "punsubscribe", arity: -1, flags: flagPubSub | flagNoScript | flagLoading | flagStale | flagSubscribeOK, group: "pubsub", summary: "Stop listening for messages posted to channels matching the given patterns", h: cmdPunsubscribe},
	{name: "publish", arity: 3, flags: flagPubSub | flagLoading | flagStale | flagFast, group: "pubsub", summary: "Post a message to a channel", h: cmdPublish},
	{name: "pubsub", arity: -2, group: "pubsub", summary: "A container for Pub/Sub commands", subs: []*command{
		{name: "channels", arity: -2, flags: flagPubSub | flagLoading | flagStale, group: "pubsub", summary: "List active channels", h: cmdPubsubChannels},
		{name: "numsub", arity: -2, flags: flagPubSub | flagLoading | flagStale, group: "pubsub", summary: "Get the count of subscribers for channels", h: cmdPubsubNumsub},
		{name: "numpat", arity: 2, flags: flagPubSub | flagLoading | flagStale, group: "pubsub", summary: "Get the count of unique patterns pattern subscriptions", h: cmdPubsubNumpat},
		{name: "help", arity: 2, flags: flagLoading | flagStale, group: "pubsub", summary: "Show helpful text about the different subcommands", h: cmdPubsubHelp},
	}},
}

// pubsubRegistry maps channels and patterns to subscribed clients. Store lock held.
type pubsubRegistry struct {
	channels map[string]map[*client]struct{}
	patterns map[string]map[*client]struct{}
}

func newPubsubRegistry() *pubsubRegistry {
	return &pubsubRegistry{channels: map[string]map[*client]struct{}{}, patterns: map[string]map[*client]struct{}{}}
}

// replies is several replies written back to back (SUBSCRIBE a b answers once per channel).
type replies []any

// pushReply is a pub/sub message: a push in RESP3, an array in RESP2.
func pushReply(items ...any) resp.Push { return resp.Push(items) }

func cmdSubscribe(c *client, args [][]byte) (any, error) {
	return c.subscribe(args[1:], false), nil
}

func cmdPsubscribe(c *client, args [][]byte) (any, error) {
	return c.subscribe(args[1:], true), nil
}

func (c *client) subscribe(names [][]byte, pattern bool) replies {
	r := c.s.pubsub
	kind := "subscribe"
	if pattern {
		kind = "psubscribe"
	}
	out := make(replies, 0, len(names))
	for _, nb := range names {
		n := string(nb)
		set, mine := r.channels, &c.channels
		if pattern {
			set, mine = r.patterns, &c.patterns
		}
		if *mine == nil {
			*mine = map[string]struct{}{}
		}
		if _, ok := (*mine)[n]; !ok {
			(*mine)[n] = struct{}{}
			if set[n] == nil {
				set[n] = map[*client]struct{}{}
			}
			set[n][c] = struct{}{}
		}
		out = append(out, pushReply(kind, n, c.subscriptions()))
	}
	c.startAsync()
	return out
}

func cmdUnsubscribe(c *client, args [][]byte) (any, error) {
	return c.unsubscribe(args[1:], false), nil
}

func cmdPunsubscribe(c *client, args [][]byte) (any, error) {
	return c.unsubscribe(args[1:], true), nil
}

func (c *client) unsubscribe(names [][]byte, pattern bool) replies {
	r := c.s.pubsub
	kind := "unsubscribe"
	set, mine := r.channels, c.channels
	if pattern {
		kind, set, mine = "punsubscribe", r.patterns, c.patterns
	}
	var list []string
	if len(names) == 0 {
		for n := range mine {
			list = append(list, n)
		}
		sort.Strings(list)
		if len(list) == 0 {
			return replies{pushReply(kind, nil, c.subscriptions())}
		}
	} else {
		for _, nb := range names {
			list = append(list, string(nb))
		}
	}
	out := make(replies, 0, len(list))
	for _, n := range list {
		if _, ok := mine[n]; ok {
			delete(mine, n)
			delete(set[n], c)
			if len(set[n]) == 0 {
				delete(set, n)
			}
		}
		out = append(out, pushReply(kind, n, c.subscriptions()))
	}
	return out
}

// unsubscribeAll drops every subscription of c (disconnect, RESET).
func (r *pubsubRegistry) unsubscribeAll(c *client) {
	for n := range c.channels {
		delete(r.channels[n], c)
		if len(r.channels[n]) == 0 {
			delete(r.channels, n)
		}
	}
	for n := range c.patterns {
		delete(r.patterns[n], c)
		if len(r.patterns[n]) == 0 {
			delete(r.patterns, n)
		}
	}
	c.channels, c.patterns = nil, nil
}

func cmdPublish(c *client, args [][]byte) (any, error) {
	return c.s.publish(string(args[1]), args[2]), nil
}

// publish delivers msg to subscribers of channel and of matching patterns. The message is
// encoded once per protocol (and pattern) and every subscriber's queue refers to that one
// encoding (outqueue.go): a burst costs its size once, not once per subscriber.
func (s *Server) publish(channel string, msg []byte) int {
	n := 0
	var enc [4][]byte // by protocol
	for sub := range s.pubsub.channels[channel] {
		p := sub.proto & 3
		if enc[p] == nil {
			enc[p] = encodeMessage(sub.proto, false, "", channel, msg)
		}
		s.deliver(sub, enc[p])
		n++
	}
	for pat, subs := range s.pubsub.patterns {
		if !globMatch(pat, channel) {
			continue
		}
		enc = [4][]byte{}
		for sub := range subs {
			p := sub.proto & 3
			if enc[p] == nil {
				enc[p] = encodeMessage(sub.proto, true, pat, channel, msg)
			}
			s.deliver(sub, enc[p])
			n++
		}
	}
	return n
}

// encodeMessage encodes a message push (a pmessage one for a pattern) in a buffer sized once.
func encodeMessage(proto int, pattern bool, pat, channel string, msg []byte) []byte {
	b := make([]byte, 0, len(pat)+len(channel)+len(msg)+64)
	if pattern {
		return resp.AppendValue(b, pushReply("pmessage", pat, channel, msg), proto)
	}
	return resp.AppendValue(b, pushReply("message", channel, msg), proto)
}

// deliver queues a message for a subscriber, enforcing the pub/sub output buffer limit: past
// the hard limit, or past the soft limit for longer than its seconds, the client is closed.
func (s *Server) deliver(c *client, b []byte) {
	c.pmu.Lock()
	defer c.pmu.Unlock()
	if c.killed {
		return
	}
	c.appendPendingLocked(b, true)
	if c.inLoop() {
		s.loop.noteWritable(c) // the event loop writes it, after the turn's commit
	} else {
		s.woken++ // its writer goroutine was readied
	}
	s.checkLimitLocked(c, time.Now())
}

// checkLimitLocked applies the output buffer limit to c (c.pmu held).
func (s *Server) checkLimitLocked(c *client, now time.Time) {
	n := int64(c.pending.n + c.inflight) // unsent, as Redis counts its reply list
	l := s.conf.obuf[obufPubsub]
	hard, soft, secs := l.hard, l.soft, l.secs
	over := hard > 0 && n >= hard
	if !over && soft > 0 && n >= soft {
		if c.softSince.IsZero() {
			c.softSince = now
		} else if now.Sub(c.softSince) >= time.Duration(secs)*time.Second {
			over = true
		}
	} else if soft > 0 && n < soft {
		c.softSince = time.Time{}
	}
	if over {
		c.killed = true
		c.pending = outQueue{}
		s.logf("Client id=%d scheduled to be closed ASAP for overcoming of output buffer limits.", c.id)
		c.conn.Close()
	}
}

// checkOutputLimits runs from the cron: slow subscribers past the soft limit's time go.
func (s *Server) checkOutputLimits() {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	for _, c := range s.clients {
		c.pmu.Lock()
		if c.async && !c.killed && c.pending.n > 0 {
			s.checkLimitLocked(c, now)
		}
		c.pmu.Unlock()
	}
}

func cmdPubsubChannels(c *client, args [][]byte) (any, error) {
	if len(args) > 3 {
		return nil, errArity("pubsub|channels")
	}
	out := [][]byte{}
	for ch := range c.s.pubsub.channels {
		if len(args) == 3 && !globMatch(string(args[2]), ch) {
			continue
		}
		out = append(out, []byte(ch))
	}
	sort.Slice(out, func(i, j int) bool { return string(out[i]) < string(out[j]) })
	return out, nil
}

func cmdPubsubNumsub(c *client, args [][]byte) (any, error) {
	out := resp.Array{}
	for _, a := range args[2:] {
		out = append(out, clone(a), len(c.s.pubsub.channels[string(a)]))
	}
	return out, nil
}

func cmdPubsubNumpat(c *client, args [][]byte) (any, error) {
	return len(c.s.pubsub.patterns), nil
}

func cmdPubsubHelp(c *client, args [][]byte) (any, error) {
	return helpReply("PUBSUB",
		"CHANNELS [<pattern>]",
		"    Return the currently active channels matching a <pattern> (default: '*').",
		"NUMPAT",
		"    Return number of subscriptions to patterns.",
		"NUMSUB [<channel> ...]",
		"    Return the number of subscribers for the specified channels, excluding",
		"    pattern subscriptions(default: no channels).",
	), nil
}
