package schema

import (
	"fmt"
	"maps"
	"strconv"
)

// TombstoneGCMode is what a table's tombstones wait for before compaction
// may drop them: the modes of ScyllaDB's tombstone_gc table option.
type TombstoneGCMode string

// The modes.
const (
	// TombstoneGCTimeout waits gc_grace_seconds, as Cassandra does.
	TombstoneGCTimeout TombstoneGCMode = "timeout"
	// TombstoneGCRepair waits for a repair of the tombstone's range, begun
	// propagation_delay_in_seconds after it was written, to cover every
	// replica.
	TombstoneGCRepair TombstoneGCMode = "repair"
	// TombstoneGCDisabled keeps every tombstone.
	TombstoneGCDisabled TombstoneGCMode = "disabled"
	// TombstoneGCImmediate drops tombstones at the first compaction.
	TombstoneGCImmediate TombstoneGCMode = "immediate"
)

// TombstoneGC is a table's tombstone_gc option.
type TombstoneGC struct {
	Mode TombstoneGCMode
	// PropagationDelaySeconds is how long before a repair began a
	// tombstone must have been written for that repair to count for it.
	PropagationDelaySeconds int64
}

// DefaultTombstoneGC is a table's tombstone_gc when none is given: after
// gc_grace_seconds, as in Cassandra.
var DefaultTombstoneGC = TombstoneGC{Mode: TombstoneGCTimeout, PropagationDelaySeconds: 3600}

// tombstoneGCExtension is the key of system_schema.tables' extensions
// under which a table's tombstone_gc is kept, as ScyllaDB keeps it (a
// map<text, text> value), so that the tables' columns stay Cassandra's.
// A table with the default has none.
const tombstoneGCExtension = "tombstone_gc"

// ParseTombstoneGC reads a tombstone_gc map, with ScyllaDB's messages;
// what it does not set keeps its default.
func ParseTombstoneGC(m map[string]string) (TombstoneGC, error) {
	g := DefaultTombstoneGC
	for k, v := range m {
		switch k {
		case "mode":
			switch mode := TombstoneGCMode(v); mode {
			case TombstoneGCTimeout, TombstoneGCRepair, TombstoneGCDisabled, TombstoneGCImmediate:
				g.Mode = mode
			default:
				return g, fmt.Errorf("Invalid value for tombstone_gc option mode: %s", v)
			}
		case "propagation_delay_in_seconds":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return g, fmt.Errorf("Invalid value for tombstone_gc option propagation_delay_in_seconds: %s", v)
			}
			g.PropagationDelaySeconds = n
		default:
			return g, fmt.Errorf("Invalid tombstone_gc option: %s", k)
		}
	}
	return g, nil
}

// Map is the option as CQL writes it.
func (g TombstoneGC) Map() map[string]string {
	return map[string]string{"mode": string(g.Mode), "propagation_delay_in_seconds": strconv.FormatInt(g.PropagationDelaySeconds, 10)}
}

// TombstoneGC is the table's tombstone_gc option; options that passed
// Checked or Sanitized always hold a valid one.
func (o TableParams) TombstoneGC() TombstoneGC {
	g, _ := decodeTombstoneGC(o.Extensions[tombstoneGCExtension])
	return g
}

// SetTombstoneGC gives the table the option.
func (o *TableParams) SetTombstoneGC(g TombstoneGC) {
	o.Extensions = cloneExtensions(o.Extensions)
	delete(o.Extensions, tombstoneGCExtension)
	if g != DefaultTombstoneGC {
		o.Extensions[tombstoneGCExtension] = TextMap(g.Map())
	}
}

// ShownExtensions are the extensions but tombstone_gc, which DESCRIBE
// shows as an option of its own.
func (o TableParams) ShownExtensions() map[string][]byte {
	out := cloneExtensions(o.Extensions)
	delete(out, tombstoneGCExtension)
	return out
}

func cloneExtensions(m map[string][]byte) map[string][]byte {
	out := make(map[string][]byte, len(m))
	maps.Copy(out, m)
	return out
}

// decodeTombstoneGC reads the extension's value; none is the default.
func decodeTombstoneGC(b []byte) (TombstoneGC, error) {
	if b == nil {
		return DefaultTombstoneGC, nil
	}
	m, err := decodeTextMap(b)
	if err != nil {
		return DefaultTombstoneGC, fmt.Errorf("tombstone_gc: %w", err)
	}
	return ParseTombstoneGC(m)
}

// checkTombstoneGC is the option rule of tombstone_gc: the extension
// decodes, and is kept only when it is not the default.
func checkTombstoneGC(o *TableParams) error {
	g, err := decodeTombstoneGC(o.Extensions[tombstoneGCExtension])
	if err != nil {
		return err
	}
	o.SetTombstoneGC(g)
	return nil
}
