package server

import "qbench/engines/server/resp"

// COMMAND GETKEYS: the key positions of a command as Redis's getKeysSubcommandImpl finds
// them, from the table's first/last/step and, for the commands whose keys move (XREAD,
// XREADGROUP, LMPOP, BLMPOP, SINTERCARD), from their arguments.

// movableKeys finds the keys of commands whose positions depend on their arguments; ok is
// false when the command has none of its own rule.
func movableKeys(cmd *command, args [][]byte) (keys [][]byte, ok bool) {
	switch cmd.fullname {
	case "xread", "xreadgroup":
		for i := 1; i < len(args); i++ {
			if eq(args[i], "streams") {
				// The key spec's range with limit 2: the first half of what follows.
				rest := len(args) - i - 1
				return args[i+1 : i+1+rest/2], true
			}
		}
		return nil, true
	case "sort", "sort_ro":
		// sortGetKeys: the key, and SORT's last STORE destination, skipping LIMIT's, GET's
		// and BY's arguments.
		if len(args) < 2 {
			return nil, true
		}
		keys = [][]byte{args[1]}
		store := -1
		for i := 2; i < len(args); i++ {
			switch {
			case eq(args[i], "limit"):
				i += 2
			case eq(args[i], "get"), eq(args[i], "by"):
				i++
			case cmd.fullname == "sort" && eq(args[i], "store") && i+1 < len(args):
				store = i + 1
			}
		}
		if store >= 0 {
			keys = append(keys, args[store])
		}
		return keys, true
	case "lmpop", "blmpop", "zmpop", "bzmpop", "sintercard":
		at := 1
		if cmd.fullname == "blmpop" || cmd.fullname == "bzmpop" {
			at = 2
		}
		if len(args) <= at {
			return nil, true
		}
		n, valid := parseInt(args[at])
		if !valid || n <= 0 || n > int64(len(args)-at-1) {
			return nil, true
		}
		return args[at+1 : at+1+int(n)], true
	}
	return nil, false
}

func cmdCommandGetkeys(c *client, args [][]byte) (any, error) {
	target := args[2:]
	cmd := lookupName(commandTable, target[0])
	if cmd != nil && cmd.subIndex != nil && len(target) > 1 {
		cmd = lookupName(cmd.subIndex, target[1])
	}
	if cmd == nil {
		return nil, redisError("ERR Invalid command specified")
	}
	keys, movable := movableKeys(cmd, target)
	if !movable && cmd.firstKey == 0 {
		return nil, redisError("ERR The command has no key arguments")
	}
	if (cmd.arity > 0 && cmd.arity != len(target)) || len(target) < -cmd.arity {
		return nil, redisError("ERR Invalid number of arguments specified for command")
	}
	if movable {
		keys, _ = movableKeys(cmd, target)
	} else {
		last := cmd.lastKey
		if last < 0 {
			last += len(target)
		}
		for i := cmd.firstKey; i <= last && i < len(target); i += cmd.step {
			keys = append(keys, target[i])
		}
	}
	if len(keys) == 0 {
		return nil, redisError("ERR Invalid arguments specified for command")
	}
	out := make(resp.Array, len(keys))
	for i, k := range keys {
		out[i] = k
	}
	return out, nil
}
