package store

import "syscall"

const mapPopulate = syscall.MAP_POPULATE
