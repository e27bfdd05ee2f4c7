//go:build qbench_dummy

package main

// The one wiring line of the test-only engine (TestDummyEngineByRegistrationAlone builds qbench
// with -tags qbench_dummy): what engines/all/all.go holds for a real engine.
import _ "qbench/engines/enginetest/dummy"
