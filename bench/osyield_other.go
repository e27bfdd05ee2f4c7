//go:build !linux

package bench

func consumerOSYield() bool { return false }

func osYield() {}
