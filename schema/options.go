package schema

import (
	"errors"
	"fmt"
	"maps"
	"strings"
)

// TableOptions are a table's WITH options, as system_schema.tables holds
// them. The zero value of a field means its default.
type TableOptions struct {
	Comment               string
	GCGraceSeconds        int32 // gc_grace_seconds; -1 for an explicit 0
	DefaultTimeToLive     int32 // default_time_to_live, seconds
	BloomFilterFPChance   float64
	CRCCheckChance        float64
	MemtableFlushPeriodMs int32
	MinIndexInterval      int32
	MaxIndexInterval      int32
	SpeculativeRetry      string
	AdditionalWritePolicy string
	ReadRepair            string
	Caching               map[string]string
	Compaction            map[string]string
	Compression           map[string]string
	Extensions            map[string][]byte
}

// ExplicitZeroGCGrace stands for gc_grace_seconds = 0, since 0 means the
// default.
const ExplicitZeroGCGrace = -1

// MaxTTL is the largest TTL Cassandra accepts: 20 years.
const MaxTTL = 20 * 365 * 24 * 60 * 60

// Compaction strategy classes, by their full Java names as system_schema
// shows them.
const (
	SizeTieredClass = "org.apache.cassandra.db.compaction.SizeTieredCompactionStrategy"
	LeveledClass    = "org.apache.cassandra.db.compaction.LeveledCompactionStrategy"
	TimeWindowClass = "org.apache.cassandra.db.compaction.TimeWindowCompactionStrategy"
)

// EnsureDefaults fills unset fields with Cassandra 4.1's defaults.
func (o *TableOptions) EnsureDefaults() {
	if o.GCGraceSeconds == 0 {
		o.GCGraceSeconds = 864000
	}
	if o.BloomFilterFPChance == 0 {
		o.BloomFilterFPChance = 0.01
	}
	if o.CRCCheckChance == 0 {
		o.CRCCheckChance = 1
	}
	if o.MinIndexInterval == 0 {
		o.MinIndexInterval = 128
	}
	if o.MaxIndexInterval == 0 {
		o.MaxIndexInterval = 2048
	}
	if o.SpeculativeRetry == "" {
		o.SpeculativeRetry = "99p"
	}
	if o.AdditionalWritePolicy == "" {
		o.AdditionalWritePolicy = "99p"
	}
	if o.ReadRepair == "" {
		o.ReadRepair = "BLOCKING"
	}
	if o.Caching == nil {
		o.Caching = map[string]string{"keys": "ALL", "rows_per_partition": "NONE"}
	}
	if o.Compaction == nil {
		o.Compaction = map[string]string{"class": SizeTieredClass, "max_threshold": "32", "min_threshold": "4"}
	}
	if o.Compression == nil {
		o.Compression = map[string]string{"chunk_length_in_kb": "16", "class": "org.apache.cassandra.io.compress.LZ4Compressor"}
	}
	if o.Extensions == nil {
		o.Extensions = map[string][]byte{}
	}
}

// Validate reports every problem at once, with Cassandra's wording where
// it has one.
func (o *TableOptions) Validate() error {
	var errs []error
	if o.GCGraceSeconds < ExplicitZeroGCGrace {
		errs = append(errs, fmt.Errorf("gc_grace_seconds must be greater than or equal to 0 (got %d)", o.GCGraceSeconds))
	}
	if o.DefaultTimeToLive < 0 {
		errs = append(errs, fmt.Errorf("default_time_to_live must be greater than or equal to 0 (got %d)", o.DefaultTimeToLive))
	}
	if o.DefaultTimeToLive > MaxTTL {
		errs = append(errs, fmt.Errorf("default_time_to_live must be less than or equal to %d (got %d)", MaxTTL, o.DefaultTimeToLive))
	}
	if o.BloomFilterFPChance < 0 || o.BloomFilterFPChance > 1 {
		errs = append(errs, fmt.Errorf("bloom_filter_fp_chance must be larger than 0 and less than or equal to 1.0 (got %v)", o.BloomFilterFPChance))
	}
	if o.Compaction != nil {
		if _, err := CompactionClass(o.Compaction["class"]); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// CompactionClass returns the full class name of a compaction strategy
// given by its short or full name.
func CompactionClass(name string) (string, error) {
	short := name
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		short = name[i+1:]
	}
	for _, full := range []string{SizeTieredClass, LeveledClass, TimeWindowClass} {
		if strings.HasSuffix(full, "."+short) {
			return full, nil
		}
	}
	if name == "" {
		return "", errors.New("Missing sub-option 'class' for the 'compaction' option.")
	}
	return "", fmt.Errorf("Unable to find compaction strategy class '%s'", name)
}

func (o *TableOptions) clone() TableOptions {
	c := *o
	c.Caching = maps.Clone(o.Caching)
	c.Compaction = maps.Clone(o.Compaction)
	c.Compression = maps.Clone(o.Compression)
	c.Extensions = maps.Clone(o.Extensions)
	return c
}
