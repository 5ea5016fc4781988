package schema

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/internal/invariants"
)

// TableParams are a table's WITH options (Cassandra's table params), as
// system_schema.tables holds them. DefaultTableParams gives a table's
// options when none is given.
type TableParams struct {
	Comment               string
	GCGraceSeconds        int32 // gc_grace_seconds
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

// MaxTTL is the largest TTL Cassandra accepts: 20 years.
const MaxTTL = 20 * 365 * 24 * 60 * 60

// minBloomFilterFPChance is the smallest false-positive chance a bloom
// filter can be built for (Cassandra's BloomCalculations).
const minBloomFilterFPChance = 6.71e-05

// DefaultTableParams are Cassandra 4.1's defaults.
func DefaultTableParams() TableParams {
	return TableParams{GCGraceSeconds: 864000, BloomFilterFPChance: 0.01, CRCCheckChance: 1, MinIndexInterval: 128,
		MaxIndexInterval: 2048, SpeculativeRetry: "99p", AdditionalWritePolicy: "99p", ReadRepair: "BLOCKING",
		Caching: defaultCaching(), Compaction: defaultCompactionMap(), Compression: defaultCompression(),
		Extensions: map[string][]byte{}}
}

func defaultCaching() map[string]string {
	return map[string]string{"keys": "ALL", "rows_per_partition": "NONE"}
}

func defaultCompression() map[string]string {
	return map[string]string{"chunk_length_in_kb": "16", "class": "org.apache.cassandra.io.compress.LZ4Compressor"}
}

// An optionRule checks one option (or a pair that is checked together)
// and writes its canonical form back; reset puts the option's default in
// its place. The rules run in the order Cassandra 4.1 checks options, so
// that of several bad options the one it names is named.
type optionRule struct {
	name  string
	check func(o *TableParams, c *Compaction) error
	reset func(o *TableParams)
}

var optionRules = []optionRule{
	{"caching", func(o *TableParams, _ *Compaction) (err error) {
		o.Caching, err = parseCaching(o.Caching)
		return err
	}, func(o *TableParams) { o.Caching = defaultCaching() }},
	{"compaction", func(o *TableParams, c *Compaction) (err error) {
		var m map[string]string
		if *c, m, err = ParseCompaction(o.Compaction); err == nil {
			o.Compaction = m
		}
		return err
	}, func(o *TableParams) { o.Compaction = defaultCompactionMap() }},
	{"compression", func(o *TableParams, _ *Compaction) (err error) {
		var m map[string]string
		if m, err = parseCompression(o.Compression); err == nil {
			o.Compression = m
		}
		return err
	}, func(o *TableParams) { o.Compression = defaultCompression() }},
	{"speculative_retry", func(o *TableParams, _ *Compaction) (err error) {
		o.SpeculativeRetry, err = normalRetryPolicy(o.SpeculativeRetry)
		return err
	}, func(o *TableParams) { o.SpeculativeRetry = "99p" }},
	{"additional_write_policy", func(o *TableParams, _ *Compaction) (err error) {
		o.AdditionalWritePolicy, err = normalRetryPolicy(o.AdditionalWritePolicy)
		return err
	}, func(o *TableParams) { o.AdditionalWritePolicy = "99p" }},
	{"read_repair", func(o *TableParams, _ *Compaction) error {
		switch v := strings.ToUpper(o.ReadRepair); v {
		case "BLOCKING", "NONE":
			o.ReadRepair = v
			return nil
		}
		return fmt.Errorf("Invalid value '%s' for option 'read_repair': only 'BLOCKING' and 'NONE' are allowed", o.ReadRepair)
	}, func(o *TableParams) { o.ReadRepair = "BLOCKING" }},
	{"bloom_filter_fp_chance", func(o *TableParams, _ *Compaction) error {
		if v := o.BloomFilterFPChance; v <= minBloomFilterFPChance || v > 1 {
			return fmt.Errorf("bloom_filter_fp_chance must be larger than %s and less than or equal to 1.0 (got %s)",
				cqltype.JavaFloatText(minBloomFilterFPChance, 64), cqltype.JavaFloatText(v, 64))
		}
		return nil
	}, func(o *TableParams) { o.BloomFilterFPChance = 0.01 }},
	{"crc_check_chance", func(o *TableParams, _ *Compaction) error {
		if v := o.CRCCheckChance; v < 0 || v > 1 {
			return fmt.Errorf("crc_check_chance must be larger than or equal to 0 and smaller than or equal to 1.0 (got %s)", cqltype.JavaFloatText(v, 64))
		}
		return nil
	}, func(o *TableParams) { o.CRCCheckChance = 1 }},
	{"default_time_to_live", func(o *TableParams, _ *Compaction) error {
		switch v := o.DefaultTimeToLive; {
		case v < 0:
			return fmt.Errorf("default_time_to_live must be greater than or equal to 0 (got %d)", v)
		case v > MaxTTL:
			return fmt.Errorf("default_time_to_live must be less than or equal to %d (got %d)", MaxTTL, v)
		}
		return nil
	}, func(o *TableParams) { o.DefaultTimeToLive = 0 }},
	{"gc_grace_seconds", func(o *TableParams, _ *Compaction) error {
		if o.GCGraceSeconds < 0 {
			return fmt.Errorf("gc_grace_seconds must be greater than or equal to 0 (got %d)", o.GCGraceSeconds)
		}
		return nil
	}, func(o *TableParams) { o.GCGraceSeconds = 864000 }},
	{"min_index_interval", func(o *TableParams, _ *Compaction) error {
		if o.MinIndexInterval < 1 {
			return fmt.Errorf("min_index_interval must be greater than or equal to 1 (got %d)", o.MinIndexInterval)
		}
		return nil
	}, func(o *TableParams) { o.MinIndexInterval = 128 }},
	{"max_index_interval", func(o *TableParams, _ *Compaction) error {
		if o.MaxIndexInterval < o.MinIndexInterval {
			return fmt.Errorf("max_index_interval must be greater than or equal to min_index_interval (%d) (got %d)", o.MinIndexInterval, o.MaxIndexInterval)
		}
		return nil
	}, func(o *TableParams) { o.MaxIndexInterval = max(2048, o.MinIndexInterval) }},
	{"memtable_flush_period_in_ms", func(o *TableParams, _ *Compaction) error {
		if o.MemtableFlushPeriodMs < 0 {
			return fmt.Errorf("memtable_flush_period_in_ms must be greater than or equal to 0 (got %d)", o.MemtableFlushPeriodMs)
		}
		return nil
	}, func(o *TableParams) { o.MemtableFlushPeriodMs = 0 }},
	{"tombstone_gc", func(o *TableParams, _ *Compaction) error { return checkTombstoneGC(o) },
		func(o *TableParams) { o.SetTombstoneGC(DefaultTombstoneGC) }},
}

// Checked reads and checks every option as Cassandra 4.1 does, and
// returns them in the form system_schema stores (classes by their full
// names, defaults of sub-options filled in, speculative retry policies and
// read_repair spelled as Cassandra spells them) with the table's
// compaction typed for the engine. The error is the first problem in
// Cassandra's order, in its words.
func (o TableParams) Checked() (TableParams, Compaction, error) {
	out := o.clone()
	c := DefaultCompaction
	for _, r := range optionRules {
		if err := r.check(&out, &c); err != nil {
			return o, c, asConfigurationError(err)
		}
	}
	return out, c, nil
}

// Sanitized is Checked for options a node already stores: each option it
// cannot use (written by an older build, or by hand) is reported and
// replaced by its default, so that the table opens.
func (o TableParams) Sanitized(report func(option string, err error)) (TableParams, Compaction) {
	out := o.clone()
	c := DefaultCompaction
	for _, r := range optionRules {
		if err := r.check(&out, &c); err != nil {
			report(r.name, err)
			r.reset(&out)
			if err := r.check(&out, &c); err != nil {
				panic(invariants.Failf("schema: the default of %s does not check: %v", r.name, err))
			}
		}
	}
	return out, c
}

func (o *TableParams) clone() TableParams {
	c := *o
	c.Caching = maps.Clone(o.Caching)
	c.Compaction = maps.Clone(o.Compaction)
	c.Compression = maps.Clone(o.Compression)
	c.Extensions = maps.Clone(o.Extensions)
	return c
}

// parseCaching checks a caching map and returns it as Cassandra stores it.
func parseCaching(m map[string]string) (map[string]string, error) {
	out := map[string]string{"keys": "NONE", "rows_per_partition": "NONE"}
	if v, ok := m["keys"]; ok {
		switch {
		case strings.EqualFold(v, "ALL"), strings.EqualFold(v, "NONE"):
			out["keys"] = strings.ToUpper(v)
		default:
			return nil, fmt.Errorf("Invalid value '%s' for caching sub-option 'keys': only 'ALL' and 'NONE' are allowed", v)
		}
	}
	if v, ok := m["rows_per_partition"]; ok {
		n, err := strconv.ParseInt(v, 10, 32)
		switch {
		case strings.EqualFold(v, "ALL"), strings.EqualFold(v, "NONE"):
			out["rows_per_partition"] = strings.ToUpper(v)
		case isNumeric(v) && err == nil:
			if n > 0 {
				out["rows_per_partition"] = strconv.FormatInt(n, 10)
			}
		default:
			return nil, fmt.Errorf("Invalid value '%s' for caching sub-option 'rows_per_partition': only 'ALL', 'NONE', and integer values are allowed", v)
		}
	}
	var extra []string
	for k := range m {
		if k != "keys" && k != "rows_per_partition" {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		slices.Sort(extra)
		return nil, fmt.Errorf("Invalid caching sub-options [%s]: only 'keys' and 'rows_per_partition' are allowed", strings.Join(extra, ", "))
	}
	return out, nil
}

// Compressor classes and the sub-options each takes besides the common
// ones.
var compressors = map[string][]string{
	"org.apache.cassandra.io.compress.LZ4Compressor":     {"lz4_compressor_type", "lz4_high_compressor_level"},
	"org.apache.cassandra.io.compress.SnappyCompressor":  nil,
	"org.apache.cassandra.io.compress.DeflateCompressor": nil,
	"org.apache.cassandra.io.compress.ZstdCompressor":    {"compression_level"},
	"org.apache.cassandra.io.compress.NoopCompressor":    nil,
}

// parseCompression checks a compression map as Cassandra 4.1 does and
// returns it as Cassandra stores it. Sibyl's SSTables compress their
// blocks with Snappy whatever the option says; the option is kept and
// shown as given.
func parseCompression(given map[string]string) (map[string]string, error) {
	m := maps.Clone(given)
	_, hasClass := m["class"]
	_, hasOld := m["sstable_compression"]
	enabled, hasEnabled := m["enabled"]
	on := !hasEnabled || strings.EqualFold(enabled, "true")
	if len(m) > 0 && on && !hasClass && !hasOld {
		return nil, fmt.Errorf("Missing sub-option 'class' for the 'compression' option.")
	}
	delete(m, "enabled")
	if !on || len(given) == 0 {
		if len(m) > 0 {
			return nil, fmt.Errorf("If the 'enabled' option is set to false no other options must be specified")
		}
		return map[string]string{"enabled": "false"}, nil
	}
	if hasClass && hasOld {
		return nil, fmt.Errorf("The 'sstable_compression' option must not be used if the compression algorithm is already specified by the 'class' option")
	}
	class := m["class"]
	if hasOld {
		class = m["sstable_compression"]
	} else if class == "" {
		return nil, fmt.Errorf("The 'class' option must not be empty. To disable compression use 'enabled' : false")
	}
	delete(m, "class")
	delete(m, "sstable_compression")
	chunk := int64(16)
	if _, ok := m["chunk_length_kb"]; ok {
		if _, both := m["chunk_length_in_kb"]; both {
			return nil, fmt.Errorf("The 'chunk_length_kb' option must not be used if the chunk length is already specified by the 'chunk_length_in_kb' option")
		}
		m["chunk_length_in_kb"] = m["chunk_length_kb"]
		delete(m, "chunk_length_kb")
	}
	if v, ok := m["chunk_length_in_kb"]; ok {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("Invalid value for chunk_length_in_kb")
		}
		if n > math.MaxInt32/1024 {
			return nil, fmt.Errorf("Value of chunk_length_in_kb is too large (%d)", n)
		}
		chunk = n
		delete(m, "chunk_length_in_kb")
	}
	ratio := 0.0
	if v, ok := m["min_compress_ratio"]; ok {
		f, err := parseJavaDouble(v)
		if err != nil {
			return nil, fmt.Errorf("Invalid value %s for min_compress_ratio: it must be a number", v)
		}
		ratio = f
		delete(m, "min_compress_ratio")
	}
	delete(m, "crc_check_chance") // the deprecated place of the table option
	out := map[string]string{}
	if class == "" {
		if len(m) > 0 {
			return nil, fmt.Errorf("Unknown compression options ([%s]) since no compression class found", strings.Join(slices.Sorted(maps.Keys(m)), ", "))
		}
		return map[string]string{"enabled": "false"}, nil
	}
	if !strings.Contains(class, ".") {
		class = "org.apache.cassandra.io.compress." + class
	}
	supported, ok := compressors[class]
	if !ok {
		return nil, fmt.Errorf("Could not create Compression for type %s", class)
	}
	if err := checkCompressorOptions(class, m); err != nil {
		return nil, err
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(supported, k) {
			return nil, fmt.Errorf("Unknown compression options %s", k)
		}
		out[k] = m[k]
	}
	switch {
	case chunk <= 0:
		return nil, fmt.Errorf("Invalid negative or null chunk_length_in_kb")
	case chunk&(chunk-1) != 0:
		return nil, fmt.Errorf("chunk_length_in_kb must be a power of 2")
	case ratio < 0:
		return nil, fmt.Errorf("Invalid negative min_compress_ratio")
	case ratio > 0 && ratio < 1:
		return nil, fmt.Errorf("min_compress_ratio can either be 0 or greater than or equal to 1")
	}
	out["class"] = class
	out["chunk_length_in_kb"] = strconv.FormatInt(chunk, 10)
	if ratio != 0 {
		out["min_compress_ratio"] = cqltype.JavaFloatText(ratio, 64)
	}
	return out, nil
}

// checkCompressorOptions checks the sub-options of LZ4 and Zstd.
func checkCompressorOptions(class string, m map[string]string) error {
	switch class {
	case "org.apache.cassandra.io.compress.LZ4Compressor":
		if v, ok := m["lz4_compressor_type"]; ok && v != "fast" && v != "high" {
			return fmt.Errorf("Invalid compressor type '%s' specified for LZ4 parameter 'lz4_compressor_type'. Valid options are [high, fast].", v)
		}
		if v, ok := m["lz4_high_compressor_level"]; ok {
			if n, err := strconv.Atoi(v); err != nil || n < 1 || n > 17 {
				return fmt.Errorf("Invalid value [%s] for parameter 'lz4_high_compressor_level'. Value must be between 1 and 17.", v)
			}
		}
	case "org.apache.cassandra.io.compress.ZstdCompressor":
		if v, ok := m["compression_level"]; ok {
			n, err := strconv.ParseInt(v, 10, 32)
			switch {
			case err != nil:
				return fmt.Errorf("ZstdCompressor.create() threw an error: java.lang.NumberFormatException For input string: \"%s\"", v)
			case n < -131072 || n > 22:
				return fmt.Errorf("ZstdCompressor.create() threw an error: java.lang.IllegalArgumentException compression_level=%d is invalid", n)
			}
		}
	}
	return nil
}
