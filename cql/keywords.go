package cql

import (
	"strings"

	"github.com/sibyldb/sibyl/cqltype"
)

// reserved are the words that can never be unquoted names: Cassandra's
// reserved keywords, plus true and false, which its lexer turns into
// booleans before it considers identifiers. Every other keyword (key, type,
// ttl, timestamp, count, ...) is unreserved and may name a column, table,
// keyspace or type.
var reserved = map[string]bool{
	"add": true, "allow": true, "alter": true, "and": true, "apply": true, "asc": true,
	"authorize": true, "batch": true, "begin": true, "by": true, "columnfamily": true,
	"create": true, "delete": true, "desc": true, "describe": true, "drop": true,
	"entries": true, "execute": true, "from": true, "full": true, "grant": true, "if": true,
	"in": true, "index": true, "infinity": true, "insert": true, "into": true, "is": true,
	"keyspace": true, "limit": true, "materialized": true, "modify": true, "nan": true,
	"norecursive": true, "not": true, "null": true, "of": true, "on": true, "or": true,
	"order": true, "primary": true, "rename": true, "revoke": true, "schema": true,
	"select": true, "set": true, "table": true, "to": true, "token": true, "truncate": true,
	"unlogged": true, "update": true, "use": true, "using": true, "view": true, "where": true,
	"with": true, "true": true, "false": true,
}

// quotedAnyway are unreserved words the renderer still quotes, because in
// some positions an unquoted one would read as the keyword: SELECT json ...,
// SELECT distinct ... and (type)as.
var quotedAnyway = map[string]bool{"json": true, "distinct": true, "as": true}

// selectorFunctions are the names that are syntax, not functions, when
// called: a user function of one of these names must be quoted.
var selectorFunctions = map[string]bool{"ttl": true, "writetime": true, "maxwritetime": true, "cast": true}

// nativeKinds are the type keywords and the kinds they name; varchar is
// text.
var nativeKinds = map[string]cqltype.Kind{
	"ascii": cqltype.Ascii, "bigint": cqltype.Bigint, "blob": cqltype.Blob,
	"boolean": cqltype.Boolean, "counter": cqltype.Counter, "date": cqltype.Date,
	"decimal": cqltype.Decimal, "double": cqltype.Double, "duration": cqltype.Duration,
	"float": cqltype.Float, "inet": cqltype.Inet, "int": cqltype.Int,
	"smallint": cqltype.Smallint, "text": cqltype.Text, "varchar": cqltype.Text,
	"time": cqltype.Time, "timestamp": cqltype.Timestamp, "timeuuid": cqltype.Timeuuid,
	"tinyint": cqltype.Tinyint, "uuid": cqltype.UUID, "varint": cqltype.Varint,
}

// keywordName is the ANTLR token name of a keyword, used in "expecting"
// messages; TABLE is spelled as Cassandra's grammar spells it.
func keywordName(word string) string {
	if word == "table" {
		return "K_COLUMNFAMILY"
	}
	return "K_" + strings.ToUpper(word)
}

func isPlainName(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// quoteIdent renders a name so that it lexes back to itself: bare when it
// is a lower-case identifier with no keyword meaning, double-quoted
// otherwise.
func quoteIdent(name string) string {
	if isPlainName(name) && !reserved[name] && !quotedAnyway[name] {
		return name
	}
	return forceQuote(name)
}

func forceQuote(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// quoteTypeName renders a user type's name: type keywords must be quoted
// too, or they would read as the native type.
func quoteTypeName(name string) string {
	if _, native := nativeKinds[name]; native {
		return forceQuote(name)
	}
	switch name {
	case "frozen", "list", "map", "tuple":
		return forceQuote(name)
	}
	return quoteIdent(name)
}

// quoteFunctionName renders a function's name; token is reserved but is
// still written bare in a call.
func quoteFunctionName(name string) string {
	switch {
	case name == "token":
		return name
	case selectorFunctions[name]:
		return forceQuote(name)
	}
	return quoteIdent(name)
}

// quoteString renders a string constant.
func quoteString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
