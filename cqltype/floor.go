package cqltype

import (
	"fmt"
	"time"
)

// Cassandra 4.1's floor functions (TimeFcts.FloorFunction, Duration's
// floorTimestamp and floorTime): a time rounded down to a multiple of a
// duration counted from a starting time (the epoch unless given). They
// are what GROUP BY groups time ranges by.

const nanosPerMilli = 1_000_000

// registerFloor registers floor's overloads in Cassandra's order: of a
// timestamp, a timeuuid and a date, each with and without a starting
// time, then of a time.
func registerFloor() {
	floorOf := func(arg, ret *Type, withStart bool, days bool) {
		args := []*Type{arg, DurationType}
		if withStart {
			args = append(args, ret)
		}
		register(&Function{Name: "floor", Args: args, Returns: ret, Pure: true,
			impl: func(_ *FunctionEnv, a [][]byte) ([]byte, error) {
				if a[0] == nil || a[1] == nil || withStart && a[2] == nil {
					return nil, nil
				}
				months, d, nanos, err := DecodeDuration(a[1])
				if err != nil {
					return nil, err
				}
				if days && nanos != 0 {
					return nil, fmt.Errorf("The floor on date values cannot be computed for the %s duration as precision is below 1 day", formatDuration(months, d, nanos))
				}
				if nanos%nanosPerMilli != 0 {
					return nil, fmt.Errorf("The floor cannot be computed for the %s duration as precision is below 1 millisecond", formatDuration(months, d, nanos))
				}
				var start int64
				if withStart {
					start = temporalMillis(ret.Kind, a[2])
				}
				ms, err := FloorMillis(temporalMillis(arg.Kind, a[0]), months, d, nanos, start)
				if err != nil {
					return nil, err
				}
				if ret.Kind == Date {
					return millisToDate(ms), nil
				}
				return EncodeTimestamp(ms), nil
			}})
	}
	for _, k := range []struct {
		arg, ret *Type
		days     bool
	}{{TimestampType, TimestampType, false}, {TimeuuidType, TimestampType, false}, {DateType, DateType, true}} {
		floorOf(k.arg, k.ret, false, k.days)
		floorOf(k.arg, k.ret, true, k.days)
	}
	register(&Function{Name: "floor", Args: []*Type{TimeType, DurationType}, Returns: TimeType, Pure: true,
		impl: func(_ *FunctionEnv, a [][]byte) ([]byte, error) {
			if a[0] == nil || a[1] == nil {
				return nil, nil
			}
			t, err := DecodeTime(a[0])
			if err != nil {
				return nil, err
			}
			months, days, nanos, err := DecodeDuration(a[1])
			if err != nil {
				return nil, err
			}
			switch {
			case months < 0 || days < 0 || nanos < 0:
				return nil, fmt.Errorf("Negative durations are not supported by the floor function")
			case months != 0 || days != 0 || nanos > nanosPerDay:
				return nil, fmt.Errorf("For time values, the floor can only be computed for durations smaller that a day")
			case nanos == 0:
				return EncodeTime(t), nil
			}
			return EncodeTime(t - t%nanos), nil
		}})
}

// FloorMillis rounds a time (Unix milliseconds) down to the start of the
// duration-long period, counted from start, that holds it. Months are
// calendar months in UTC, a day of the month past the end of a shorter
// month being its last day, as java.util.Calendar adds them.
func FloorMillis(t int64, months, days int32, nanos int64, start int64) (int64, error) {
	if start > t {
		return 0, fmt.Errorf("The floor function starting time is greater than the provided time")
	}
	if months < 0 || days < 0 || nanos < 0 {
		return 0, fmt.Errorf("Negative durations are not supported by the floor function")
	}
	fixed := int64(days)*millisPerDay + nanos/nanosPerMilli
	if months == 0 {
		if fixed == 0 {
			return t, nil
		}
		return t - (t-start)%fixed, nil
	}
	at, from := time.UnixMilli(t).UTC(), time.UnixMilli(start).UTC()
	elapsed := (at.Year()-from.Year())*12 + int(at.Month()) - int(from.Month())
	multiplier := elapsed / int(months)
	cal := AddMonths(from, multiplier*int(months))
	if fixed == 0 {
		return cal.UnixMilli(), nil
	}
	floor := cal.UnixMilli() + int64(multiplier)*fixed
	for floor > t {
		multiplier--
		cal = AddMonths(cal, -int(months))
		floor = cal.UnixMilli() + int64(multiplier)*fixed
	}
	return max(start, floor), nil
}

// AddMonths adds months as java.util.Calendar does: the day of the month
// is kept, or made the last day of a shorter month.
func AddMonths(t time.Time, months int) time.Time {
	y, m, d := t.Date()
	total := y*12 + int(m) - 1 + months
	ny, nm := total/12, time.Month(total%12+1)
	if total%12 < 0 {
		ny, nm = (total-11)/12, time.Month((total%12+12)%12+1)
	}
	last := time.Date(ny, nm+1, 0, 0, 0, 0, 0, time.UTC).Day()
	return time.Date(ny, nm, min(d, last), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
}
