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

func (l *eventLoop) noteUnblocked(*blockSpec) {}

func (l *eventLoop) noteWritable(*client) {}

func (l *eventLoop) spinCounts() (spins, hits int64) { return 0, 0 }

func (l *eventLoop) handoffCount() int64 { return 0 }
