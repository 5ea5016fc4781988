package exec

import (
	"errors"
	"fmt"
)

// ErrorCode is a native protocol error code.
type ErrorCode int32

// The error codes statements fail with.
const (
	ServerError    ErrorCode = 0x0000
	SyntaxError    ErrorCode = 0x2000
	Unauthorized   ErrorCode = 0x2100
	Invalid        ErrorCode = 0x2200
	ConfigError    ErrorCode = 0x2300
	AlreadyExists  ErrorCode = 0x2400
	UnpreparedCode ErrorCode = 0x2500
)

// Error is a statement's failure as a client sees it.
type Error struct {
	Code    ErrorCode
	Message string
	// Keyspace and Table name what AlreadyExists found (Table empty for a
	// keyspace).
	Keyspace, Table string
	// onData says the failure comes from the data the statement found
	// (a list too short), not from the statement: preparing, which runs
	// against no data, passes over it.
	onData bool
	// unset says a value the statement needed was bound to "unset".
	unset bool
}

func (e *Error) Error() string { return e.Message }

// dataf is invalidf for a failure that depends on the data read.
func dataf(format string, args ...any) *Error {
	e := invalidf(format, args...)
	e.onData = true
	return e
}

func invalidf(format string, args ...any) *Error {
	return &Error{Code: Invalid, Message: fmt.Sprintf(format, args...)}
}

func configf(format string, args ...any) *Error {
	return &Error{Code: ConfigError, Message: fmt.Sprintf(format, args...)}
}

func syntaxf(format string, args ...any) *Error {
	return &Error{Code: SyntaxError, Message: fmt.Sprintf(format, args...)}
}

func unauthorizedf(format string, args ...any) *Error {
	return &Error{Code: Unauthorized, Message: fmt.Sprintf(format, args...)}
}

// asInvalid turns a plain error (from schema or cqltype, which speak in
// Cassandra's words but know no codes) into an Invalid error.
func asInvalid(err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e // a callback's own error, through a wrapping layer
	}
	return &Error{Code: Invalid, Message: err.Error()}
}

// asConfig is asInvalid for configuration problems.
func asConfig(err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: ConfigError, Message: err.Error()}
}
