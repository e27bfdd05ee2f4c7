//go:build !linux

package server

import "net"

// Off Linux every connection is served on its own goroutine (conn.go).

type loopTurn struct{}

type eventLoop struct{}

type loopConn struct{}

func startEventLoop(*Server) *eventLoop { return nil }

func (l *eventLoop) wake() {}

func (l *eventLoop) adopt(net.Conn) bool { return false }

func (l *eventLoop) spinCounts() (spins, hits int64) { return 0, 0 }
