package cqlsh

import (
	"github.com/gocql/gocql"
	"github.com/sibyldb/sibyl/cqltype"
)

// cqlsh's terminal colours (bold, but for blobs).
const (
	colorRed         = "\x1b[0;1;31m"
	colorGreen       = "\x1b[0;1;32m"
	colorYellow      = "\x1b[0;1;33m"
	colorBlue        = "\x1b[0;1;34m"
	colorMagenta     = "\x1b[0;1;35m"
	colorCyan        = "\x1b[0;1;36m"
	colorWhite       = "\x1b[0;1;37m"
	colorDarkMagenta = "\x1b[0;35m"
	colorReset       = "\x1b[0m"
)

// paintValue colours a piece of a value as cqlsh does: text yellow, other
// scalars green, blobs and escapes dark magenta, punctuation blue, nulls red.
func paintValue(class cqltype.DisplayClass, s string) string {
	c := colorYellow
	switch class {
	case cqltype.DisplayNumber:
		c = colorGreen
	case cqltype.DisplayBlob:
		c = colorDarkMagenta
	case cqltype.DisplayEscape:
		c = colorDarkMagenta
	case cqltype.DisplayPunct:
		c = colorBlue
	case cqltype.DisplayError:
		c = colorRed
	}
	return c + s + colorReset
}

// columnColor is the colour of a column's name in a result header, by its
// role in its table: partition key red, clustering cyan, static white,
// anything else (and result columns of no table) magenta.
func (s *Shell) columnColor(c gocql.ColumnInfo) string {
	if c.Keyspace == "" || c.Table == "" {
		return colorMagenta
	}
	ks, err := s.session.KeyspaceMetadata(c.Keyspace)
	if err != nil {
		return colorMagenta
	}
	t, ok := ks.Tables[c.Table]
	if !ok {
		return colorMagenta
	}
	col, ok := t.Columns[c.Name]
	if !ok {
		return colorMagenta
	}
	switch col.Kind {
	case gocql.ColumnPartitionKey:
		return colorRed
	case gocql.ColumnClusteringKey:
		return colorCyan
	case gocql.ColumnStatic:
		return colorWhite
	}
	return colorMagenta
}
