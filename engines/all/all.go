// Package all links every engine into a program: a blank import of each engine package, whose
// init registers it (engines.Register). The qbench command and the runner's tests import this
// one package, so an engine is wired in by one line here and nowhere else.
package all

import (
	_ "qbench/engines/kafkaq"
	_ "qbench/engines/natsq"
	_ "qbench/engines/nullq"
	_ "qbench/engines/rabbitq"
	_ "qbench/engines/rediscluster"
	_ "qbench/engines/redisq"
	_ "qbench/engines/sentinelq"
)
