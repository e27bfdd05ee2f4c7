package server

import (
	"fmt"
	"strings"
)

// redisError is an error reply; its text is what the client receives after '-'.
type redisError string

func (e redisError) Error() string { return string(e) }

// Redis 7.0's error strings, byte for byte (server.c createSharedObjects, t_stream.c, ...).
const (
	errWrongType         redisError = "WRONGTYPE Operation against a key holding the wrong kind of value"
	errSyntax            redisError = "ERR syntax error"
	errNotInteger        redisError = "ERR value is not an integer or out of range"
	errNotFloat          redisError = "ERR value is not a valid float"
	errOutOfRange        redisError = "ERR value is out of range, must be positive"
	errNoSuchKey         redisError = "ERR no such key"
	errIndexOutOfRange   redisError = "ERR index out of range"
	errDBIndex           redisError = "ERR DB index is out of range"
	errNoAuth            redisError = "NOAUTH Authentication required."
	errWrongPass         redisError = "WRONGPASS invalid username-password pair or user is disabled."
	errAuthNotSet        redisError = "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"
	errExecAbort         redisError = "EXECABORT Transaction discarded because of previous errors."
	errMultiNested       redisError = "ERR MULTI calls can not be nested"
	errExecNoMulti       redisError = "ERR EXEC without MULTI"
	errDiscardNoMulti    redisError = "ERR DISCARD without MULTI"
	errWatchInMulti      redisError = "ERR WATCH inside MULTI is not allowed"
	errTimeoutNotFloat   redisError = "ERR timeout is not a float or out of range"
	errTimeoutNotInt     redisError = "ERR timeout is not an integer or out of range"
	errTimeoutNegative   redisError = "ERR timeout is negative"
	errTimeoutOutOfRange redisError = "ERR timeout is out of range"
	errInvalidExpire     redisError = "ERR invalid expire time in 'set' command"
	errNoProto           redisError = "NOPROTO unsupported protocol version"
	errCountPositive     redisError = "ERR count should be greater than 0"

	errMaxClients    = "ERR max number of clients reached"
	errProtectedMode = "DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. In this mode connections are only accepted from the loopback interface. If you want to connect from external computers to Redis you may adopt one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. 3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. 4) Set up an authentication password for the default user. NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside."

	// Streams (t_stream.c).
	errStreamIDInvalid    redisError = "ERR Invalid stream ID specified as stream command argument"
	errStreamIDSmaller    redisError = "ERR The ID specified in XADD is equal or smaller than the target stream top item"
	errStreamIDZero       redisError = "ERR The ID specified in XADD must be greater than 0-0"
	errStreamExhausted    redisError = "ERR The stream has exhausted the last possible ID, unable to add more items"
	errBusyGroup          redisError = "BUSYGROUP Consumer Group name already exists"
	errXGroupNoKey        redisError = "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically."
	errLimitWithoutApprox redisError = "ERR syntax error, LIMIT cannot be used without the special ~ option"
	errMaxLenNegative     redisError = "ERR The MAXLEN argument must be >= 0."
	errLimitNegative      redisError = "ERR The LIMIT argument must be >= 0."
	errUnbalancedXread    redisError = "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified."
	errXreadGroupSpecial  redisError = "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set."
	errXreadGreaterThan   redisError = "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option."
	errSetIDSmaller       redisError = "ERR The ID specified in XSETID is smaller than the target stream top item"
	errSetIDEntriesAdded  redisError = "ERR The entries_added specified in XSETID is smaller than the target stream length"
	errSetIDMaxDeleted    redisError = "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id"
	errEntriesReadInvalid redisError = "ERR value for ENTRIESREAD must be positive or -1"
	errNoGroupDestroyed   redisError = "NOGROUP the consumer group this client was blocked on no longer exists"
	errStreamGone         redisError = "UNBLOCKED the stream key no longer exists"
	errStreamKeyDeleted   redisError = "ERR The ID argument cannot be a complete ID because xadd_id_propagation is disabled"
)

// errUnknownCommand is Redis's reply to an unknown command name.
func errUnknownCommand(args [][]byte) redisError {
	var b strings.Builder
	for _, a := range args[1:] {
		if b.Len() >= 128 {
			break
		}
		room := 128 - b.Len()
		s := string(a)
		if len(s) > room {
			s = s[:room]
		}
		b.WriteString("'" + s + "' ")
	}
	name := string(args[0])
	if len(name) > 128 {
		name = name[:128]
	}
	return redisError(fmt.Sprintf("ERR unknown command '%s', with args beginning with: %s", name, b.String()))
}

// errUnknownSubcommand is the reply to an unknown subcommand of a container command.
func errUnknownSubcommand(container string, sub []byte) redisError {
	s := string(sub)
	if len(s) > 128 {
		s = s[:128]
	}
	return redisError(fmt.Sprintf("ERR unknown subcommand '%s'. Try %s HELP.", s, strings.ToUpper(container)))
}

// errArity is the wrong-arity reply; fullname is "xadd" or "xgroup|create".
func errArity(fullname string) redisError {
	return redisError("ERR wrong number of arguments for '" + fullname + "' command")
}

func errNoGroup(key, group, cmd string) redisError {
	return redisError(fmt.Sprintf("NOGROUP No such key '%s' or consumer group '%s' in %s with GROUP option", key, group, cmd))
}

func errorf(format string, args ...any) redisError { return redisError(fmt.Sprintf(format, args...)) }
