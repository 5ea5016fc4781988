package virtual

import (
	"maps"
	"slices"

	"github.com/sibyldb/sibyl/schema"
)

// schemaTables are system_virtual_schema's tables: the virtual keyspaces,
// their tables and columns.
func schemaTables() []Table {
	return []Table{
		{Def: schema.VirtualKeyspacesTable, Rows: func() ([]Row, error) {
			var rows []Row
			for _, ks := range schema.VirtualKeyspaces() {
				rows = append(rows, Row{"keyspace_name": Text(ks.Name)})
			}
			return rows, nil
		}},
		{Def: schema.VirtualTablesTable, Rows: func() ([]Row, error) {
			var rows []Row
			for _, t := range virtualTables() {
				rows = append(rows, Row{"keyspace_name": Text(t.Keyspace), "table_name": Text(t.Name), "comment": Text(t.Options.Comment)})
			}
			return rows, nil
		}},
		{Def: schema.VirtualColumnsTable, Rows: func() ([]Row, error) {
			var rows []Row
			for _, t := range virtualTables() {
				for _, c := range t.Columns {
					rows = append(rows, c.SchemaRow(t))
				}
			}
			return rows, nil
		}},
	}
}

// virtualTables are the tables of every virtual keyspace.
func virtualTables() []*schema.Table {
	var out []*schema.Table
	for _, ks := range schema.VirtualKeyspaces() {
		for _, name := range slices.Sorted(maps.Keys(ks.Tables)) {
			out = append(out, ks.Tables[name])
		}
	}
	return out
}
