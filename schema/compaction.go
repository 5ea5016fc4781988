package schema

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/sibyldb/sibyl/cqltype"
)

// CompactionStrategy is a table's compaction strategy class.
type CompactionStrategy uint8

// The compaction strategies, as their classes name them.
const (
	SizeTieredCompaction CompactionStrategy = iota
	LeveledCompaction
	TimeWindowCompaction
)

// Compaction strategy classes, by their full Java names as system_schema
// shows them.
const (
	SizeTieredClass = "org.apache.cassandra.db.compaction.SizeTieredCompactionStrategy"
	LeveledClass    = "org.apache.cassandra.db.compaction.LeveledCompactionStrategy"
	TimeWindowClass = "org.apache.cassandra.db.compaction.TimeWindowCompactionStrategy"
	dateTieredClass = "org.apache.cassandra.db.compaction.DateTieredCompactionStrategy"
)

var compactionClasses = [...]string{SizeTieredClass, LeveledClass, TimeWindowClass}

// Class is the strategy's full class name.
func (s CompactionStrategy) Class() string { return compactionClasses[s] }

// shortName is the class's simple name, as Cassandra's messages give it.
func (s CompactionStrategy) shortName() string {
	return strings.TrimPrefix(compactionClasses[s], "org.apache.cassandra.db.compaction.")
}

// Compaction is a table's compaction option read and checked: what the
// engine runs by. Options Cassandra checks but Sibyl's engine has no use
// for (tombstone_threshold, log_all, ...) are checked and kept in the map
// only.
type Compaction struct {
	Strategy CompactionStrategy
	// Enabled is false when 'enabled' is anything but true: background
	// compactions are off, explicit ones still run.
	Enabled      bool
	MinThreshold int // min_threshold
	MaxThreshold int // max_threshold
	// MinSSTableSize (min_sstable_size, bytes), BucketLow and BucketHigh
	// shape size-tiered buckets (also level 0 of leveled and the newest
	// window of time-window).
	MinSSTableSize        int64
	BucketLow, BucketHigh float64
	SSTableSizeMiB        int // sstable_size_in_mb (leveled)
	FanoutSize            int // fanout_size (leveled)
	// WindowSize windows of WindowUnit (time-window), over write timestamps
	// in TimestampResolution.
	WindowSize          int
	WindowUnit          time.Duration
	TimestampResolution time.Duration
}

// DefaultCompaction is the compaction of a table that gives none.
var DefaultCompaction = Compaction{Strategy: SizeTieredCompaction, Enabled: true, MinThreshold: 4, MaxThreshold: 32,
	MinSSTableSize: 50 << 20, BucketLow: 0.5, BucketHigh: 1.5, SSTableSizeMiB: 160, FanoutSize: 10,
	WindowSize: 1, WindowUnit: 24 * time.Hour, TimestampResolution: time.Microsecond}

// defaultCompactionMap is DefaultCompaction as system_schema stores it.
func defaultCompactionMap() map[string]string {
	return map[string]string{"class": SizeTieredClass, "max_threshold": "32", "min_threshold": "4"}
}

// ParseCompaction reads and checks a compaction option map as Cassandra
// 4.1 does, with its messages, and returns the typed value and the map as
// system_schema stores it (the class by its full name, the thresholds'
// defaults filled in). The first problem found, in Cassandra's order, is
// the error.
func ParseCompaction(given map[string]string) (Compaction, map[string]string, error) {
	c := DefaultCompaction
	opts := maps.Clone(given)
	name, ok := opts["class"]
	if !ok {
		return c, nil, errors.New("Missing sub-option 'class' for the 'compaction' option")
	}
	delete(opts, "class")
	full := name
	if !strings.Contains(name, ".") {
		full = "org.apache.cassandra.db.compaction." + name
	}
	switch full {
	case SizeTieredClass:
		c.Strategy = SizeTieredCompaction
	case LeveledClass:
		c.Strategy = LeveledCompaction
	case TimeWindowClass:
		c.Strategy = TimeWindowCompaction
	case dateTieredClass:
		return c, nil, errors.New("DateTieredCompactionStrategy is not supported: TimeWindowCompactionStrategy replaces it")
	default:
		return c, nil, fmt.Errorf("Unable to find compaction strategy class '%s'", full)
	}
	if v, ok := opts["enabled"]; ok {
		c.Enabled = strings.EqualFold(v, "true")
	}
	tombstones := strings.ToUpper(opts["provide_overlapping_tombstones"])
	if _, ok := opts["provide_overlapping_tombstones"]; ok && tombstones != "NONE" && tombstones != "ROW" && tombstones != "CELL" {
		return c, nil, fmt.Errorf("Invalid value %s for 'provide_overlapping_tombstones' compaction sub-option - must be one of the following [NONE, ROW, CELL].", tombstones)
	}
	for k, v := range map[string]string{"min_threshold": "4", "max_threshold": "32"} {
		if _, ok := opts[k]; !ok {
			opts[k] = v
		}
	}
	unknown := maps.Clone(opts)
	if err := checkCommonCompactionOptions(opts, unknown); err != nil {
		return c, nil, err
	}
	var err error
	switch c.Strategy {
	case LeveledCompaction:
		err = c.readLeveled(opts, unknown)
	case TimeWindowCompaction:
		err = c.readTimeWindow(opts, unknown)
	}
	if err == nil {
		err = c.readSizeTiered(opts, unknown)
	}
	if err != nil {
		return c, nil, err
	}
	delete(unknown, "min_threshold")
	delete(unknown, "max_threshold")
	if len(unknown) > 0 {
		return c, nil, fmt.Errorf("Properties specified [%s] are not understood by %s",
			strings.Join(slices.Sorted(maps.Keys(unknown)), ", "), c.Strategy.shortName())
	}
	if err := c.readThresholds(opts); err != nil {
		return c, nil, err
	}
	opts["class"] = full
	return c, opts, nil
}

// checkCommonCompactionOptions checks the sub-options every strategy
// takes (Cassandra's AbstractCompactionStrategy) and takes them off
// unknown.
func checkCommonCompactionOptions(opts, unknown map[string]string) error {
	if v, ok := opts["tombstone_threshold"]; ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 32)
		if err != nil {
			return fmt.Errorf("%s is not a parsable int (base10) for tombstone_threshold", v)
		}
		if f < 0 {
			return fmt.Errorf("tombstone_threshold must be greater than 0, but was %f", f)
		}
	}
	if v, ok := opts["tombstone_compaction_interval"]; ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("%s is not a parsable int (base10) for tombstone_compaction_interval", v)
		}
		if n < 0 {
			return fmt.Errorf("tombstone_compaction_interval must be greater than 0, but was %d", n)
		}
	}
	if v, ok := opts["unchecked_tombstone_compaction"]; ok && !isJavaBoolean(v) {
		return fmt.Errorf("'unchecked_tombstone_compaction' should be either 'true' or 'false', not '%s'", v)
	}
	if v, ok := opts["log_all"]; ok && !isJavaBoolean(v) {
		return fmt.Errorf("'log_all' should either be 'true' or 'false', not %s", v)
	}
	if v, ok := opts["enabled"]; ok && !isJavaBoolean(v) {
		return fmt.Errorf("enabled should either be 'true' or 'false', not %s", v)
	}
	for _, k := range []string{"tombstone_threshold", "tombstone_compaction_interval", "unchecked_tombstone_compaction",
		"log_all", "enabled", "only_purge_repaired_tombstones", "provide_overlapping_tombstones"} {
		delete(unknown, k)
	}
	return nil
}

// isJavaBoolean reports whether v is "true" or "false" in any case.
func isJavaBoolean(v string) bool {
	return strings.EqualFold(v, "true") || strings.EqualFold(v, "false")
}

// readSizeTiered reads the size-tiered sub-options, which every strategy
// takes for its size-tiered part.
func (c *Compaction) readSizeTiered(opts, unknown map[string]string) error {
	for _, o := range []struct {
		key string
		dst *float64
	}{{"bucket_low", &c.BucketLow}, {"bucket_high", &c.BucketHigh}} {
		if v, ok := opts[o.key]; ok {
			f, err := parseJavaDouble(v)
			if err != nil {
				return fmt.Errorf("%s is not a parsable float for %s", v, o.key)
			}
			*o.dst = f
		}
	}
	if v, ok := opts["min_sstable_size"]; ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("%s is not a parsable int (base10) for min_sstable_size", v)
		}
		if n < 0 {
			return fmt.Errorf("min_sstable_size must be non negative: %d", n)
		}
		c.MinSSTableSize = n
	}
	if c.BucketHigh <= c.BucketLow {
		return fmt.Errorf("bucket_high value (%s) is less than or equal to the bucket_low value (%s)",
			cqltype.JavaFloatText(c.BucketHigh, 64), cqltype.JavaFloatText(c.BucketLow, 64))
	}
	for _, k := range []string{"min_sstable_size", "bucket_low", "bucket_high"} {
		delete(unknown, k)
	}
	return nil
}

func (c *Compaction) readLeveled(opts, unknown map[string]string) error {
	for _, o := range []struct {
		key string
		dst *int
	}{{"sstable_size_in_mb", &c.SSTableSizeMiB}, {"fanout_size", &c.FanoutSize}} {
		v, ok := opts[o.key]
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			return fmt.Errorf("%s is not a parsable int (base10) for %s", v, o.key)
		}
		if n < 1 {
			return fmt.Errorf("%s must be larger than 0, but was %s", o.key, v)
		}
		*o.dst = int(n)
	}
	for _, k := range []string{"sstable_size_in_mb", "fanout_size", "single_sstable_uplevel"} {
		delete(unknown, k)
	}
	return nil
}

func (c *Compaction) readTimeWindow(opts, unknown map[string]string) error {
	units := map[string]time.Duration{"NANOSECONDS": time.Nanosecond, "MICROSECONDS": time.Microsecond,
		"MILLISECONDS": time.Millisecond, "SECONDS": time.Second, "MINUTES": time.Minute, "HOURS": time.Hour, "DAYS": 24 * time.Hour}
	if v, ok := opts["timestamp_resolution"]; ok {
		u, known := units[v]
		if !known || u > time.Second {
			return fmt.Errorf("%s is not valid for timestamp_resolution", v)
		}
		c.TimestampResolution = u
	}
	if v, ok := opts["compaction_window_unit"]; ok {
		u, known := units[v]
		if !known || u < time.Minute {
			return fmt.Errorf("%s is not valid for compaction_window_unit", v)
		}
		c.WindowUnit = u
	}
	if v, ok := opts["compaction_window_size"]; ok {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			return fmt.Errorf("%s is not a parsable int (base10) for compaction_window_size", v)
		}
		if n < 1 {
			return fmt.Errorf("%d must be greater than 1 for compaction_window_size", n)
		}
		c.WindowSize = int(n)
	}
	if v, ok := opts["expired_sstable_check_frequency_seconds"]; ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("%s is not a parsable int (base10) for expired_sstable_check_frequency_seconds", v)
		}
		if n < 0 {
			return fmt.Errorf("expired_sstable_check_frequency_seconds must not be negative, but was %d", n)
		}
	}
	if v, ok := opts["unsafe_aggressive_sstable_expiration"]; ok {
		if !isJavaBoolean(v) {
			return fmt.Errorf("unsafe_aggressive_sstable_expiration is not 'true' or 'false' (%s)", v)
		}
		if strings.EqualFold(v, "true") {
			return errors.New("unsafe_aggressive_sstable_expiration is not supported: Sibyl drops an expired SSTable only when nothing it shadows remains")
		}
	}
	for _, k := range []string{"timestamp_resolution", "compaction_window_unit", "compaction_window_size",
		"expired_sstable_check_frequency_seconds", "unsafe_aggressive_sstable_expiration"} {
		delete(unknown, k)
	}
	return nil
}

// readThresholds reads min_threshold and max_threshold, present in opts
// (ParseCompaction fills in their defaults).
func (c *Compaction) readThresholds(opts map[string]string) error {
	for _, o := range []struct {
		key string
		dst *int
	}{{"min_threshold", &c.MinThreshold}, {"max_threshold", &c.MaxThreshold}} {
		v := opts[o.key]
		n, err := strconv.ParseInt(v, 10, 32)
		if !isNumeric(v) || err != nil {
			return fmt.Errorf("Invalid value %s for '%s' compaction sub-option - must be an integer", v, o.key)
		}
		*o.dst = int(n)
	}
	switch {
	case c.MinThreshold <= 0 || c.MaxThreshold <= 0:
		return errors.New("Disabling compaction by setting compaction thresholds to 0 has been removed, set the compaction option 'enabled' to false instead.")
	case c.MinThreshold <= 1:
		return fmt.Errorf("Min compaction threshold cannot be less than 2 (got %d)", c.MinThreshold)
	case c.MinThreshold > c.MaxThreshold:
		return fmt.Errorf("Min compaction threshold (got %d) cannot be greater than max compaction threshold (got %d)", c.MinThreshold, c.MaxThreshold)
	}
	return nil
}

// isNumeric is true for a non-empty string of decimal digits only (no
// sign, no space), the test Cassandra puts thresholds to.
func isNumeric(s string) bool {
	for _, r := range s {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return s != ""
}

// parseJavaDouble reads a number as Java's Double.parseDouble does where
// it matters for options: surrounding spaces are ignored, a trailing d or
// f is allowed, and the infinities and NaN are spelled Infinity and NaN.
func parseJavaDouble(s string) (float64, error) {
	t := strings.TrimSpace(s)
	if n := len(t); n > 1 && strings.ContainsRune("dDfF", rune(t[n-1])) {
		t = t[:n-1]
	}
	f, err := strconv.ParseFloat(t, 64)
	if err == nil && (math.IsInf(f, 0) || math.IsNaN(f)) && strings.TrimLeft(t, "+-") != "Infinity" && t != "NaN" {
		return 0, strconv.ErrSyntax
	}
	return f, err
}
