package invariants

import (
	"errors"
	"fmt"
	"math/rand/v2"
)

// ErrCorruption marks bytes that failed a checksum or could not be decoded.
// Format packages wrap it with the file and offset, so callers can tell corrupt
// data from an I/O failure with errors.Is.
var ErrCorruption = errors.New("corruption")

// Corruptf returns an error that wraps ErrCorruption.
func Corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorruption, fmt.Sprintf(format, args...))
}

// AssertionError is the value Sibyl code panics with: a broken internal
// invariant, never bad input.
type AssertionError struct{ msg string }

func (e *AssertionError) Error() string { return "assertion failed: " + e.msg }

// Failf builds an assertion error to panic with.
func Failf(format string, args ...any) error {
	return &AssertionError{msg: fmt.Sprintf(format, args...)}
}

// Sometimes reports true with probability p in invariant builds, so tests
// exercise paths that production rarely takes. It is always false otherwise.
func Sometimes(p float64) bool {
	if !Enabled {
		return false
	}
	return rand.Float64() < p
}
