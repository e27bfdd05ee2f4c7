//go:build !linux

package bench

const consumerOSYield = false

func osYield() {}
