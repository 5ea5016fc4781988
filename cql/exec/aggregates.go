package exec

import (
	"math"
	"math/big"

	"github.com/sibyldb/sibyl/cqltype"
)

// The native aggregates of Cassandra 4.1 (AggregateFcts): count(*) (and
// count(1)), count, min and max of every native type, sum and avg of the
// numbers. Their arithmetic is Java's: sums of small integers wrap in the
// type, avg of integers is an integer (truncated), float sums use Kahan
// summation, and over no rows count and sum are 0, avg is 0 too, and min
// and max are null.

// aggregate is one running aggregation.
type aggregate interface {
	// add takes one row's arguments (nil: null).
	add(args [][]byte) error
	result() []byte
}

// aggregateFunctions holds the aggregates by name, overloads in Cassandra's
// registration order.
var aggregateFunctions = map[string][]*function{}

// countRows is count(*): Cassandra's system.countRows, named "count".
var countRows = &function{name: "system.countRows", returns: cqltype.BigintType,
	newAggregate: func() aggregate { return &counter{rows: true} },
	columnName:   func([]string) string { return "count" }}

func addAggregate(name string, arg, returns *cqltype.Type, newAggregate func() aggregate) {
	aggregateFunctions[name] = append(aggregateFunctions[name], &function{name: "system." + name,
		args: []*cqltype.Type{arg}, returns: returns, newAggregate: newAggregate})
}

func init() {
	numbers := []cqltype.Kind{cqltype.Tinyint, cqltype.Smallint, cqltype.Int, cqltype.Bigint, cqltype.Float,
		cqltype.Double, cqltype.Decimal, cqltype.Varint, cqltype.Counter}
	for _, k := range numbers {
		t := cqltype.Native(k)
		addAggregate("sum", t, t, func() aggregate { return newSummer(k, false) })
	}
	for _, k := range numbers {
		t := cqltype.Native(k)
		addAggregate("avg", t, t, func() aggregate { return newSummer(k, true) })
	}
	// Cassandra walks CQL3Type.Native, whose "empty" type (Custom here)
	// comes after duration.
	for _, k := range []cqltype.Kind{cqltype.Ascii, cqltype.Bigint, cqltype.Blob, cqltype.Boolean, cqltype.Counter,
		cqltype.Date, cqltype.Decimal, cqltype.Double, cqltype.Duration, cqltype.Custom, cqltype.Float, cqltype.Inet,
		cqltype.Int, cqltype.Smallint, cqltype.Text, cqltype.Time, cqltype.Timestamp, cqltype.Timeuuid,
		cqltype.Tinyint, cqltype.UUID, cqltype.Varint} {
		if k == cqltype.Custom {
			for _, name := range []string{"count", "max", "min"} {
				addAggregate(name, cqltype.BlobType, cqltype.BlobType, nil)
				f := aggregateFunctions[name][len(aggregateFunctions[name])-1]
				f.empty = true
				f.newAggregate = func() aggregate { return &extreme{t: cqltype.BlobType, max: name == "max"} }
				if name == "count" {
					f.returns = cqltype.BigintType
					f.newAggregate = func() aggregate { return &counter{} }
				}
			}
			continue
		}
		t := cqltype.Native(k)
		addAggregate("count", t, cqltype.BigintType, func() aggregate { return &counter{} })
		addAggregate("max", t, t, func() aggregate { return &extreme{t: t, max: true} })
		addAggregate("min", t, t, func() aggregate { return &extreme{t: t} })
	}
}

// counter counts rows, or the rows whose argument is not null.
type counter struct {
	rows bool
	n    int64
}

func (c *counter) add(args [][]byte) error {
	if c.rows || args[0] != nil {
		c.n++
	}
	return nil
}

func (c *counter) result() []byte { return cqltype.EncodeBigint(c.n) }

// extreme is min or max in the type's order; nulls are skipped.
type extreme struct {
	t   *cqltype.Type
	max bool
	v   []byte
}

func (e *extreme) add(args [][]byte) error {
	v := args[0]
	if v == nil {
		return nil
	}
	if e.v == nil {
		e.v = v
		return nil
	}
	c := e.t.Compare(e.v, v)
	if (e.max && c < 0) || (!e.max && c > 0) {
		e.v = v
	}
	return nil
}

func (e *extreme) result() []byte { return e.v }

func newSummer(k cqltype.Kind, avg bool) *summer {
	return &summer{kind: k, sum: new(big.Int), avg: avg}
}

// summer is sum or avg of one numeric type.
type summer struct {
	kind cqltype.Kind
	avg  bool
	n    int64
	// Integers and varints sum exactly (Cassandra's long sums wrap, which
	// the final narrowing reproduces; its avg moves to BigInteger on
	// overflow, which an exact sum is).
	sum *big.Int
	// Floats: Kahan summation as FloatSumAggregate and FloatAvgAggregate
	// do, with the plain sum kept for infinities.
	fsum, comp, simple float64
	overflow           bool
	bigf               *big.Float
	// Decimals: the sum, or for avg the running average, with its scale.
	dec      *big.Int
	decScale int32
}

func (s *summer) add(args [][]byte) error {
	v := args[0]
	if len(v) == 0 {
		return nil
	}
	n, err := readNumber(s.kind, v)
	if err != nil {
		return err
	}
	s.n++
	switch s.kind {
	case cqltype.Float, cqltype.Double:
		s.addFloat(n.f)
	case cqltype.Decimal:
		return s.addDecimal(n.u, n.scale)
	case cqltype.Varint:
		s.sum.Add(s.sum, n.u)
	default:
		s.sum.Add(s.sum, big.NewInt(n.i))
	}
	return nil
}

func (s *summer) addFloat(x float64) {
	if s.overflow {
		s.bigf.Add(s.bigf, new(big.Float).SetFloat64(x))
		return
	}
	s.simple += x
	prev := s.fsum
	y := x - s.comp
	t := s.fsum + y
	s.comp = (t - s.fsum) - y
	s.fsum = t
	if s.avg && math.IsInf(s.fsum, 0) && !math.IsInf(x, 0) {
		// FloatAvgAggregate continues in BigDecimal once the double sum
		// overflows.
		s.overflow = true
		s.bigf = new(big.Float).SetPrec(512).SetFloat64(prev)
		s.bigf.Add(s.bigf, new(big.Float).SetFloat64(x))
	}
}

func (s *summer) floatResult() float64 {
	if s.overflow {
		q := new(big.Float).SetPrec(512).Quo(s.bigf, new(big.Float).SetInt64(s.n))
		f, _ := q.Float64()
		return f
	}
	sum := s.fsum + s.comp
	if math.IsNaN(sum) && math.IsInf(s.simple, 0) {
		sum = s.simple
	}
	if s.avg {
		if s.n == 0 {
			return 0
		}
		return sum / float64(s.n)
	}
	return sum
}

// addDecimal adds to the sum (BigDecimal.add) or moves the running average
// as AggregateFcts.avgFunctionForDecimal does: avg += (x - avg) / n, the
// division rounded half-even at the scale of (x - avg).
func (s *summer) addDecimal(u *big.Int, scale int32) error {
	if s.dec == nil {
		s.dec = new(big.Int)
	}
	var err error
	if !s.avg {
		s.dec, s.decScale, err = addScaled(s.dec, s.decScale, u, scale)
		return err
	}
	du, ds, err := addScaled(u, scale, new(big.Int).Neg(s.dec), s.decScale)
	if err != nil {
		return err
	}
	q := divHalfEven(du, big.NewInt(s.n))
	s.dec, s.decScale, err = addScaled(s.dec, s.decScale, q, ds)
	return err
}

// addScaled adds two decimals, the result at the larger scale.
func addScaled(a *big.Int, as int32, b *big.Int, bs int32) (*big.Int, int32, error) {
	x, y, s, err := aligned(decimal{a, as}, decimal{b, bs})
	if err != nil {
		return nil, 0, err
	}
	return x.Add(x, y), s, nil
}

// divHalfEven divides, rounding half to even.
func divHalfEven(a, b *big.Int) *big.Int {
	q, r := new(big.Int).QuoRem(a, b, new(big.Int))
	if r.Sign() == 0 {
		return q
	}
	twice := new(big.Int).Abs(r)
	twice.Lsh(twice, 1)
	c := twice.Cmp(new(big.Int).Abs(b))
	if c > 0 || (c == 0 && q.Bit(0) == 1) {
		if (a.Sign() < 0) != (b.Sign() < 0) {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q
}

func (s *summer) result() []byte {
	switch s.kind {
	case cqltype.Float:
		return cqltype.EncodeFloat(float32(s.floatResult()))
	case cqltype.Double:
		return cqltype.EncodeDouble(s.floatResult())
	case cqltype.Decimal:
		if s.dec == nil {
			return cqltype.EncodeDecimal(new(big.Int), 0)
		}
		return cqltype.EncodeDecimal(s.dec, s.decScale)
	}
	v := s.sum
	if s.avg {
		if s.n == 0 {
			v = new(big.Int)
		} else {
			v = new(big.Int).Quo(s.sum, big.NewInt(s.n))
		}
	}
	switch s.kind {
	case cqltype.Varint:
		return cqltype.EncodeVarint(v)
	case cqltype.Tinyint:
		return cqltype.EncodeTinyint(int8(low64(v)))
	case cqltype.Smallint:
		return cqltype.EncodeSmallint(int16(low64(v)))
	case cqltype.Int:
		return cqltype.EncodeInt(int32(low64(v)))
	}
	return cqltype.EncodeBigint(low64(v))
}
