package exec

import (
	"strconv"
	"strings"

	"github.com/sibyldb/sibyl/cql"
	"github.com/sibyldb/sibyl/schema"
)

// Option values are constants or maps of constants; Cassandra reads them
// as strings, whatever their literal kind.

func optionString(o cql.Option) (string, error) {
	c, ok := o.Value.(*cql.Constant)
	if !ok {
		return "", syntaxf("Invalid value for property '%s'. It should be a string", o.Name)
	}
	return c.Text, nil
}

func optionMap(o cql.Option) (map[string]string, error) {
	out := map[string]string{}
	switch v := o.Value.(type) {
	case *cql.MapLiteral:
		for _, e := range v.Entries {
			k, kok := e.Key.(*cql.Constant)
			val, vok := e.Value.(*cql.Constant)
			if !kok || !vok {
				return nil, syntaxf("Invalid value for property '%s'. It should be a map.", o.Name)
			}
			out[k.Text] = val.Text
		}
		return out, nil
	case *cql.SetLiteral:
		if len(v.Elements) == 0 { // {} reads as an empty set
			return out, nil
		}
	}
	return nil, syntaxf("Invalid value for property '%s'. It should be a map.", o.Name)
}

func optionInt(o cql.Option) (int32, error) {
	s, err := optionString(o)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, syntaxf("Invalid integer value %s for '%s'", s, o.Name)
	}
	return int32(n), nil
}

func optionFloat(o cql.Option) (float64, error) {
	s, err := optionString(o)
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, syntaxf("Invalid double value %s for '%s'", s, o.Name)
	}
	return f, nil
}

// checkRepeats refuses an option given twice.
func checkRepeats(opts []cql.Option) error {
	seen := map[string]bool{}
	for _, o := range opts {
		if seen[o.Name] {
			return syntaxf("Multiple definition for property '%s'", o.Name)
		}
		seen[o.Name] = true
	}
	return nil
}

// tableOptions reads CREATE/ALTER TABLE's WITH options onto base, for a
// table of keyspace ks.
func tableOptions(ks *schema.Keyspace, base schema.TableParams, opts []cql.Option) (schema.TableParams, error) {
	o := base
	if err := checkRepeats(opts); err != nil {
		return o, err
	}
	for _, opt := range opts {
		var err error
		switch opt.Name {
		case "comment":
			o.Comment, err = optionString(opt)
		case "gc_grace_seconds":
			o.GCGraceSeconds, err = optionInt(opt)
		case "default_time_to_live":
			o.DefaultTimeToLive, err = optionInt(opt)
		case "bloom_filter_fp_chance":
			o.BloomFilterFPChance, err = optionFloat(opt)
		case "crc_check_chance":
			o.CRCCheckChance, err = optionFloat(opt)
		case "memtable_flush_period_in_ms":
			o.MemtableFlushPeriodMs, err = optionInt(opt)
		case "min_index_interval":
			o.MinIndexInterval, err = optionInt(opt)
		case "max_index_interval":
			o.MaxIndexInterval, err = optionInt(opt)
		case "speculative_retry":
			o.SpeculativeRetry, err = optionString(opt)
		case "additional_write_policy":
			o.AdditionalWritePolicy, err = optionString(opt)
		case "read_repair":
			o.ReadRepair, err = optionString(opt)
		case "caching":
			o.Caching, err = optionMap(opt)
		case "compaction":
			o.Compaction, err = optionMap(opt)
		case "compression":
			o.Compression, err = optionMap(opt)
		case "cdc":
			var on bool
			if on, err = optionBool(opt); err == nil && on {
				err = configf("cdc is not supported: Sibyl has no change data capture log")
			}
		case "memtable":
			var v string
			if v, err = optionString(opt); err == nil && v != "default" {
				err = configf("Memtable configuration \"%s\" not found.", v)
			}
		case "extensions":
			// Accepted and ignored, as Cassandra 4.1 does.
		case "tombstone_gc":
			err = tombstoneGCOption(ks, &o, opt)
		default:
			err = syntaxf("Unknown property '%s'", opt.Name)
		}
		if err != nil {
			return o, err
		}
	}
	if v, ok := o.Compression["crc_check_chance"]; ok {
		// The option's place before Cassandra 3.0; the table option given
		// too wins.
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return o, syntaxf("Invalid double value %s for crc_check_chance.'", v)
		}
		if !given(opts, "crc_check_chance") {
			o.CRCCheckChance = f
		}
	}
	o, _, err := o.Checked()
	return o, asInvalid(err)
}

// tombstoneGCOption reads ScyllaDB's tombstone_gc option onto o, refusing
// repair mode where there is no other replica to repair with, as ScyllaDB
// does.
func tombstoneGCOption(ks *schema.Keyspace, o *schema.TableParams, opt cql.Option) error {
	m, err := optionMap(opt)
	if err != nil {
		return err
	}
	g, err := schema.ParseTombstoneGC(m)
	if err != nil {
		return configf("%s", err.Error())
	}
	if g.Mode == schema.TombstoneGCRepair && ks.Replication.SingleCopy() {
		return configf("tombstone_gc option with mode = repair not supported for table with RF one or local replication strategy")
	}
	o.SetTombstoneGC(g)
	return nil
}

// given reports whether an option of that name is among opts.
func given(opts []cql.Option, name string) bool {
	for _, o := range opts {
		if o.Name == name {
			return true
		}
	}
	return false
}

// optionBool reads a boolean as Cassandra's property definitions do (cdc,
// durable_writes): 1, true or yes; 0, false or no; any case.
func optionBool(o cql.Option) (bool, error) {
	s, err := optionString(o)
	if err != nil {
		return false, err
	}
	switch strings.ToLower(s) {
	case "1", "true", "yes":
		return true, nil
	case "0", "false", "no":
		return false, nil
	}
	return false, syntaxf("Invalid boolean value %s for '%s'. Positive values can be '1', 'true' or 'yes'. Negative values can be '0', 'false' or 'no'.", s, o.Name)
}
