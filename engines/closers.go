package engines

import (
	"errors"
	"io"
	"sync"
)

// ErrClosed is what Closers.Track returns once the engine has closed.
var ErrClosed = errors.New("engine closed")

// Closers holds what an engine opened for a run (its producers' and consumers' clients), so that
// the engine's Close closes each exactly once, also those the runner did not close itself. The
// zero value is ready; it is safe for concurrent use.
type Closers struct {
	mu     sync.Mutex
	list   []io.Closer
	closed bool
}

// Track adds c to what CloseAll closes. After CloseAll it closes c at once and returns
// ErrClosed: nothing opened after the engine closed is left open.
func (cs *Closers) Track(c io.Closer) error {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.closed {
		c.Close()
		return ErrClosed
	}
	cs.list = append(cs.list, c)
	return nil
}

// CloseAll closes everything tracked, once, and joins their errors; first is false (and nothing
// is done) on every call after the first.
func (cs *Closers) CloseAll() (first bool, err error) {
	cs.mu.Lock()
	if cs.closed {
		cs.mu.Unlock()
		return false, nil
	}
	list := cs.list
	cs.list, cs.closed = nil, true
	cs.mu.Unlock()
	var errs []error
	for _, c := range list {
		errs = append(errs, c.Close())
	}
	return true, errors.Join(errs...)
}
