//go:build !unix

package redisq

import (
	"context"
	"net"
)

// quietDialer is dial itself where there are no raw sockets.
func quietDialer(_ *spinner, dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return dial
}
