package bench_test

import (
	"os"
	"testing"

	"qbench/engines/redisq"
)

func TestMain(m *testing.M) {
	// The "server" target starts this test binary again as the in-repo server.
	redisq.RunChildServerIfAsked()
	code := m.Run()
	stopSharedKafka()
	os.Exit(code)
}
