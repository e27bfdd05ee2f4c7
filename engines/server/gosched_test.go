package server

import "runtime"

func runtimeGosched() { runtime.Gosched() }
