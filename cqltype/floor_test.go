package cqltype

import (
	"testing"
	"time"
)

func TestFloorMillis(t *testing.T) {
	at := func(s string) int64 {
		v, err := time.Parse("2006-01-02 15:04:05", s)
		if err != nil {
			t.Fatal(err)
		}
		return v.UnixMilli()
	}
	for _, c := range []struct {
		time                 string
		months, days         int32
		nanos                int64
		start, want, wantErr string
	}{
		{time: "2016-09-27 16:12:30", nanos: 5 * 60 * nanosPerSecond, start: "1970-01-01 00:00:00", want: "2016-09-27 16:10:00"},
		{time: "2016-09-27 16:12:30", nanos: 2 * 3600 * nanosPerSecond, start: "1970-01-01 00:00:00", want: "2016-09-27 16:00:00"},
		{time: "2016-09-27 16:12:30", days: 1, start: "1970-01-01 00:00:00", want: "2016-09-27 00:00:00"},
		{time: "2016-09-27 16:12:30", nanos: 5 * 60 * nanosPerSecond, start: "2016-09-27 16:01:00", want: "2016-09-27 16:11:00"},
		{time: "2016-09-27 16:12:30", months: 1, start: "1970-01-01 00:00:00", want: "2016-09-01 00:00:00"},
		{time: "2016-09-27 16:12:30", months: 2, start: "2016-01-01 00:00:00", want: "2016-09-01 00:00:00"},
		{time: "2016-09-27 16:12:30", months: 12, start: "1970-01-01 00:00:00", want: "2016-01-01 00:00:00"},
		// Calendar months keep the start's day, or the month's last one.
		{time: "2016-02-29 12:00:00", months: 1, start: "2016-01-31 00:00:00", want: "2016-02-29 00:00:00"},
		// Cassandra counts whole months by calendar month alone and, for a
		// duration of months only, does not step back: the 31st of a month
		// floors to the next 31st of the count, after the time itself.
		{time: "2016-03-30 12:00:00", months: 1, start: "2016-01-31 00:00:00", want: "2016-03-31 00:00:00"},
		{time: "2016-03-31 12:00:00", months: 1, start: "2016-01-31 00:00:00", want: "2016-03-31 00:00:00"},
		// Months and days: the multiplier steps back until the floor is not
		// past the time.
		{time: "2016-09-27 16:12:30", months: 1, days: 1, start: "2016-01-01 00:00:00", want: "2016-09-09 00:00:00"},
		{time: "2016-09-05 00:00:00", months: 1, days: 1, start: "2016-01-01 00:00:00", want: "2016-08-08 00:00:00"},
		{time: "2016-09-27 16:12:30", nanos: 0, start: "1970-01-01 00:00:00", want: "2016-09-27 16:12:30"},
		{time: "1969-12-31 23:00:00", days: 1, start: "1970-01-01 00:00:00", wantErr: "The floor function starting time is greater than the provided time"},
		{time: "2016-09-27 16:12:30", days: -1, start: "1970-01-01 00:00:00", wantErr: "Negative durations are not supported by the floor function"},
	} {
		got, err := FloorMillis(at(c.time), c.months, c.days, c.nanos, at(c.start))
		switch {
		case c.wantErr != "":
			if err == nil || err.Error() != c.wantErr {
				t.Errorf("floor(%s, %dmo%dd%dns from %s) = %v, %v; want error %q", c.time, c.months, c.days, c.nanos, c.start, got, err, c.wantErr)
			}
		case err != nil || got != at(c.want):
			t.Errorf("floor(%s, %dmo%dd%dns from %s) = %s, %v; want %s", c.time, c.months, c.days, c.nanos, c.start,
				time.UnixMilli(got).UTC().Format("2006-01-02 15:04:05"), err, c.want)
		}
	}
}
