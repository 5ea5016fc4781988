package exec

import (
	"errors"
	"fmt"
	"math"

	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/schema"
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

	// The failures of replicas, which the coordinator reports (their extra
	// fields are in Error.Replicas).
	Unavailable     ErrorCode = 0x1000
	Overloaded      ErrorCode = 0x1001
	IsBootstrapping ErrorCode = 0x1002
	TruncateError   ErrorCode = 0x1003
	WriteTimeout    ErrorCode = 0x1100
	ReadTimeout     ErrorCode = 0x1200
	ReadFailure     ErrorCode = 0x1300
	FunctionFailure ErrorCode = 0x1400
	WriteFailure    ErrorCode = 0x1500
	CDCWriteFailure ErrorCode = 0x1600
	CASWriteUnknown ErrorCode = 0x1700
)

// ReplicaFailure is what Unavailable, the timeouts and the failures say
// besides their message: the consistency level, how many replicas
// answered (or were alive) of how many it needed, and so on.
type ReplicaFailure struct {
	Consistency uint16 // the protocol's consistency code
	Received    int32  // answers (Unavailable: replicas alive)
	BlockFor    int32  // answers the consistency level needs
	DataPresent bool   // ReadTimeout, ReadFailure: the data replica answered
	NumFailures int32  // ReadFailure, WriteFailure
	// Failures are the failed replicas' addresses (4 or 16 bytes) and
	// reason codes, which protocol v5 sends instead of NumFailures.
	Failures []ReplicaReason
	// WriteType is WriteTimeout's and WriteFailure's SIMPLE, BATCH,
	// UNLOGGED_BATCH, COUNTER, BATCH_LOG, CAS, VIEW or CDC.
	WriteType   string
	Contentions uint16 // v5 WriteTimeout of a CAS write
	// Function, FunctionKeyspace and ArgTypes name a FunctionFailure's
	// function.
	FunctionKeyspace, Function string
	ArgTypes                   []string
}

// ReplicaReason is one replica's failure.
type ReplicaReason struct {
	Address []byte
	Reason  uint16
}

// Error is a statement's failure as a client sees it.
type Error struct {
	Code    ErrorCode
	Message string
	// Keyspace and Table name what AlreadyExists found (Table empty for a
	// keyspace).
	Keyspace, Table string
	// Replica holds the extra fields of the replica failures.
	Replica *ReplicaFailure
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
// Cassandra's words but know no codes) into an Invalid error, or a
// configuration error where schema says it is one.
func asInvalid(err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e // a callback's own error, through a wrapping layer
	}
	var ce *schema.ConfigurationError
	if errors.As(err, &ce) {
		return &Error{Code: ConfigError, Message: err.Error()}
	}
	var je *cqltype.JavaException
	if errors.As(err, &je) {
		return &Error{Code: ServerError, Message: err.Error()}
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

// coordinatorError is a coordinator's failure as the client sees it: the
// request package's failures of replicas with their protocol fields, an
// *Error as it is, anything else a server error.
func coordinatorError(err error) error {
	var (
		e  *Error
		u  *request.Unavailable
		wt *request.WriteTimeout
		rt *request.ReadTimeout
		f  *request.Failure
		tf *request.TruncateFailure
		cu *request.CASWriteUnknown
	)
	switch {
	case errors.As(err, &e):
		return e
	case errors.As(err, &u):
		return &Error{Code: Unavailable, Message: u.Error(),
			Replica: &ReplicaFailure{Consistency: uint16(u.Consistency), BlockFor: int32(u.Required), Received: int32(u.Alive)}}
	case errors.As(err, &wt):
		return &Error{Code: WriteTimeout, Message: wt.Error(),
			Replica: &ReplicaFailure{Consistency: uint16(wt.Consistency), BlockFor: int32(wt.BlockFor), Received: int32(wt.Received), WriteType: wt.WriteType,
				Contentions: uint16(min(wt.Contentions, math.MaxUint16))}}
	case errors.As(err, &cu):
		// Before protocol v5 the client gets it as a CAS write timeout.
		return &Error{Code: CASWriteUnknown, Message: cu.Error(),
			Replica: &ReplicaFailure{Consistency: uint16(cu.Consistency), BlockFor: int32(cu.BlockFor), Received: int32(cu.Received), WriteType: request.WriteCAS}}
	case errors.As(err, &rt):
		return &Error{Code: ReadTimeout, Message: rt.Error(),
			Replica: &ReplicaFailure{Consistency: uint16(rt.Consistency), BlockFor: int32(rt.BlockFor), Received: int32(rt.Received), DataPresent: rt.DataPresent}}
	case errors.As(err, &f):
		code := ReadFailure
		if f.Write {
			code = WriteFailure
		}
		rf := &ReplicaFailure{Consistency: uint16(f.Consistency), BlockFor: int32(f.BlockFor), Received: int32(f.Received),
			DataPresent: f.DataPresent, WriteType: f.WriteType, NumFailures: int32(len(f.Failures))}
		for _, r := range f.Failures {
			rf.Failures = append(rf.Failures, ReplicaReason{Address: inetAddress(r.Replica), Reason: uint16(r.Reason)})
		}
		return &Error{Code: code, Message: f.Error(), Replica: rf}
	case errors.As(err, &tf):
		return &Error{Code: TruncateError, Message: tf.Error()}
	}
	return &Error{Code: ServerError, Message: err.Error()}
}

// inetAddress is an address as the protocol's inetaddr carries it (an
// inet value: 4 bytes for IPv4, 16 for IPv6).
func inetAddress(addr string) []byte {
	b, _ := cqltype.InetType.FromString(addr)
	return b
}
