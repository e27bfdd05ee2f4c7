//go:build unix && !linux

package store

func mapPopulate() int { return 0 }

func populate([]byte) {}
