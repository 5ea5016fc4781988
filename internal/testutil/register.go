package testutil

import "fmt"

// The model lightweight transactions are checked against (with porcupine,
// in the tests that record histories): one register per key, which holds
// a value or none, changed only by a conditional write whose condition
// holds, every answer telling its value at one moment between the
// operation's call and its return.

// RegisterOp is what an operation on a key's register does.
type RegisterOp int

// The operations on a register.
const (
	RegisterInsert RegisterOp = iota // INSERT ... IF NOT EXISTS
	RegisterUpdate                   // UPDATE ... IF v = Old
	RegisterDelete                   // DELETE ... IF v = Old
	RegisterRead                     // SELECT at SERIAL
)

// RegisterInput is one operation; values are positive, 0 is no value.
type RegisterInput struct {
	Op         RegisterOp
	Key        int
	Old, Value int
}

// RegisterOutput is what an operation came to: whether it applied and the
// value it was told of (0: none). Unknown is a write whose outcome never
// came back (a timeout, CAS_WRITE_UNKNOWN): it may or may not have
// applied, so it is recorded as returning never.
type RegisterOutput struct {
	Applied bool
	Seen    int
	Unknown bool
}

// RegisterStep is the register's transition: whether output is a possible
// answer to input at state, and the state after.
func RegisterStep(state, input, output any) (bool, any) {
	cur, in, out := state.(int), input.(RegisterInput), output.(RegisterOutput)
	holds, next := false, cur
	switch in.Op {
	case RegisterInsert:
		holds, next = cur == 0, in.Value
	case RegisterUpdate:
		holds, next = cur == in.Old, in.Value
	case RegisterDelete:
		holds, next = cur == in.Old, 0
	case RegisterRead:
		return out.Seen == cur, cur
	}
	switch {
	case out.Unknown: // it took effect here if its condition held
		if holds {
			return true, next
		}
		return true, cur
	case out.Applied:
		return holds, next
	}
	return !holds && out.Seen == cur, cur
}

// DescribeRegisterOp names an operation in a checker's report.
func DescribeRegisterOp(input, output any) string {
	in, out := input.(RegisterInput), output.(RegisterOutput)
	what := [...]string{"insert", "update", "delete", "read"}[in.Op]
	return fmt.Sprintf("%s k=%d old=%d v=%d -> applied=%v seen=%d unknown=%v", what, in.Key, in.Old, in.Value, out.Applied, out.Seen, out.Unknown)
}

// GroupBy splits items into groups of equal key, each in the items' order.
func GroupBy[T any](items []T, key func(T) int) [][]T {
	index := map[int]int{}
	var out [][]T
	for _, it := range items {
		k := key(it)
		i, ok := index[k]
		if !ok {
			i = len(out)
			index[k] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], it)
	}
	return out
}
