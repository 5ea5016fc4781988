package cqltype

import (
	crand "crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Cassandra 4.1's native scalar functions that work on single values: the
// time functions (TimeFcts), uuid() (UuidFcts) and the blob conversions
// (BytesConversionFcts), with Cassandra's overload resolution
// (FunctionResolver) and its error messages, and floor(). Aggregates,
// token(), casts, JSON and arithmetic belong to the executor.

// Function is one native scalar function signature. Overloads (todate of a
// timeuuid and of a timestamp) are separate Functions with the same Name.
type Function struct {
	Name    string  // lower case, as CQL folds unquoted names: "tounixtimestamp"
	Args    []*Type // parameter types
	Returns *Type
	// Pure reports that equal arguments always give equal results, so a
	// call with constant arguments may be evaluated once. The clock and
	// random functions are not pure.
	Pure bool
	impl func(env *FunctionEnv, args [][]byte) ([]byte, error)
}

// QualifiedName is the name Cassandra prints in messages: "system.todate".
func (f *Function) QualifiedName() string { return "system." + f.Name }

// String is Cassandra's signature form: "system.todate : (timeuuid) -> date".
func (f *Function) String() string {
	var b strings.Builder
	b.WriteString(f.QualifiedName())
	b.WriteString(" : (")
	for i, a := range f.Args {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(a.String())
	}
	b.WriteString(") -> ")
	b.WriteString(f.Returns.SchemaString())
	return b.String()
}

// ArgName is the receiver name Cassandra gives argument i when it prepares
// the argument's value, as in `Invalid STRING constant (x) for
// "arg0(system.intasblob)" of type int`.
func (f *Function) ArgName(i int) string {
	return "arg" + strconv.Itoa(i) + "(" + f.QualifiedName() + ")"
}

// Call runs the function. args holds one serialized value per parameter,
// nil for null; functions return nil (null) for null arguments, as
// Cassandra's do, and most of them also for empty values. Arguments that are
// not valid values of the parameter types are refused with an error.
func (f *Function) Call(env *FunctionEnv, args [][]byte) ([]byte, error) {
	if len(args) != len(f.Args) {
		return nil, fmt.Errorf("Invalid number of arguments in call to function %s: %d required but %d provided",
			f.QualifiedName(), len(f.Args), len(args))
	}
	for i, a := range args {
		if a == nil {
			continue
		}
		if err := f.Args[i].Validate(a); err != nil {
			return nil, fmt.Errorf("Invalid value for argument %d of function %s: %v", i, f.QualifiedName(), err)
		}
	}
	if env == nil {
		env = defaultEnv
	}
	return f.impl(env, args)
}

// FunctionEnv is what the impure functions read: the clock, randomness and
// the timeuuid generator's state. One env should serve a whole node (or a
// whole test): now() is strictly increasing only within one env. The zero
// value works (system clock, crypto randomness); tests set Now, Rand and
// ClockSeqAndNode to get fixed results. Safe for concurrent use.
type FunctionEnv struct {
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// Rand supplies uuid() and, when ClockSeqAndNode is zero, the timeuuid
	// clock sequence and node; nil means crypto/rand.
	Rand *rand.Rand
	// ClockSeqAndNode is the low 64 bits of every timeuuid now() makes:
	// variant, 14-bit clock sequence, 48-bit node. Zero means pick one at
	// random on first use, as Cassandra does at startup.
	ClockSeqAndNode uint64

	mu         sync.Mutex
	lastMicros int64
}

var defaultEnv = &FunctionEnv{}

// Time reads the env's clock.
func (e *FunctionEnv) Time() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

// randomBytes fills b; e.mu must be held (rand.Rand is not safe for
// concurrent use).
func (e *FunctionEnv) randomBytes(b []byte) {
	if e.Rand == nil {
		_, _ = crand.Read(b) // never fails on supported platforms (Go 1.24+)
		return
	}
	for i := 0; i < len(b); i += 8 {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], e.Rand.Uint64())
		copy(b[i:], w[:])
	}
}

// uuidEpochOffset is the number of 100ns intervals between the UUID epoch
// (1582-10-15) and the Unix epoch.
const uuidEpochOffset = 12219292800000 * 10000

// rawTimestampToMSB lays a 60-bit UUID timestamp out as the high 64 bits of
// a version 1 UUID: time_low, time_mid, version and time_hi.
func rawTimestampToMSB(raw uint64) uint64 {
	return 0x1000 | raw>>48 | (raw&0xFFFF00000000)>>16 | raw<<32
}

// msbToRawTimestamp inverts rawTimestampToMSB, dropping the version.
func msbToRawTimestamp(msb uint64) uint64 {
	msb &^= 0xF000
	return (msb&0xFFFF)<<48 | (msb&0xFFFF0000)<<16 | msb>>32
}

// NextTimeUUID returns a new version 1 UUID for the env's current time, as
// Cassandra's now() makes them: microsecond resolution from a millisecond
// clock, bumped by one microsecond whenever the clock has not moved past
// the previous value, so results strictly increase within the env.
func (e *FunctionEnv) NextTimeUUID() []byte {
	micros := e.Time().UnixMilli() * 1000
	e.mu.Lock()
	if micros > e.lastMicros {
		e.lastMicros = micros
	} else {
		e.lastMicros++
		micros = e.lastMicros
	}
	if e.ClockSeqAndNode == 0 {
		var b [8]byte
		e.randomBytes(b[:])
		r := binary.BigEndian.Uint64(b[:])
		// Variant 10, a random clock sequence, a random node with the
		// multicast bit set (RFC 4122 4.5: the node is not a MAC address).
		e.ClockSeqAndNode = 0x8000000000000000 | (r>>48&0x3FFF)<<48 | r&0xFFFFFFFFFFFF | 0x010000000000
	}
	lsb := e.ClockSeqAndNode
	e.mu.Unlock()
	raw := uint64(micros*10) + uuidEpochOffset
	out := binary.BigEndian.AppendUint64(make([]byte, 0, 16), rawTimestampToMSB(raw))
	return binary.BigEndian.AppendUint64(out, lsb)
}

// RandomUUID returns a version 4 UUID, as uuid() does.
func (e *FunctionEnv) RandomUUID() []byte {
	b := make([]byte, 16)
	e.mu.Lock()
	e.randomBytes(b)
	e.mu.Unlock()
	b[6] = b[6]&0x0F | 0x40
	b[8] = b[8]&0x3F | 0x80
	return b
}

// TimeUUIDUnixMillis returns the Unix time in milliseconds of a version 1
// UUID, truncated toward zero as Cassandra's TimeUUID.unix does.
func TimeUUIDUnixMillis(u []byte) (int64, error) {
	if len(u) != 16 {
		return 0, fmt.Errorf("TimeUUID should be 16 bytes (%d)", len(u))
	}
	raw := int64(msbToRawTimestamp(binary.BigEndian.Uint64(u)))
	micros := raw/10 - uuidEpochOffset/10
	return micros / 1000, nil
}

// MinTimeUUID and MaxTimeUUID are the smallest and largest timeuuids (in
// timeuuid order) of a millisecond, as minTimeuuid and maxTimeuuid make
// them: their clock sequence and node are 0x80... and 0x7f... because
// timeuuid order compares those bytes as signed.
func MinTimeUUID(unixMillis int64) []byte {
	raw := uint64(unixMillis*10000) + uuidEpochOffset
	out := binary.BigEndian.AppendUint64(make([]byte, 0, 16), rawTimestampToMSB(raw))
	return binary.BigEndian.AppendUint64(out, 0x8080808080808080)
}

// TimeUUIDAt builds the version 1 UUID of a time given in 100 ns ticks
// since the Unix epoch, with the given low 64 bits (variant, clock
// sequence and node).
func TimeUUIDAt(unixTicks int64, low uint64) []byte {
	raw := uint64(unixTicks) + uuidEpochOffset
	out := binary.BigEndian.AppendUint64(make([]byte, 0, 16), rawTimestampToMSB(raw))
	return binary.BigEndian.AppendUint64(out, low)
}

// TimeUUIDTicks is TimeUUIDAt's inverse: the time of a version 1 UUID in
// 100 ns ticks since the Unix epoch, and its low 64 bits.
func TimeUUIDTicks(u []byte) (unixTicks int64, low uint64, err error) {
	if len(u) != 16 {
		return 0, 0, fmt.Errorf("TimeUUID should be 16 bytes (%d)", len(u))
	}
	msb := binary.BigEndian.Uint64(u)
	if msb>>12&0xF != 1 {
		return 0, 0, fmt.Errorf("a version %d UUID is not a TimeUUID", msb>>12&0xF)
	}
	return int64(msbToRawTimestamp(msb) - uuidEpochOffset), binary.BigEndian.Uint64(u[8:]), nil
}

// MaxTimeUUID: see MinTimeUUID.
func MaxTimeUUID(unixMillis int64) []byte {
	raw := uint64((unixMillis+1)*10000) + uuidEpochOffset - 1
	out := binary.BigEndian.AppendUint64(make([]byte, 0, 16), rawTimestampToMSB(raw))
	return binary.BigEndian.AppendUint64(out, 0x7F7F7F7F7F7F7F7F)
}

// millisToDate converts a Unix time in milliseconds to the wire form of a
// date like SimpleDateSerializer.timeInMillisToDay: whole seconds (floored)
// divided into days truncating toward zero, so the day before the epoch
// rounds up to the epoch, as in Cassandra. The result wraps like Java's int.
func millisToDate(ms int64) []byte {
	secs := ms / 1000
	if ms%1000 < 0 {
		secs--
	}
	days := secs / 86400
	return binary.BigEndian.AppendUint32(nil, uint32(days+1<<31))
}

// dateToMillis converts a date's wire form to the Unix time of its midnight.
func dateToMillis(v []byte) int64 {
	d, _ := DecodeDate(v)
	return int64(d) * millisPerDay
}

// temporalMillis reads a timeuuid, timestamp or date as Unix milliseconds.
func temporalMillis(k Kind, v []byte) int64 {
	switch k {
	case Timeuuid:
		ms, _ := TimeUUIDUnixMillis(v)
		return ms
	case Date:
		return dateToMillis(v)
	}
	ms, _ := DecodeTimestamp(v)
	return ms
}

var (
	nativeFunctions []*Function
	functionsByName = map[string][]*Function{}
)

func register(f *Function) {
	nativeFunctions = append(nativeFunctions, f)
	functionsByName[f.Name] = append(functionsByName[f.Name], f)
}

// Registration order is Cassandra's, which its messages list overloads in.
func init() {
	register(&Function{Name: "uuid", Returns: UUIDType, impl: func(env *FunctionEnv, _ [][]byte) ([]byte, error) {
		return env.RandomUUID(), nil
	}})
	nowFn := func(name string, ret *Type, gen func(env *FunctionEnv) []byte) {
		register(&Function{Name: name, Returns: ret, impl: func(env *FunctionEnv, _ [][]byte) ([]byte, error) {
			return gen(env), nil
		}})
	}
	nowFn("now", TimeuuidType, (*FunctionEnv).NextTimeUUID)
	nowFn("currenttimeuuid", TimeuuidType, (*FunctionEnv).NextTimeUUID)
	nowFn("currenttimestamp", TimestampType, func(env *FunctionEnv) []byte {
		return EncodeTimestamp(env.Time().UnixMilli())
	})
	nowFn("currentdate", DateType, func(env *FunctionEnv) []byte {
		return millisToDate(env.Time().UnixMilli())
	})
	nowFn("currenttime", TimeType, func(env *FunctionEnv) []byte {
		t := env.Time().UTC()
		return EncodeTime(int64(t.Hour()*3600+t.Minute()*60+t.Second())*nanosPerSecond + int64(t.Nanosecond()))
	})
	// Null in, null out. Cassandra fails with an internal error on an
	// empty timestamp or timeuuid here; null is the kinder answer.
	timeFn := func(name string, ret, arg *Type, body func(v []byte) []byte) {
		register(&Function{Name: name, Args: []*Type{arg}, Returns: ret, Pure: true,
			impl: func(_ *FunctionEnv, args [][]byte) ([]byte, error) {
				if len(args[0]) == 0 {
					return nil, nil
				}
				return body(args[0]), nil
			}})
	}
	timeFn("mintimeuuid", TimeuuidType, TimestampType, func(v []byte) []byte {
		ms, _ := DecodeTimestamp(v)
		return MinTimeUUID(ms)
	})
	timeFn("maxtimeuuid", TimeuuidType, TimestampType, func(v []byte) []byte {
		ms, _ := DecodeTimestamp(v)
		return MaxTimeUUID(ms)
	})
	timeFn("dateof", TimestampType, TimeuuidType, func(v []byte) []byte {
		return EncodeTimestamp(temporalMillis(Timeuuid, v))
	})
	timeFn("unixtimestampof", BigintType, TimeuuidType, func(v []byte) []byte {
		return EncodeBigint(temporalMillis(Timeuuid, v))
	})
	toDate := func(from *Type) {
		timeFn("todate", DateType, from, func(v []byte) []byte { return millisToDate(temporalMillis(from.Kind, v)) })
	}
	toTimestamp := func(from *Type) {
		timeFn("totimestamp", TimestampType, from, func(v []byte) []byte { return EncodeTimestamp(temporalMillis(from.Kind, v)) })
	}
	toUnix := func(from *Type) {
		timeFn("tounixtimestamp", BigintType, from, func(v []byte) []byte { return EncodeBigint(temporalMillis(from.Kind, v)) })
	}
	toDate(TimeuuidType)
	toTimestamp(TimeuuidType)
	toUnix(TimeuuidType)
	toUnix(TimestampType)
	toDate(TimestampType)
	toUnix(DateType)
	toTimestamp(DateType)
	registerFloor()
	registerMath()

	// Cassandra walks its native type list in this order, blob excluded.
	for _, k := range []Kind{Ascii, Bigint, Boolean, Counter, Date, Decimal, Double, Duration, Float, Inet, Int,
		Smallint, Text, Time, Timestamp, Timeuuid, Tinyint, UUID, Varint} {
		t := Native(k)
		register(&Function{Name: k.String() + "asblob", Args: []*Type{t}, Returns: BlobType, Pure: true, impl: identity})
		register(&Function{Name: "blobas" + k.String(), Args: []*Type{BlobType}, Returns: t, Pure: true, impl: fromBlob(t)})
	}
	register(&Function{Name: "varcharasblob", Args: []*Type{TextType}, Returns: BlobType, Pure: true, impl: identity})
	// Cassandra's blobasvarchar does not check the bytes are UTF-8.
	register(&Function{Name: "blobasvarchar", Args: []*Type{BlobType}, Returns: TextType, Pure: true, impl: identity})
}

func identity(_ *FunctionEnv, args [][]byte) ([]byte, error) { return args[0], nil }

func fromBlob(t *Type) func(*FunctionEnv, [][]byte) ([]byte, error) {
	name := "blobas" + t.Kind.String()
	return func(_ *FunctionEnv, args [][]byte) ([]byte, error) {
		v := args[0]
		if v == nil {
			return nil, nil
		}
		if err := t.Validate(v); err != nil {
			return nil, fmt.Errorf("In call to function %s, value 0x%s is not a valid binary representation for type %s",
				name, hex.EncodeToString(v), t)
		}
		return v, nil
	}
}

// Functions returns every native function in registration order. The
// slice is a copy; the Functions are shared and must not be modified.
func Functions() []*Function {
	return append([]*Function(nil), nativeFunctions...)
}

// FunctionArg is an argument of a call, as overload resolution sees it. The
// executor implements it for its expressions, or uses TypedArg, LiteralArg,
// NullArg and MarkerArg.
type FunctionArg interface {
	// AssignableTo is Cassandra's testAssignment of the argument against a
	// parameter type.
	AssignableTo(param *Type) Assignability
	// String is the argument as Cassandra prints it in messages: a column
	// name, a quoted string constant, "?".
	String() string
}

type typedArg struct {
	t    *Type
	text string
}

func (a typedArg) AssignableTo(p *Type) Assignability { return a.t.TestAssignment(p) }
func (a typedArg) String() string                     { return a.text }

// TypedArg is an argument whose type is known (a column, a function call, a
// cast or a type hint); text is how messages show it.
func TypedArg(t *Type, text string) FunctionArg { return typedArg{t, text} }

type literalArg struct {
	kind LiteralKind
	text string
}

func (a literalArg) AssignableTo(p *Type) Assignability { return p.TestLiteral(a.kind, a.text) }
func (a literalArg) String() string {
	if a.kind == StringLiteral {
		return quoteString(a.text)
	}
	return a.text
}

// LiteralArg is an untyped constant.
func LiteralArg(kind LiteralKind, text string) FunctionArg { return literalArg{kind, text} }

type nullArg struct{}

func (nullArg) AssignableTo(p *Type) Assignability {
	if p.Kind == Counter {
		return NotAssignable
	}
	return WeaklyAssignable
}
func (nullArg) String() string { return "NULL" }

// NullArg is the null constant: weakly assignable to everything but
// counters.
func NullArg() FunctionArg { return nullArg{} }

type markerArg struct{ text string }

func (markerArg) AssignableTo(*Type) Assignability { return WeaklyAssignable }
func (a markerArg) String() string                 { return a.text }

// MarkerArg is a bind marker ("?" or ":name"), weakly assignable to every
// type; its value is checked when bound.
func MarkerArg(text string) FunctionArg { return markerArg{text} }

// TestAssignment is Cassandra's AbstractType.testAssignment: whether a value
// of type t may be given to a receiver of type receiver. Equal types
// (frozenness aside) match exactly; a receiver that can read t's values
// (blob reads anything, text reads ascii, bigint and timestamp read each
// other, varint reads int, bigint and timestamp, date reads int, time reads
// bigint, uuid reads timeuuid) matches weakly.
func (t *Type) TestAssignment(receiver *Type) Assignability {
	if t.Freeze().Equal(receiver.Freeze()) {
		return ExactMatch
	}
	if receiver.Kind == Blob {
		return WeaklyAssignable
	}
	ok := false
	switch receiver.Kind {
	case Text:
		ok = t.Kind == Ascii
	case Bigint:
		ok = t.Kind == Timestamp
	case Timestamp:
		ok = t.Kind == Bigint
	case Varint:
		ok = t.Kind == Int || t.Kind == Bigint || t.Kind == Timestamp
	case Date:
		ok = t.Kind == Int
	case Time:
		ok = t.Kind == Bigint
	case UUID:
		ok = t.Kind == Timeuuid
	}
	if ok {
		return WeaklyAssignable
	}
	return NotAssignable
}

// UnknownFunctionError reports a call to a function that does not exist.
// Cassandra words it differently in the selection clause: see
// SelectionMessage.
type UnknownFunctionError struct {
	Name string // as written: "foo" or "ks.foo"
}

func (e *UnknownFunctionError) Error() string { return "Unknown function " + e.Name + " called" }

// SelectionMessage is the message Cassandra gives for a SELECT clause.
func (e *UnknownFunctionError) SelectionMessage() string {
	return "Unknown function " + e.Name + " called in selection clause"
}

// LookupFunction resolves a call whose arguments all have known types (nil
// for a bind marker or null). See ResolveFunction.
func LookupFunction(name string, argTypes []*Type) (*Function, error) {
	args := make([]FunctionArg, len(argTypes))
	for i, t := range argTypes {
		if t == nil {
			args[i] = MarkerArg("?")
		} else {
			args[i] = TypedArg(t, t.String())
		}
	}
	return ResolveFunction("", name, args, nil)
}

// ResolveFunction picks the native function a call names, as Cassandra's
// FunctionResolver does. keyspace is the call's qualifier ("" when
// unqualified; only "system" holds native functions) and name is the
// function name as CQL folded it. With one candidate, the arguments must
// fit it (Cassandra's arity and "Type error" messages); with overloads, an
// exact match wins, otherwise exactly one weak match must remain (the
// "none of its type signatures match" and "Ambiguous call" messages).
// receiver, when known (the column an INSERT assigns the result to), rules
// out overloads whose result it cannot take; the caller still checks the
// chosen function's result against the receiver.
func ResolveFunction(keyspace, name string, args []FunctionArg, receiver *Type) (*Function, error) {
	display := name
	if keyspace != "" {
		display = keyspace + "." + name
	}
	var candidates []*Function
	if keyspace == "" || keyspace == "system" {
		candidates = functionsByName[name]
	}
	if len(candidates) == 0 {
		return nil, &UnknownFunctionError{Name: display}
	}
	if len(candidates) == 1 {
		f := candidates[0]
		if len(args) != len(f.Args) {
			return nil, fmt.Errorf("Invalid number of arguments in call to function %s: %d required but %d provided",
				f.QualifiedName(), len(f.Args), len(args))
		}
		for i, a := range args {
			if !a.AssignableTo(f.Args[i]).IsAssignable() {
				return nil, fmt.Errorf("Type error: %s cannot be passed as argument %d of function %s of type %s",
					a, i, f.QualifiedName(), f.Args[i].SchemaString())
			}
		}
		return f, nil
	}
	var compatible []*Function
	for _, f := range candidates {
		if receiver != nil && !f.Returns.TestAssignment(receiver).IsAssignable() {
			continue
		}
		switch matchArguments(f, args) {
		case ExactMatch:
			return f, nil
		case WeaklyAssignable:
			compatible = append(compatible, f)
		}
	}
	switch len(compatible) {
	case 0:
		return nil, fmt.Errorf("Invalid call to function %s, none of its type signatures match (known type signatures: %s)",
			display, joinSignatures(candidates))
	case 1:
		return compatible[0], nil
	}
	return nil, fmt.Errorf("Ambiguous call to function %s (can be matched by following signatures: %s): use type casts to disambiguate",
		display, joinSignatures(compatible))
}

func matchArguments(f *Function, args []FunctionArg) Assignability {
	if len(args) != len(f.Args) {
		return NotAssignable
	}
	res := ExactMatch
	for i, a := range args {
		switch a.AssignableTo(f.Args[i]) {
		case NotAssignable:
			return NotAssignable
		case WeaklyAssignable:
			res = WeaklyAssignable
		}
	}
	return res
}

func joinSignatures(fs []*Function) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.String()
	}
	return strings.Join(parts, ", ")
}

// ArgType is the type of an argument whose type is known (a column, a
// typed expression), or nil.
func ArgType(a FunctionArg) *Type {
	if t, ok := a.(typedArg); ok {
		return t.t
	}
	return nil
}
