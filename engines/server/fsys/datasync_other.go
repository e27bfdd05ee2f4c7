//go:build !linux

package fsys

import "os"

func wrap(f *os.File) File { return f }
