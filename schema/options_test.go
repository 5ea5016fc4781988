package schema

import (
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseCompaction(t *testing.T) {
	for _, c := range []struct {
		in   map[string]string
		want string // an error, or "" and the typed value below
		c    func(*Compaction)
	}{
		{map[string]string{"class": "LeveledCompactionStrategy", "sstable_size_in_mb": "80", "fanout_size": "5"}, "",
			func(c *Compaction) { c.Strategy, c.SSTableSizeMiB, c.FanoutSize = LeveledCompaction, 80, 5 }},
		{map[string]string{"class": TimeWindowClass, "compaction_window_unit": "HOURS", "compaction_window_size": "6", "timestamp_resolution": "MILLISECONDS"}, "",
			func(c *Compaction) {
				c.Strategy, c.WindowUnit, c.WindowSize, c.TimestampResolution = TimeWindowCompaction, time.Hour, 6, time.Millisecond
			}},
		{map[string]string{"class": "SizeTieredCompactionStrategy", "enabled": "false", "min_threshold": "2", "max_threshold": "8"}, "",
			func(c *Compaction) { c.Enabled, c.MinThreshold, c.MaxThreshold = false, 2, 8 }},
		{map[string]string{}, "Missing sub-option 'class' for the 'compaction' option", nil},
		{map[string]string{"class": "SizeTieredCompactionStrategy", "min_threshold": "-1"}, "Invalid value -1 for 'min_threshold' compaction sub-option - must be an integer", nil},
		{map[string]string{"class": "SizeTieredCompactionStrategy", "min_threshold": "0"}, "Disabling compaction by setting compaction thresholds to 0 has been removed, set the compaction option 'enabled' to false instead.", nil},
		{map[string]string{"class": "SizeTieredCompactionStrategy", "max_threshold": "3"}, "Min compaction threshold (got 4) cannot be greater than max compaction threshold (got 3)", nil},
		{map[string]string{"class": "SizeTieredCompactionStrategy", "bucket_low": "1.5", "bucket_high": "1.0"}, "bucket_high value (1.0) is less than or equal to the bucket_low value (1.5)", nil},
		{map[string]string{"class": "SizeTieredCompactionStrategy", "min_sstable_size": "-1"}, "min_sstable_size must be non negative: -1", nil},
		{map[string]string{"class": "SizeTieredCompactionStrategy", "tombstone_threshold": "-1"}, "tombstone_threshold must be greater than 0, but was -1.000000", nil},
		{map[string]string{"class": "SizeTieredCompactionStrategy", "log_all": "maybe"}, "'log_all' should either be 'true' or 'false', not maybe", nil},
		{map[string]string{"class": "SizeTieredCompactionStrategy", "provide_overlapping_tombstones": "some"}, "Invalid value SOME for 'provide_overlapping_tombstones' compaction sub-option - must be one of the following [NONE, ROW, CELL].", nil},
		{map[string]string{"class": "LeveledCompactionStrategy", "fanout_size": "x"}, "x is not a parsable int (base10) for fanout_size", nil},
		{map[string]string{"class": "TimeWindowCompactionStrategy", "compaction_window_size": "0"}, "0 must be greater than 1 for compaction_window_size", nil},
		{map[string]string{"class": "TimeWindowCompactionStrategy", "timestamp_resolution": "MINUTES"}, "MINUTES is not valid for timestamp_resolution", nil},
		{map[string]string{"class": "LeveledCompactionStrategy", "bucket_low": "x"}, "x is not a parsable float for bucket_low", nil},
		{map[string]string{"class": "TimeWindowCompactionStrategy", "b": "1", "a": "2"}, "Properties specified [a, b] are not understood by TimeWindowCompactionStrategy", nil},
		{map[string]string{"class": "com.example.Mine"}, "Unable to find compaction strategy class 'com.example.Mine'", nil},
	} {
		got, stored, err := ParseCompaction(c.in)
		if c.want != "" {
			if err == nil || err.Error() != c.want {
				t.Errorf("%v: %v, want %q", c.in, err, c.want)
			}
			continue
		}
		want := DefaultCompaction
		c.c(&want)
		if err != nil || got != want {
			t.Errorf("%v: %+v, %v, want %+v", c.in, got, err, want)
		}
		again, restored, err := ParseCompaction(stored)
		if err != nil || again != got || !maps.Equal(stored, restored) {
			t.Errorf("%v: the stored form %v does not read back the same: %+v %v", c.in, stored, again, err)
		}
	}
}

func TestOtherTableOptions(t *testing.T) {
	for _, c := range []struct {
		set  func(*TableParams)
		want string
		got  func(TableParams) bool
	}{
		{func(o *TableParams) { o.Caching = map[string]string{"rows_per_partition": "10"} }, "",
			func(o TableParams) bool {
				return maps.Equal(o.Caching, map[string]string{"keys": "NONE", "rows_per_partition": "10"})
			}},
		{func(o *TableParams) { o.Caching = map[string]string{"rows_per_partition": "-1"} },
			"Invalid value '-1' for caching sub-option 'rows_per_partition': only 'ALL', 'NONE', and integer values are allowed", nil},
		{func(o *TableParams) { o.Caching = map[string]string{"keys": "ALL", "rows": "x"} },
			"Invalid caching sub-options [rows]: only 'keys' and 'rows_per_partition' are allowed", nil},
		{func(o *TableParams) { o.Compression = map[string]string{} }, "",
			func(o TableParams) bool { return maps.Equal(o.Compression, map[string]string{"enabled": "false"}) }},
		{func(o *TableParams) {
			o.Compression = map[string]string{"class": "ZstdCompressor", "compression_level": "5"}
		}, "",
			func(o TableParams) bool {
				return maps.Equal(o.Compression, map[string]string{"class": "org.apache.cassandra.io.compress.ZstdCompressor", "chunk_length_in_kb": "16", "compression_level": "5"})
			}},
		{func(o *TableParams) { o.Compression = map[string]string{"enabled": "false", "class": "LZ4Compressor"} },
			"If the 'enabled' option is set to false no other options must be specified", nil},
		{func(o *TableParams) { o.Compression = map[string]string{"chunk_length_in_kb": "64"} }, "Missing sub-option 'class' for the 'compression' option.", nil},
		{func(o *TableParams) {
			o.Compression = map[string]string{"class": "LZ4Compressor", "min_compress_ratio": "0.5"}
		},
			"min_compress_ratio can either be 0 or greater than or equal to 1", nil},
		{func(o *TableParams) { o.Compression = map[string]string{"class": "LZ4Compressor", "level": "5"} }, "Unknown compression options level", nil},
		{func(o *TableParams) { o.Compression = map[string]string{"class": "Brotli"} }, "Could not create Compression for type org.apache.cassandra.io.compress.Brotli", nil},
		{func(o *TableParams) { o.SpeculativeRetry = "99.5PERCENTILE" }, "", func(o TableParams) bool { return o.SpeculativeRetry == "99.5p" }},
		{func(o *TableParams) { o.SpeculativeRetry = "99.99999p" },
			"Invalid value 99.99999p for PERCENTILE option 'speculative_retry': must be between (0.0 and 100.0)", nil},
		{func(o *TableParams) { o.SpeculativeRetry = "none" }, "", func(o TableParams) bool { return o.SpeculativeRetry == "NEVER" }},
		{func(o *TableParams) { o.AdditionalWritePolicy = "max(10ms , 90p)" }, "", func(o TableParams) bool { return o.AdditionalWritePolicy == "MAX(90p,10ms)" }},
		{func(o *TableParams) { o.SpeculativeRetry = "MIN(99p,98p)" },
			"Invalid value MIN(99p,98p) for option 'speculative_retry': MIN()/MAX() arguments should be of different types, but both are of type PERCENTILE", nil},
		{func(o *TableParams) { o.ReadRepair = "none" }, "", func(o TableParams) bool { return o.ReadRepair == "NONE" }},
		{func(o *TableParams) { o.ReadRepair = "sometimes" }, "Invalid value 'sometimes' for option 'read_repair': only 'BLOCKING' and 'NONE' are allowed", nil},
		{func(o *TableParams) { o.CRCCheckChance = 0 }, "", func(o TableParams) bool { return o.CRCCheckChance == 0 }},
		{func(o *TableParams) { o.MaxIndexInterval = 64 }, "max_index_interval must be greater than or equal to min_index_interval (128) (got 64)", nil},
		{func(o *TableParams) { o.DefaultTimeToLive = MaxTTL + 1 }, "default_time_to_live must be less than or equal to 630720000 (got 630720001)", nil},
		{func(o *TableParams) { o.GCGraceSeconds = 0 }, "", func(o TableParams) bool { return o.GCGraceSeconds == 0 }},
	} {
		o := DefaultTableParams()
		c.set(&o)
		got, _, err := o.Checked()
		switch {
		case c.want != "" && (err == nil || err.Error() != c.want):
			t.Errorf("%+v: %v, want %q", o, err, c.want)
		case c.want == "" && (err != nil || !c.got(got)):
			t.Errorf("%+v: %+v, %v", o, got, err)
		}
	}
	bad := DefaultTableParams()
	bad.Caching = map[string]string{"keys": "x"}
	bad.MinIndexInterval = 0
	var reported []string
	got, _ := bad.Sanitized(func(option string, err error) { reported = append(reported, option) })
	if !reflect.DeepEqual(reported, []string{"caching", "min_index_interval"}) || got.MinIndexInterval != 128 || got.Caching["keys"] != "ALL" {
		t.Errorf("Sanitized reported %v and made %+v", reported, got)
	}
}

func TestParseReplication(t *testing.T) {
	dcs := []string{"dc1", "dc2"}
	for _, c := range []struct {
		in, previous map[string]string
		dcs          []string
		want         Replication
		err          string
	}{
		{in: map[string]string{"class": "SimpleStrategy"}, want: Replication{Class: SimpleStrategy, Factor: 1}},
		{in: map[string]string{"class": "SimpleStrategy"}, previous: map[string]string{"class": SimpleStrategy, "replication_factor": "3"},
			want: Replication{Class: SimpleStrategy, Factor: 3}},
		{in: map[string]string{"class": "NetworkTopologyStrategy", "replication_factor": "3"}, dcs: dcs,
			want: Replication{Class: NetworkTopologyStrategy, DataCenters: map[string]int{"dc1": 3, "dc2": 3}}},
		{in: map[string]string{"class": "NetworkTopologyStrategy", "replication_factor": "3", "dc2": "1"}, dcs: dcs,
			want: Replication{Class: NetworkTopologyStrategy, DataCenters: map[string]int{"dc1": 3, "dc2": 1}}},
		{in: map[string]string{"class": "NetworkTopologyStrategy", "dc1": "2", "dc2": "0"}, dcs: dcs,
			want: Replication{Class: NetworkTopologyStrategy, DataCenters: map[string]int{"dc1": 2}}},
		{in: map[string]string{"class": "NetworkTopologyStrategy", "replication_factor": "2"}, dcs: dcs,
			previous: map[string]string{"class": NetworkTopologyStrategy, "dc1": "5"},
			want:     Replication{Class: NetworkTopologyStrategy, DataCenters: map[string]int{"dc1": 5, "dc2": 2}}},
		{in: map[string]string{"class": "NetworkTopologyStrategy"}, dcs: dcs,
			previous: map[string]string{"class": SimpleStrategy, "replication_factor": "2"},
			want:     Replication{Class: NetworkTopologyStrategy, DataCenters: map[string]int{"dc1": 2, "dc2": 2}}},
		{in: map[string]string{"class": "NetworkTopologyStrategy", "replication_factor": "abc"}, dcs: dcs, err: "Configuration for at least one datacenter must be present"},
		{in: map[string]string{"class": "NetworkTopologyStrategy", "dc1": "0"}, dcs: dcs, err: "Configuration for at least one datacenter must be present"},
		{in: map[string]string{"class": "NetworkTopologyStrategy", "dc3": "1"}, dcs: dcs, err: "Unrecognized strategy option {dc3} passed to NetworkTopologyStrategy for keyspace ks"},
		{in: map[string]string{"class": "NetworkTopologyStrategy", "REPLICATION_FACTOR": "1"}, dcs: dcs, err: "replication_factor should not appear as an option at construction time for NetworkTopologyStrategy"},
		{in: map[string]string{"class": "SimpleStrategy", "replication_factor": "3/1/1"}, err: "Replication factor format is <replicas> or <replicas>/<transient>"},
		{in: map[string]string{"class": "LocalStrategy"}, err: "Unable to use given strategy class: LocalStrategy is reserved for internal use."},
		{in: map[string]string{"class": "OldNetworkTopologyStrategy"}, err: "The support for the OldNetworkTopologyStrategy has been removed in C* version 4.0. The keyspace strategy should be switch to NetworkTopologyStrategy"},
		{in: map[string]string{"replication_factor": "1"}, err: "Missing replication strategy class"},
	} {
		got, err := ParseReplication("ks", c.in, c.dcs, c.previous)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%v: %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%v: %+v, %v, want %+v", c.in, got, err, c.want)
		}
		if again, err := ParseReplication("ks", got.Map(), c.dcs, nil); err != nil || !reflect.DeepEqual(again, got) {
			t.Errorf("%v: its stored form %v reads back as %+v, %v", c.in, got.Map(), again, err)
		}
	}
}

func TestNames(t *testing.T) {
	for name, ok := range map[string]bool{"ks": true, "Ks_1": true, "": false, "my-ks": false, "é": false,
		"a23456789012345678901234567890123456789012345678": true, "a234567890123456789012345678901234567890123456789": false} {
		if got := CheckKeyspaceName(name) == nil; got != ok {
			t.Errorf("keyspace %q: valid %v, want %v", name, got, ok)
		}
		if got := CheckTableName("ks", name) == nil; got != ok {
			t.Errorf("table %q: valid %v, want %v", name, got, ok)
		}
	}
}

// TestTombstoneGCExtension checks that tombstone_gc lives in the
// extensions only when it is not the default, round-trips through them,
// and that a stored value a node cannot read is reported and reset.
func TestTombstoneGCExtension(t *testing.T) {
	o := DefaultTableParams()
	if g := o.TombstoneGC(); g != DefaultTombstoneGC {
		t.Fatalf("default options hold %+v", g)
	}
	repair := TombstoneGC{Mode: TombstoneGCRepair, PropagationDelaySeconds: 60}
	o.SetTombstoneGC(repair)
	checked, _, err := o.Checked()
	if err != nil || checked.TombstoneGC() != repair || len(checked.ShownExtensions()) != 0 {
		t.Fatalf("Checked made %+v (shown extensions %v), %v", checked.TombstoneGC(), checked.ShownExtensions(), err)
	}
	o.SetTombstoneGC(DefaultTombstoneGC)
	if len(o.Extensions) != 0 {
		t.Fatalf("the default is kept as an extension: %v", o.Extensions)
	}
	bad := DefaultTableParams()
	bad.Extensions = map[string][]byte{"tombstone_gc": TextMap(map[string]string{"mode": "later"}), "other": {1}}
	if _, _, err := bad.Checked(); err == nil || !strings.Contains(err.Error(), "Invalid value for tombstone_gc option mode: later") {
		t.Fatalf("Checked of a bad tombstone_gc: %v", err)
	}
	var reported []string
	got, _ := bad.Sanitized(func(option string, err error) { reported = append(reported, option) })
	if !reflect.DeepEqual(reported, []string{"tombstone_gc"}) || got.TombstoneGC() != DefaultTombstoneGC || len(got.Extensions) != 1 {
		t.Fatalf("Sanitized reported %v and made %+v from %v", reported, got.TombstoneGC(), got.Extensions)
	}
}
