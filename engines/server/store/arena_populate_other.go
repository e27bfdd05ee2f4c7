//go:build unix && !linux

package store

const mapPopulate = 0
