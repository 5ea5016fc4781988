package exec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/sibyldb/sibyl/cqltype"
)

// Arithmetic as Cassandra 4.1 has it (OperationFcts): +, -, *, / and % are
// the native functions _add, _substract, _multiply, _divide and _modulo,
// unary - is _negate, resolved as any function (with the operations' own
// messages, and a receiver's type deciding between overloads a literal
// fits alike). Between two numbers the result is the wider type, floating
// when either is, computed as Java computes it (wrapping integers, IEEE
// floats, BigDecimal and BigInteger); a timestamp or date plus or minus a
// duration moves by calendar months and days; text and ascii concatenate.

var operatorNames = map[string]string{"+": "_add", "-": "_substract", "*": "_multiply", "/": "_divide", "%": "_modulo"}

const negateName = "_negate"

// numericKinds are the operand types, in Cassandra's order.
var numericKinds = []cqltype.Kind{cqltype.Tinyint, cqltype.Smallint, cqltype.Int, cqltype.Bigint, cqltype.Float,
	cqltype.Double, cqltype.Decimal, cqltype.Varint, cqltype.Counter}

// operationFunctions are the candidates of each operation's name.
var operationFunctions = buildOperations()

func numericSize(k cqltype.Kind) int {
	switch k {
	case cqltype.Tinyint:
		return 1
	case cqltype.Smallint:
		return 2
	case cqltype.Int, cqltype.Float:
		return 4
	case cqltype.Bigint, cqltype.Double, cqltype.Counter:
		return 8
	}
	return math.MaxInt
}

func isFloating(k cqltype.Kind) bool {
	return k == cqltype.Float || k == cqltype.Double || k == cqltype.Decimal
}

// operationResult is OperationFcts.returnType: the wider of the two,
// floating when either is.
func operationResult(l, r cqltype.Kind) cqltype.Kind {
	size := max(numericSize(l), numericSize(r))
	if isFloating(l) || isFloating(r) {
		switch size {
		case 4:
			return cqltype.Float
		case 8:
			return cqltype.Double
		}
		return cqltype.Decimal
	}
	switch size {
	case 1:
		return cqltype.Tinyint
	case 2:
		return cqltype.Smallint
	case 4:
		return cqltype.Int
	case 8:
		return cqltype.Bigint
	}
	return cqltype.Varint
}

func buildOperations() map[string][]*function {
	out := map[string][]*function{}
	ops := []string{"+", "-", "*", "/", "%"}
	for _, l := range numericKinds {
		for _, r := range numericKinds {
			res := operationResult(l, r)
			for _, op := range ops {
				out[operatorNames[op]] = append(out[operatorNames[op]], numericOperation(op, cqltype.Native(l), cqltype.Native(r), cqltype.Native(res)))
			}
		}
		out[negateName] = append(out[negateName], negation(cqltype.Native(l)))
	}
	for _, op := range []string{"+", "-"} {
		for _, k := range []cqltype.Kind{cqltype.Timestamp, cqltype.Date} {
			out[operatorNames[op]] = append(out[operatorNames[op]], temporalOperation(op, cqltype.Native(k)))
		}
	}
	for _, c := range [][3]cqltype.Kind{{cqltype.Text, cqltype.Text, cqltype.Text}, {cqltype.Ascii, cqltype.Ascii, cqltype.Ascii},
		{cqltype.Text, cqltype.Ascii, cqltype.Text}, {cqltype.Text, cqltype.Text, cqltype.Ascii}} {
		ret, l, r := cqltype.Native(c[0]), cqltype.Native(c[1]), cqltype.Native(c[2])
		out["_add"] = append(out["_add"], &function{name: "system._add", args: []*cqltype.Type{l, r}, returns: ret,
			columnName: operatorColumn("+"),
			scalar: nullsOut(func(a, b []byte) ([]byte, error) {
				return append(slices.Clip(a), b...), nil
			})})
	}
	return out
}

// isOperation reports whether a function name is an operation's.
func isOperation(name string) bool {
	for _, n := range operatorNames {
		if n == name {
			return true
		}
	}
	return false
}

func operatorOf(name string) string {
	for op, n := range operatorNames {
		if n == name {
			return op
		}
	}
	return ""
}

func operatorColumn(op string) func([]string) string {
	return func(args []string) string { return args[0] + " " + op + " " + args[1] }
}

// nullsOut makes an operation null when an operand is null or empty.
func nullsOut(f func(a, b []byte) ([]byte, error)) func(args [][]byte) ([]byte, error) {
	return func(args [][]byte) ([]byte, error) {
		if len(args[0]) == 0 || len(args[1]) == 0 {
			return nil, nil
		}
		return f(args[0], args[1])
	}
}

// operationFailed is OperationExecutionException: a FunctionFailure.
func operationFailed(op string, l, r *cqltype.Type, cause string) error {
	name := operatorNames[op]
	return &Error{Code: FunctionFailure, Message: fmt.Sprintf("the operation '%s %s %s' failed: %s", l.SchemaString(), op, r.SchemaString(), cause),
		Replica: &ReplicaFailure{FunctionKeyspace: "system", Function: name, ArgTypes: []string{l.SchemaString(), r.SchemaString()}}}
}

func numericOperation(op string, l, r, res *cqltype.Type) *function {
	return &function{name: "system." + operatorNames[op], args: []*cqltype.Type{l, r}, returns: res, columnName: operatorColumn(op),
		scalar: nullsOut(func(a, b []byte) ([]byte, error) {
			v, err := arithmetic(op, res.Kind, l, a, r, b)
			if err != nil {
				cause := err.Error()
				var je *cqltype.JavaException
				if errors.As(err, &je) {
					cause = je.Message // Cassandra quotes the exception's message
				}
				return nil, operationFailed(op, l, r, cause)
			}
			return v, nil
		})}
}

func negation(t *cqltype.Type) *function {
	zero := map[cqltype.Kind][]byte{}
	return &function{name: "system." + negateName, args: []*cqltype.Type{t}, returns: t,
		columnName: func(args []string) string { return "-" + args[0] },
		scalar: func(args [][]byte) ([]byte, error) {
			if len(args[0]) == 0 {
				return nil, nil
			}
			switch t.Kind { // Java's unary minus: the sign bit, even of 0 and NaN
			case cqltype.Float:
				return binary.BigEndian.AppendUint32(nil, binary.BigEndian.Uint32(args[0])^1<<31), nil
			case cqltype.Double:
				return binary.BigEndian.AppendUint64(nil, binary.BigEndian.Uint64(args[0])^1<<63), nil
			}
			res := t.Kind
			if res == cqltype.Counter {
				res = cqltype.Bigint
			}
			if zero[res] == nil {
				zero[res], _ = cqltype.Native(res).FromLiteral(cqltype.IntegerLiteral, "0")
			}
			return arithmetic("-", res, cqltype.Native(res), zero[res], t, args[0])
		}}
}

// number is an operand read as the result type computes with it.
func asInt(t *cqltype.Type, v []byte) int64 {
	switch t.Kind {
	case cqltype.Tinyint:
		return int64(int8(v[0]))
	case cqltype.Smallint:
		return int64(int16(binary.BigEndian.Uint16(v)))
	case cqltype.Int:
		return int64(int32(binary.BigEndian.Uint32(v)))
	}
	return int64(binary.BigEndian.Uint64(v)) // bigint, counter
}

func asFloat32(t *cqltype.Type, v []byte) float32 {
	if t.Kind == cqltype.Float {
		return math.Float32frombits(binary.BigEndian.Uint32(v))
	}
	return float32(asInt(t, v))
}

func asFloat64(t *cqltype.Type, v []byte) float64 {
	switch t.Kind {
	case cqltype.Float:
		return float64(math.Float32frombits(binary.BigEndian.Uint32(v)))
	case cqltype.Double:
		return math.Float64frombits(binary.BigEndian.Uint64(v))
	}
	return float64(asInt(t, v))
}

func asBigInt(t *cqltype.Type, v []byte) *big.Int {
	if t.Kind == cqltype.Varint {
		n, _ := cqltype.DecodeVarint(v)
		return n
	}
	return big.NewInt(asInt(t, v))
}

// decimal is a BigDecimal: unscaled × 10^-scale.
type decimal struct {
	u     *big.Int
	scale int32
}

// asDecimal converts as NumberType.toBigDecimal: a decimal as it is, a
// varint exactly, anything else through its double's Java text (so an
// int 5 is 5.0).
func asDecimal(t *cqltype.Type, v []byte) (decimal, error) {
	switch t.Kind {
	case cqltype.Decimal:
		u, s, err := cqltype.DecodeDecimal(v)
		return decimal{u, s}, err
	case cqltype.Varint:
		return decimal{asBigInt(t, v), 0}, nil
	}
	d := asFloat64(t, v)
	switch {
	case math.IsNaN(d):
		return decimal{}, fmt.Errorf("A NaN cannot be converted into a decimal")
	case math.IsInf(d, 0):
		return decimal{}, fmt.Errorf("An infinite number cannot be converted into a decimal")
	}
	b, err := cqltype.DecimalType.FromLiteral(cqltype.FloatLiteral, cqltype.JavaFloatText(d, 64))
	if err != nil {
		return decimal{}, err
	}
	u, s, err := cqltype.DecodeDecimal(b)
	return decimal{u, s}, err
}

// aligned returns the two unscaled values at the larger scale.
func aligned(a, b decimal) (*big.Int, *big.Int, int32, error) {
	s := max(a.scale, b.scale)
	x, err := rescale(a, s)
	if err != nil {
		return nil, nil, 0, err
	}
	y, err := rescale(b, s)
	return x, y, s, err
}

func rescale(d decimal, s int32) (*big.Int, error) {
	p, err := cqltype.Pow10(int64(s) - int64(d.scale))
	if err != nil {
		return nil, err
	}
	return new(big.Int).Mul(d.u, p), nil
}

// precision is BigDecimal.precision: the unscaled value's digits.
func (d decimal) precision() int32 {
	if d.u.Sign() == 0 {
		return 1
	}
	return int32(len(new(big.Int).Abs(d.u).String()))
}

// stripTrailingZeros is BigDecimal's: zero is 0 at scale 0.
func (d decimal) stripTrailingZeros() decimal {
	if d.u.Sign() == 0 {
		return decimal{new(big.Int), 0}
	}
	u, s := new(big.Int).Set(d.u), d.scale
	ten, r := big.NewInt(10), new(big.Int)
	for {
		q, rem := new(big.Int).QuoRem(u, ten, r)
		if rem.Sign() != 0 {
			return decimal{u, s}
		}
		u, s = q, s-1
	}
}

// divideDecimal is DecimalType.divide: the quotient to a scale that keeps
// at least 32 significant digits (32 to 1000 places, and no fewer than
// either operand's), rounded half up, its trailing zeros stripped.
func divideDecimal(a, b decimal) (decimal, error) {
	if b.u.Sign() == 0 {
		if a.u.Sign() == 0 {
			return decimal{}, fmt.Errorf("Division undefined")
		}
		return decimal{}, fmt.Errorf("Division by zero")
	}
	first := (a.precision() - a.scale) - (b.precision() - b.scale)
	scale := int32(32) - first
	scale = max(scale, a.scale, b.scale, 32)
	scale = min(scale, 1000)
	// a / b at scale: a.u × 10^(scale - a.scale + b.scale) / b.u.
	num := new(big.Int).Set(a.u)
	den := new(big.Int).Set(b.u)
	shift := int64(scale) - int64(a.scale) + int64(b.scale)
	pow, err := cqltype.Pow10(abs64(shift))
	if err != nil {
		return decimal{}, err
	}
	if shift >= 0 {
		num.Mul(num, pow)
	} else {
		den.Mul(den, pow)
	}
	q, r := new(big.Int).QuoRem(num, den, new(big.Int))
	// Half up: away from zero when the remainder is at least half.
	twice := new(big.Int).Mul(new(big.Int).Abs(r), big.NewInt(2))
	if twice.Cmp(new(big.Int).Abs(den)) >= 0 {
		if (num.Sign() < 0) != (den.Sign() < 0) {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return decimal{q, scale}.stripTrailingZeros(), nil
}

// remainderDecimal is BigDecimal.remainder: a - q·b for q the integral
// part of a/b, at the scale Java gives it, max(a's, q's + b's), where q's
// is a's less b's unless q's trailing zeros need a larger one.
func remainderDecimal(a, b decimal) (decimal, error) {
	x, y, s, err := aligned(a, b)
	if err != nil {
		return decimal{}, err
	}
	q, r := new(big.Int).QuoRem(x, y, new(big.Int))
	qScale := a.scale - b.scale
	if q.Sign() != 0 {
		// Less its trailing zeros, q is at scale minus their count.
		qScale = max(qScale, decimal{q, 0}.stripTrailingZeros().scale)
	}
	scale := max(a.scale, qScale+b.scale)
	if scale < s {
		div := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(s-scale)), nil)
		if rq, rm := new(big.Int).QuoRem(r, div, new(big.Int)); rm.Sign() == 0 {
			return decimal{rq, scale}, nil
		}
	}
	return decimal{r, s}, nil
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// arithmetic computes l op r in the result type res, as Java does.
func arithmetic(op string, res cqltype.Kind, lt *cqltype.Type, l []byte, rt *cqltype.Type, r []byte) ([]byte, error) {
	switch res {
	case cqltype.Tinyint, cqltype.Smallint, cqltype.Int, cqltype.Bigint:
		a, b := asInt(lt, l), asInt(rt, r)
		var v int64
		switch op {
		case "+":
			v = a + b
		case "-":
			v = a - b
		case "*":
			v = a * b
		case "/", "%":
			if b == 0 {
				return nil, fmt.Errorf("/ by zero")
			}
			if op == "/" {
				v = a / b
			} else {
				v = a % b
			}
		}
		switch res { // Java's narrowing: the low bits
		case cqltype.Tinyint:
			return cqltype.EncodeTinyint(int8(v)), nil
		case cqltype.Smallint:
			return cqltype.EncodeSmallint(int16(v)), nil
		case cqltype.Int:
			return cqltype.EncodeInt(int32(v)), nil
		}
		return cqltype.EncodeBigint(v), nil
	case cqltype.Float:
		a, b := asFloat32(lt, l), asFloat32(rt, r)
		var v float32
		switch op {
		case "+":
			v = a + b
		case "-":
			v = a - b
		case "*":
			v = a * b
		case "/":
			v = a / b
		case "%":
			v = float32(math.Mod(float64(a), float64(b)))
		}
		return cqltype.EncodeFloat(v), nil
	case cqltype.Double:
		a, b := asFloat64(lt, l), asFloat64(rt, r)
		var v float64
		switch op {
		case "+":
			v = a + b
		case "-":
			v = a - b
		case "*":
			v = a * b
		case "/":
			v = a / b
		case "%":
			v = math.Mod(a, b)
		}
		return cqltype.EncodeDouble(v), nil
	case cqltype.Varint:
		a, b := asBigInt(lt, l), asBigInt(rt, r)
		v := new(big.Int)
		switch op {
		case "+":
			v.Add(a, b)
		case "-":
			v.Sub(a, b)
		case "*":
			v.Mul(a, b)
		case "/", "%":
			if b.Sign() == 0 {
				return nil, fmt.Errorf("BigInteger divide by zero")
			}
			if op == "/" {
				v.Quo(a, b)
			} else {
				v.Rem(a, b)
			}
		}
		return cqltype.EncodeVarint(v), nil
	}
	// decimal
	a, err := asDecimal(lt, l)
	if err != nil {
		return nil, err
	}
	b, err := asDecimal(rt, r)
	if err != nil {
		return nil, err
	}
	var d decimal
	switch op {
	case "+", "-":
		x, y, s, err := aligned(a, b)
		if err != nil {
			return nil, err
		}
		if op == "+" {
			d = decimal{x.Add(x, y), s}
		} else {
			d = decimal{x.Sub(x, y), s}
		}
	case "*":
		// BigDecimal's checkScale: past an int, a scale too large is
		// an underflow, one too small an overflow.
		switch s := int64(a.scale) + int64(b.scale); {
		case s > math.MaxInt32:
			return nil, fmt.Errorf("Underflow")
		case s < math.MinInt32:
			return nil, fmt.Errorf("Overflow")
		}
		s := a.scale + b.scale
		d = decimal{new(big.Int).Mul(a.u, b.u), s}
	case "/":
		if d, err = divideDecimal(a, b); err != nil {
			return nil, err
		}
	case "%":
		if b.u.Sign() == 0 {
			return nil, fmt.Errorf("Division by zero")
		}
		if d, err = remainderDecimal(a, b); err != nil {
			return nil, err
		}
	}
	return cqltype.EncodeDecimal(d.u, d.scale), nil
}

func temporalOperation(op string, t *cqltype.Type) *function {
	dur := cqltype.DurationType
	return &function{name: "system." + operatorNames[op], args: []*cqltype.Type{t, dur}, returns: t, columnName: operatorColumn(op),
		scalar: nullsOut(func(a, b []byte) ([]byte, error) {
			months, days, nanos, err := cqltype.DecodeDuration(b)
			if err != nil {
				return nil, err
			}
			if op == "-" {
				months, days, nanos = -months, -days, -nanos
			}
			if t.Kind == cqltype.Date {
				if nanos != 0 {
					return nil, invalidf("The duration must have a day precision. Was: %s", dur.Display(b))
				}
				d, err := cqltype.DecodeDate(a)
				if err != nil {
					return nil, err
				}
				ms := moveByDuration(int64(d)*86_400_000, months, days, 0)
				return cqltype.EncodeDate(int32(ms / 86_400_000)), nil
			}
			ms, err := cqltype.DecodeTimestamp(a)
			if err != nil {
				return nil, err
			}
			return cqltype.EncodeTimestamp(moveByDuration(ms, months, days, nanos)), nil
		})}
}

// moveByDuration is Duration.addTo: calendar months, then days, then the
// nanoseconds' milliseconds, in UTC.
func moveByDuration(ms int64, months, days int32, nanos int64) int64 {
	if months == 0 {
		return ms + int64(days)*86_400_000 + nanos/1_000_000
	}
	t := cqltype.AddMonths(time.UnixMilli(ms).UTC(), int(months)).AddDate(0, 0, int(days))
	return t.UnixMilli() + nanos/1_000_000
}

// pickOperation is pickFunction for the operations, with their rules
// (FunctionResolver.pickBestMatch): a receiver's type chooses between
// overloads a literal fits alike, and the messages name the operator.
func pickOperation(name string, candidates []*function, args []cqltype.FunctionArg, receiver *cqltype.Type) (*function, error) {
	var compatible []*function
	for _, f := range candidates {
		if receiver != nil && !f.returns.TestAssignment(receiver).IsAssignable() {
			continue
		}
		switch matchArgs(f, args) {
		case cqltype.ExactMatch:
			return f, nil
		case cqltype.WeaklyAssignable:
			compatible = append(compatible, f)
		}
	}
	op := operatorOf(name)
	switch {
	case len(compatible) == 1:
		return compatible[0], nil
	case len(compatible) == 0 && op != "":
		return nil, invalidf("the '%s' operation is not supported between %s and %s", op, args[0], args[1])
	case len(compatible) == 0:
		return nil, invalidf("Invalid call to function system.%s, none of its type signatures match (known type signatures: %s)",
			name, joinFunctions(candidates))
	case op == "":
		return nil, invalidf("Ambiguous negation: use type casts to disambiguate")
	}
	isMarker := func(a cqltype.FunctionArg) bool { return a.String() == "?" || strings.HasPrefix(a.String(), ":") }
	if receiver != nil && !slices.ContainsFunc(args, isMarker) {
		for _, f := range compatible {
			if f.args[0].Equal(receiver) && f.args[1].Equal(receiver) {
				return f, nil
			}
		}
	}
	return nil, invalidf("Ambiguous '%s' operation with args %s and %s: use type hint to disambiguate, example '(int) ?'", op, args[0], args[1])
}
