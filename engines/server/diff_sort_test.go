package server

import "testing"

// TestDiffRedisSort: SORT and SORT_RO as Redis 7.0.15's sortCommandGeneric: numeric and ALPHA
// order, ties, DESC, LIMIT edges, BY (string keys, hash fields, missing keys, a pattern without
// '*'), GET (#, patterns, missing), STORE (a list, its events, deleting the destination when
// the result is empty), the errors in their order, and the three source types.
func TestDiffRedisSort(t *testing.T) {
	runDiffCases(t, []diffCase{
		{"numeric-and-alpha", `
			RPUSH l 3 1 2 10 -1.5 2
			SORT l
			SORT l DESC
			SORT l ALPHA
			SORT l ALPHA DESC
			SORT l LIMIT 1 3
			SORT l LIMIT -5 2
			SORT l LIMIT 2 -1
			SORT l LIMIT 10 5
			SORT l LIMIT 0 0
			SORT l DESC LIMIT 1 2 ALPHA
			SORT_RO l DESC
			RPUSH bad 1 x 2
			SORT bad
			SORT bad ALPHA
			RPUSH sp " 5" "" "1e2" "inf" "-inf"
			SORT sp
			RPUSH nan nan
			SORT nan
			SORT nokey
			SORT nokey STORE dst`},
		{"by-and-get", `
			RPUSH l 1 2 3 4
			MSET w_1 40 w_2 10 w_3 30 o_1 one o_2 two o_3 three
			HSET h_1 f 4 name a
			HSET h_2 f 3 name b
			HSET h_3 f 2 name c
			HSET h_4 f 1
			SORT l BY w_*
			SORT l BY w_* DESC
			SORT l BY h_*->f
			SORT l BY h_*->f GET # GET o_* GET h_*->name
			SORT l BY nosort
			SORT l BY nosort DESC
			SORT l BY nosort LIMIT 1 2
			SORT l BY nosort DESC LIMIT 1 2
			SORT l BY w_* LIMIT 0 2 GET o_*
			SORT l GET nostar
			SORT l GET o_*->
			SORT l BY o_* ALPHA
			SORT l BY w_*->f
			SORT l BY h_*->name ALPHA
			SET w_4 notanumber
			SORT l BY w_*`},
		{"store", `
			RPUSH src c a b
			SORT src ALPHA STORE dst
			LRANGE dst 0 -1
			TYPE dst
			OBJECT ENCODING dst
			SET dst x
			EXPIRE dst 100
			SORT src ALPHA DESC STORE dst
			TTL dst
			LRANGE dst 0 -1
			SORT src ALPHA GET nokey_* GET # STORE dst
			LRANGE dst 0 -1
			SORT src ALPHA LIMIT 5 5 STORE dst
			EXISTS dst
			SORT src STORE dst
			SORT_RO src STORE dst
			SORT src ALPHA STORE`},
		{"sets-and-zsets", `
			SADD s 5 3 9 1
			SORT s
			SORT s DESC LIMIT 1 2
			SORT s BY nosort STORE d
			LRANGE d 0 -1
			SADD t b c a
			SORT t ALPHA
			SORT t BY nosort STORE d2
			LRANGE d2 0 -1
			ZADD z 1 c 2 a 3 b
			SORT z ALPHA
			SORT z BY nosort
			SORT z BY nosort DESC
			SORT z BY nosort LIMIT 1 1
			SORT z BY nosort DESC LIMIT 1 5
			SORT z`},
		{"errors", `
			RPUSH l 1 2
			SET str x
			SORT str
			SORT str FOO
			SORT l FOO
			SORT l LIMIT 1
			SORT l LIMIT x 1
			SORT l LIMIT 1 y
			SORT l BY
			SORT l GET
			SORT l STORE
			SORT_RO l STORE x
			SORT l ASC DESC ASC
			SORT`},
		{"store-wakes-blpop", `
			@1& BLPOP foo 5
			LPUSH notfoo hello hola aguacate konichiwa zanzibar
			SORT notfoo ALPHA STORE foo
			@1<
			LRANGE foo 0 -1`},
		{"store-wakes-blmpop", `
			@1& BLMPOP 5 1 foo LEFT COUNT 1
			LPUSH notfoo hello hola aguacate konichiwa zanzibar
			SORT notfoo ALPHA STORE foo
			@1<`},
		{"getkeys", `
			COMMAND GETKEYS SORT k
			COMMAND GETKEYS SORT k LIMIT 0 1 GET a_* BY b_* STORE d1 STORE d2
			COMMAND GETKEYS SORT k STORE
			COMMAND GETKEYS SORT_RO k BY x_*`},
	})
}

// TestDiffRedisSortNotifications: SORT ... STORE's events (new, sortstore; del when empty).
func TestDiffRedisSortNotifications(t *testing.T) {
	runDiffCases(t, []diffCase{
		{"events", `
			CONFIG SET notify-keyspace-events KEA
			@1 PSUBSCRIBE __key*__:*
			RPUSH src 2 1
			SORT src STORE dst
			SORT src STORE dst
			SORT nokey STORE dst
			CONFIG SET notify-keyspace-events ""
			@1 PUNSUBSCRIBE`},
	})
}

// TestDiffRedisSuiteListBlocking: the sequence of Redis 7.0.15's tests/unit/type/list.tcl that
// failed against this server (foreach pop {BLPOP BLMPOP_LEFT}: "when new key is moved into
// place", "when result key is created by SORT..STORE"; then "with 0.001 timeout should not
// block indefinitely"). Without SORT the first SORT..STORE test left its client blocked for
// 5 s, which took the next test's RENAME result and kept blocked_clients above 0.
func TestDiffRedisSuiteListBlocking(t *testing.T) {
	var cases []diffCase
	for _, pop := range []string{"BLPOP foo{t} 0", "BLMPOP 0 1 foo{t} LEFT COUNT 1"} {
		cases = append(cases, diffCase{pop, `
			DEL foo{t}
			@1& ` + pop + `
			LPUSH bob{t} abc def hij
			RENAME bob{t} foo{t}
			@1<
			LPOP foo{t}
			LPOP foo{t}
			LPOP foo{t}
			@2& ` + pop + `
			LPUSH notfoo{t} hello hola aguacate konichiwa zanzibar
			SORT notfoo{t} ALPHA STORE foo{t}
			@2<
			DEL notfoo{t} foo{t}`})
	}
	cases = append(cases, diffCase{"timeout-0.001", `
		@1 BLPOP blist1 0.001
		@1 BRPOP blist1 0.001
		@1 BLMPOP 0.001 1 blist1 LEFT
		@1 BLMPOP 0.001 1 blist1 RIGHT COUNT 2
		@1 BZMPOP 0.001 1 blist1 MIN
		@1 BLMOVE blist1 x LEFT RIGHT 0.001`},
		diffCase{"moved-into-place", `
			@1& BLMPOP 0 2 a b RIGHT COUNT 2
			RPUSH src 1 2 3
			MOVE src 1
			SELECT 1
			RENAME src b
			MOVE b 0
			SELECT 0
			@1<
			@2& BLMPOP 0 1 c LEFT COUNT 5
			RPUSH src2 x y
			COPY src2 c
			@2<
			@3& BZMPOP 0 1 zz MAX COUNT 2
			ZADD zsrc 1 a 2 b 3 c
			RENAME zsrc zz
			@3<`})
	runDiffCases(t, cases)
}
