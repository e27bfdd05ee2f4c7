package redisq

import "qbench/engines/server"

// applyPersistence sets one Redis-named persistence setting on the in-repo server's config and
// reports whether the server knows it.
func applyPersistence(cfg *server.Config, dir, key, value string) bool {
	return false
}
