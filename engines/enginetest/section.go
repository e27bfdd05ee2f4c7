// Package enginetest holds what engine packages' tests share: decoding an engine's section as
// scenario validation does. Its dummy subpackage is an engine registered by one import.
package enginetest

import (
	"errors"
	"io"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Section returns the decode function a registration's Decode receives, reading section (the
// YAML inside an engine's own key) strictly: an unknown key or a wrong type is an error, an
// empty section decodes nothing (the defaults stay).
func Section(section string) func(into any) error {
	return func(into any) error {
		dec := yaml.NewDecoder(strings.NewReader(section))
		dec.KnownFields(true)
		if err := dec.Decode(into); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		return nil
	}
}
