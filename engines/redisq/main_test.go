package redisq

import (
	"os"
	"testing"
)

// TestMain lets the test binary serve as the "server" target's child process.
func TestMain(m *testing.M) {
	RunChildServerIfAsked()
	os.Exit(m.Run())
}
