package server

import "qbench/engines/server/resp"

// FUNCTION: the server has no scripting, so no library is ever loaded; test harnesses that
// reset state with FUNCTION FLUSH, and tools that list functions, get Redis's answers for an
// empty library set.
var functionCommands = []*command{
	{name: "function", arity: -2, group: "scripting", summary: "A container for function commands", subs: []*command{
		{name: "flush", arity: -2, flags: flagWrite | flagNoScript, group: "scripting", summary: "Deleting all functions", h: cmdFunctionFlush},
		{name: "list", arity: -2, flags: flagNoScript, group: "scripting", summary: "List information about all the functions", h: cmdFunctionList},
		{name: "delete", arity: 3, flags: flagWrite | flagNoScript, group: "scripting", summary: "Delete a function by name", h: cmdFunctionDelete},
		{name: "kill", arity: 2, flags: flagNoScript, group: "scripting", summary: "Kill the function currently in execution.", h: cmdFunctionKill},
		{name: "help", arity: 2, flags: flagLoading | flagStale, group: "scripting", summary: "Show helpful text about the different subcommands", h: cmdFunctionHelp},
	}},
}

func cmdFunctionFlush(c *client, args [][]byte) (any, error) {
	if len(args) > 3 {
		return nil, errorf("ERR unknown subcommand or wrong number of arguments for '%s'. Try FUNCTION HELP.", args[1])
	}
	if len(args) == 3 && !eq(args[2], "sync") && !eq(args[2], "async") {
		return nil, redisError("ERR FUNCTION FLUSH only supports SYNC|ASYNC option")
	}
	return resp.OK, nil
}

func cmdFunctionList(c *client, args [][]byte) (any, error) {
	for i := 2; i < len(args); i++ {
		switch {
		case eq(args[i], "withcode"):
		case eq(args[i], "libraryname"):
			if i+1 == len(args) {
				return nil, redisError("ERR library name argument was not given")
			}
			i++
		default:
			return nil, errorf("ERR Unknown argument %s", args[i])
		}
	}
	return resp.Array{}, nil
}

func cmdFunctionDelete(c *client, args [][]byte) (any, error) {
	return nil, redisError("ERR Library not found")
}

func cmdFunctionKill(c *client, args [][]byte) (any, error) {
	return nil, redisError("NOTBUSY No scripts in execution right now.")
}

func cmdFunctionHelp(c *client, args [][]byte) (any, error) {
	return helpReply("FUNCTION",
		"DELETE <LIBRARY NAME>", "    Delete the given library.",
		"FLUSH [ASYNC|SYNC]", "    Delete all the libraries.",
		"    When called without the optional mode argument, the behavior is determined by the",
		"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
		"    * ASYNC: Asynchronously flush the libraries.",
		"    * SYNC: Synchronously flush the libraries.",
		"KILL", "    Kill a running function.",
		"LIST [LIBRARYNAME PATTERN] [WITHCODE]", "    Return general information on all the libraries:",
		"    * Library name", "    * The engine used to run the Library",
		"    * Library description", "    * Functions list",
		"    * Library code (if WITHCODE is given)",
		"    It also possible to get only function that matches a pattern using LIBRARYNAME argument."), nil
}
