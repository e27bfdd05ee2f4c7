# Sourced by the benchmark scripts that measure against redis-server (not run alone):
#   . scenarios/library/generator/redis-server.sh
#   redis_start "$work"   # a redis-server on a free loopback port, no persistence, its files in
#                         # $work; sets port and pid and returns once it answers PING (exit 1 if
#                         # it never does).
#   redis_stop            # at exit: stops it by $pid and waits for it, so that the caller's
#                         # rm -rf of its directory does not race its last log lines
redis_start() {
	port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
	redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$1" --logfile "$1/redis.log" &
	pid=$!
	for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && return 0; sleep 0.1; done
	echo "redis-server on 127.0.0.1:$port never answered PING ($1/redis.log)" >&2
	kill "$pid" 2>/dev/null
	exit 1
}

redis_stop() {
	[[ -n "${pid:-}" ]] || return 0
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}
