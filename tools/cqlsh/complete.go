package cqlsh

import (
	"slices"
	"strings"

	"github.com/gocql/gocql"
)

// Tab completion in the interactive shell, from the schema the driver
// knows: keyspaces after USE, KEYSPACE and the like; tables (of the
// current keyspace, or of the one written before the dot) after FROM,
// INTO, UPDATE, TABLE and COPY; the columns of the statement's table
// elsewhere in a statement that names one; types after a column's name in
// CREATE TABLE and ALTER ... ADD; and keywords and shell commands.

// completionKeywords are what the completer offers where no name fits.
var completionKeywords = []string{
	"ADD", "AGGREGATE", "ALL", "ALLOW", "ALTER", "AND", "APPLY", "AS", "ASC", "BATCH", "BEGIN", "BY", "CAPTURE",
	"CLEAR", "CLUSTERING", "CONSISTENCY", "CONTAINS", "COPY", "COUNT", "CREATE", "CUSTOM", "DELETE", "DESC",
	"DESCRIBE", "DISTINCT", "DROP", "EXISTS", "EXIT", "EXPAND", "FILTERING", "FROM", "FUNCTION", "GRANT", "GROUP",
	"HELP", "IF", "IN", "INDEX", "INSERT", "INTO", "JSON", "KEY", "KEYSPACE", "KEYSPACES", "LIMIT", "LOGIN", "NOT",
	"NULL", "ON", "ORDER", "PAGING", "PARTITION", "PER", "PRIMARY", "QUIT", "RENAME", "REPLICATION", "REVOKE", "ROLE",
	"SELECT", "SERIAL", "SET", "SHOW", "SOURCE", "STATIC", "TABLE", "TABLES", "TIMESTAMP", "TO", "TOKEN", "TRACING",
	"TRUNCATE", "TTL", "TYPE", "TYPES", "UNLOGGED", "UPDATE", "USE", "USER", "USING", "VALUES", "WHERE", "WITH",
	"WRITETIME",
}

var completionTypes = []string{
	"ascii", "bigint", "blob", "boolean", "counter", "date", "decimal", "double", "duration", "float", "frozen",
	"inet", "int", "list", "map", "set", "smallint", "text", "time", "timestamp", "timeuuid", "tinyint", "tuple",
	"uuid", "varchar", "varint",
}

// schemaView is what completion reads of the schema.
type schemaView interface {
	Keyspaces() []string
	Tables(keyspace string) []string
	Columns(keyspace, table string) []string
	Types(keyspace string) []string
}

// completer completes the word before the cursor.
type completer struct {
	schema   schemaView
	keyspace func() string
}

// Do offers what may end the word before pos (readline's AutoCompleter).
func (c *completer) Do(line []rune, pos int) ([][]rune, int) {
	text := string(line[:pos])
	start := strings.LastIndexAny(text, " \t\n(,=")
	word := text[start+1:]
	before := strings.Fields(strings.NewReplacer("(", " ( ", ",", " , ", "=", " = ").Replace(text[:start+1]))
	candidates := c.candidates(before, word)
	// Names before a dot complete after it.
	prefix := word
	if i := strings.LastIndexByte(word, '.'); i >= 0 {
		prefix = word[i+1:]
	}
	var out [][]rune
	for _, cand := range candidates {
		if strings.HasPrefix(strings.ToLower(cand), strings.ToLower(prefix)) && cand != prefix {
			out = append(out, []rune(cand[len(prefix):]+" "))
		}
	}
	return out, len([]rune(prefix))
}

// candidates are the words that may stand where word is, after before.
func (c *completer) candidates(before []string, word string) []string {
	upper := make([]string, len(before))
	for i, w := range before {
		upper[i] = strings.ToUpper(w)
	}
	last := ""
	if len(upper) > 0 {
		last = upper[len(upper)-1]
	}
	if i := strings.LastIndexByte(word, '.'); i >= 0 {
		return c.schema.Tables(unquoteName(word[:i]))
	}
	switch last {
	case "USE", "KEYSPACE":
		return c.schema.Keyspaces()
	case "FROM", "INTO", "UPDATE", "TABLE", "COPY", "TRUNCATE", "ON":
		return append(c.schema.Tables(c.keyspace()), c.schema.Keyspaces()...)
	case "TYPE":
		return c.schema.Types(c.keyspace())
	}
	if len(upper) == 0 {
		return completionKeywords
	}
	if defining(upper) {
		return append(slices.Clone(completionTypes), c.schema.Types(c.keyspace())...)
	}
	if ks, table := statementTable(before, c.keyspace()); table != "" {
		return append(c.schema.Columns(ks, table), completionKeywords...)
	}
	return completionKeywords
}

// defining reports whether the word follows a column's name in a column
// definition, where a type goes: "CREATE TABLE t (k", "..., v" or
// "ALTER TABLE t ADD v".
func defining(upper []string) bool {
	n := len(upper)
	if n < 2 {
		return false
	}
	inCreate := slices.Contains(upper, "CREATE") && slices.Contains(upper, "TABLE") && slices.Contains(upper, "(")
	prev := upper[n-2]
	switch {
	case inCreate && (prev == "(" || prev == ","):
		return true
	case upper[0] == "ALTER" && prev == "ADD":
		return true
	}
	return false
}

// statementTable is the keyspace and table a statement names after FROM,
// INTO or UPDATE.
func statementTable(before []string, current string) (string, string) {
	for i, w := range before {
		switch strings.ToUpper(w) {
		case "FROM", "INTO", "UPDATE":
			if i+1 < len(before) {
				name := before[i+1]
				if ks, t, ok := strings.Cut(name, "."); ok {
					return unquoteName(ks), unquoteName(t)
				}
				return current, unquoteName(name)
			}
		}
	}
	return "", ""
}

// driverSchema reads the schema through the driver's metadata.
type driverSchema struct{ s *Shell }

func (d driverSchema) Keyspaces() []string {
	var out []string
	iter := d.s.session.Query("SELECT keyspace_name FROM system_schema.keyspaces").Iter()
	var name string
	for iter.Scan(&name) {
		out = append(out, name)
	}
	_ = iter.Close()
	return out
}

func (d driverSchema) meta(keyspace string) *gocql.KeyspaceMetadata {
	if keyspace == "" {
		return nil
	}
	m, err := d.s.session.KeyspaceMetadata(keyspace)
	if err != nil {
		return nil
	}
	return m
}

func (d driverSchema) Tables(keyspace string) []string {
	var out []string
	if m := d.meta(keyspace); m != nil {
		for name := range m.Tables {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

func (d driverSchema) Columns(keyspace, table string) []string {
	if m := d.meta(keyspace); m != nil && m.Tables[table] != nil {
		return tableOrder(m.Tables[table])
	}
	return nil
}

func (d driverSchema) Types(keyspace string) []string {
	var out []string
	if m := d.meta(keyspace); m != nil {
		for name := range m.UserTypes {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
