package server

// XINFO STREAM, GROUPS, CONSUMERS and HELP.

import (
	"math"

	"qbench/engines/server/resp"
	"qbench/engines/server/store"
)

func cmdXinfoHelp(c *client, args [][]byte) (any, error) {
	return helpReply("XINFO",
		"CONSUMERS <key> <groupname>",
		"    Show consumers of <groupname>.",
		"GROUPS <key>",
		"    Show the stream consumer groups.",
		"STREAM <key> [FULL [COUNT <count>]",
		"    Show information about the stream.",
	), nil
}

func cmdXinfoGroups(c *client, args [][]byte) (any, error) {
	st, err := c.streamOrNoKey(args[2])
	if err != nil {
		return nil, err
	}
	out := resp.Array{}
	for _, g := range st.Groups() {
		var er any
		if g.EntriesRead != store.InvalidEntriesRead {
			er = g.EntriesRead
		}
		var lag any
		if l, ok := st.Lag(g); ok {
			lag = l
		}
		out = append(out, resp.Map{
			"name", g.Name,
			"consumers", len(g.Consumers),
			"pending", g.PEL.Len(),
			"last-delivered-id", idReply(g.LastID),
			"entries-read", er,
			"lag", lag,
		})
	}
	return out, nil
}

func cmdXinfoConsumers(c *client, args [][]byte) (any, error) {
	st, err := c.streamOrNoKey(args[2])
	if err != nil {
		return nil, err
	}
	g := st.Group(string(args[3]))
	if g == nil {
		return nil, errorf("NOGROUP No such consumer group '%s' for key name '%s'", args[3], args[2])
	}
	now := c.s.store.NowMs()
	out := resp.Array{}
	for _, cn := range g.SortedConsumers() {
		out = append(out, resp.Map{
			"name", cn.Name,
			"pending", cn.PEL.Len(),
			"idle", max(now-cn.SeenTime, 0),
		})
	}
	return out, nil
}

func cmdXinfoStream(c *client, args [][]byte) (any, error) {
	full := false
	count := int64(10)
	if len(args) > 3 {
		if !eq(args[3], "full") {
			return nil, errorf("ERR unknown subcommand or wrong number of arguments for '%s'. Try XINFO HELP.", args[1])
		}
		full = true
		if len(args) > 4 {
			if len(args) != 6 || !eq(args[4], "count") {
				return nil, errSyntax
			}
			n, ok := parseInt(args[5])
			if !ok {
				return nil, errNotInteger
			}
			count = max(n, 0)
		}
	}
	st, err := c.streamOrNoKey(args[2])
	if err != nil {
		return nil, err
	}
	out := resp.Map{
		"length", int64(st.Len()),
		"radix-tree-keys", st.NumNodes(),
		"radix-tree-nodes", radixNodes(st.NumNodes()),
		"last-generated-id", idReply(st.LastID),
		"max-deleted-entry-id", idReply(st.MaxDeletedID),
		"entries-added", int64(st.EntriesAdded),
	}
	if !full {
		var first, last any
		st.Range(store.ID{}, store.MaxID, 1, false, func(id store.ID, fv [][]byte) bool {
			first = entryReply(id, fv)
			return false
		})
		st.Range(store.ID{}, store.MaxID, 1, true, func(id store.ID, fv [][]byte) bool {
			last = entryReply(id, fv)
			return false
		})
		out = append(out, "recorded-first-entry-id", idReply(st.FirstID),
			"groups", st.NumGroups(), "first-entry", first, "last-entry", last)
		return out, nil
	}
	out = append(out, "recorded-first-entry-id", idReply(st.FirstID))
	entries := resp.Array{}
	st.Range(store.ID{}, store.MaxID, int(min(count, math.MaxInt32)), false, func(id store.ID, fv [][]byte) bool {
		entries = append(entries, entryReply(id, fv))
		return true
	})
	out = append(out, "entries", entries)
	groups := resp.Array{}
	for _, g := range st.Groups() {
		var er, lag any
		if g.EntriesRead != store.InvalidEntriesRead {
			er = g.EntriesRead
		}
		if l, ok := st.Lag(g); ok {
			lag = l
		}
		pel := resp.Array{}
		g.PEL.Ascend(store.ID{}, store.MaxID, func(nk *store.Nack) bool {
			if count > 0 && int64(len(pel)) >= count {
				return false
			}
			pel = append(pel, resp.Array{idReply(nk.ID), nk.Consumer.Name, nk.DeliveryTime, nk.DeliveryCount})
			return true
		})
		consumers := resp.Array{}
		for _, cn := range g.SortedConsumers() {
			cpel := resp.Array{}
			cn.PEL.Ascend(store.ID{}, store.MaxID, func(nk *store.Nack) bool {
				if count > 0 && int64(len(cpel)) >= count {
					return false
				}
				cpel = append(cpel, resp.Array{idReply(nk.ID), nk.DeliveryTime, nk.DeliveryCount})
				return true
			})
			consumers = append(consumers, resp.Map{
				"name", cn.Name,
				"seen-time", cn.SeenTime,
				"pel-count", cn.PEL.Len(),
				"pending", cpel,
			})
		}
		groups = append(groups, resp.Map{
			"name", g.Name,
			"last-delivered-id", idReply(g.LastID),
			"entries-read", er,
			"lag", lag,
			"pel-count", g.PEL.Len(),
			"pending", pel,
			"consumers", consumers,
		})
	}
	out = append(out, "groups", groups)
	return out, nil
}

// radixNodes approximates the rax node count Redis reports for n keys.
func radixNodes(n int) int {
	if n == 0 {
		return 1
	}
	return n + (n+1)/2
}
