package native

import (
	"github.com/sibyldb/sibyl/cqltype"
)

// writeType writes a type as an [option] (cql-clients.md 1.13) for the
// connection's protocol version: before version 4 the date, time,
// smallint and tinyint ids do not exist, and before version 5 neither does
// duration's, so those go as custom types named by their Cassandra class.
// Descending clustering columns go as their base type.
func (w *writer) writeType(t *cqltype.Type, version byte) {
	switch {
	case t.Kind == cqltype.Custom:
		w.short(0)
		w.string(t.Name)
		return
	case t.Kind == cqltype.Vector:
		w.short(0)
		w.string(t.MarshalName())
		return
	case t.Kind == cqltype.Duration && version < 5,
		version < 4 && (t.Kind == cqltype.Date || t.Kind == cqltype.Time || t.Kind == cqltype.Smallint || t.Kind == cqltype.Tinyint):
		w.short(0)
		w.string(cqltype.MarshalClass(t.Kind))
		return
	}
	w.short(t.Kind.OptionID())
	switch t.Kind {
	case cqltype.List, cqltype.Set:
		w.writeType(t.Params[0], version)
	case cqltype.Map:
		w.writeType(t.Params[0], version)
		w.writeType(t.Params[1], version)
	case cqltype.Tuple:
		w.short(uint16(len(t.Params)))
		for _, p := range t.Params {
			w.writeType(p, version)
		}
	case cqltype.UDT:
		w.string(t.Keyspace)
		w.string(t.Name)
		w.short(uint16(len(t.Params)))
		for i, p := range t.Params {
			w.string(t.FieldNames[i])
			w.writeType(p, version)
		}
	}
}
