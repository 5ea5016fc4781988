package cqlsh

import (
	"fmt"
	"slices"
	"strings"
)

// HELP lists the shell's commands and CQL's topics as cqlsh does. A shell
// command's help is the shell's own; a CQL topic's is the place in
// Cassandra's CQL documentation cqlsh would open in a browser, printed, as
// cqlsh prints it without one.

// cqlDocURL is the CQL documentation cqlsh points to when it has no local
// copy.
const cqlDocURL = "https://cassandra.apache.org/doc/latest/cassandra/cql/cql_singlefile.html"

// shellHelp describes each shell command HELP lists.
var shellHelp = map[string]string{
	"CAPTURE": "CAPTURE '<file>' appends query results to a file instead of printing them;\n" +
		"CAPTURE OFF stops; CAPTURE alone says where results go.",
	"CLEAR":       "CLEAR (or CLS) clears the terminal.",
	"CLS":         "CLS (or CLEAR) clears the terminal.",
	"CONSISTENCY": "CONSISTENCY shows the consistency level of the statements that follow;\nCONSISTENCY <level> sets it (ONE, QUORUM, ALL, LOCAL_QUORUM, ...).",
	"COPY": "COPY <table> [(<columns>)] TO '<file>' | STDOUT [WITH <option> = <value> AND ...];\n" +
		"COPY <table> [(<columns>)] FROM '<file>' | STDIN [WITH <option> = <value> AND ...];\n" +
		"Exports rows to, or imports rows from, CSV files cqlsh reads and writes: options\n" +
		"DELIMITER, QUOTE, ESCAPE, HEADER, NULL, DATETIMEFORMAT, BOOLSTYLE, NUMPROCESSES,\n" +
		"MAXATTEMPTS; for TO: PAGESIZE, BEGINTOKEN, ENDTOKEN, MAXOUTPUTSIZE, FLOATPRECISION,\n" +
		"DOUBLEPRECISION; for FROM: CHUNKSIZE, INGESTRATE, MAXBATCHSIZE, MAXROWS, SKIPROWS,\n" +
		"SKIPCOLS, MAXPARSEERRORS, MAXINSERTERRORS, ERRFILE, TTL.",
	"DESC":     "DESC is DESCRIBE.",
	"DESCRIBE": "DESCRIBE [FULL] SCHEMA | KEYSPACES | KEYSPACE <name> | TABLES | TABLE <name> |\nTYPES | TYPE <name> | INDEX <name> | CLUSTER | <name>: prints CQL that creates them.",
	"EXIT":     "EXIT (or QUIT) ends the shell.",
	"EXPAND":   "EXPAND ON prints each row's columns on lines of their own; EXPAND OFF goes back\nto tables; EXPAND alone says which.",
	"HELP":     "HELP lists the topics; HELP <topic> describes one.",
	"LOGIN":    "LOGIN <user> ['<password>'] connects again as another user; without a password,\nthe shell asks for it on the terminal.",
	"PAGING":   "PAGING ON | OFF | <rows> turns paging of results on or off, or sets the page size;\nPAGING alone says which.",
	"SERIAL":   "SERIAL CONSISTENCY shows the serial consistency level of conditional writes;\nSERIAL CONSISTENCY SERIAL | LOCAL_SERIAL sets it.",
	"SHOW":     "SHOW VERSION, SHOW HOST, SHOW SESSION <trace id>: the versions, the node connected\nto, a trace.",
	"SOURCE":   "SOURCE '<file>' runs the statements and commands of a file.",
	"TRACING":  "TRACING ON traces each statement and prints its trace; TRACING OFF stops; TRACING\nalone says which.",
	"UNICODE": "Text values print as they are, but for control characters and characters the\n" +
		"terminal's encoding cannot show, which print as backslash escapes (in their own\n" +
		"colour when colour is on).",
}

// cqlHelpTopics maps each CQL help topic to its place in the documentation.
var cqlHelpTopics = map[string]string{
	"aggregates": "aggregates", "alter_keyspace": "alterKeyspaceStmt", "alter_materialized_view": "alterMVStmt",
	"alter_table": "alterTableStmt", "alter_type": "alterTypeStmt", "alter_user": "alterUserStmt",
	"apply": "batchStmt", "ascii": "constants", "batch": "batchStmt", "begin": "batchStmt", "blob": "constants",
	"boolean": "constants", "counter": "counters", "create_aggregate": "createAggregateStmt",
	"create_columnfamily": "createTableStmt", "create_function": "createFunctionStmt", "create_index": "createIndexStmt",
	"create_keyspace": "createKeyspaceStmt", "create_materialized_view": "createMVStmt", "create_role": "createRoleStmt",
	"create_table": "createTableStmt", "create_trigger": "createTriggerStmt", "create_type": "createTypeStmt",
	"create_user": "createUserStmt", "date": "usingdates", "delete": "deleteStmt", "drop_aggregate": "dropAggregateStmt",
	"drop_columnfamily": "dropTableStmt", "drop_function": "dropFunctionStmt", "drop_index": "dropIndexStmt",
	"drop_keyspace": "dropKeyspaceStmt", "drop_materialized_view": "dropMVStmt", "drop_role": "dropRoleStmt",
	"drop_table": "dropTableStmt", "drop_trigger": "dropTriggerStmt", "drop_type": "dropTypeStmt",
	"drop_user": "dropUserStmt", "functions": "functions", "grant": "grantRoleStmt", "insert": "insertStmt",
	"insert_json": "insertJson", "int": "constants", "json": "json", "keywords": "appendixA",
	"list_permissions": "listPermissionsStmt", "list_roles": "listRolesStmt", "list_users": "listUsersStmt",
	"permissions": "permissions", "revoke": "revokeRoleStmt", "select": "selectStmt", "select_json": "selectJson",
	"text": "constants", "time": "usingtime", "timestamp": "usingtimestamps", "truncate": "truncateStmt",
	"types": "types", "update": "updateStmt", "use": "useStmt", "uuid": "constants",
}

func (s *Shell) help(args []string) {
	out := s.opts.Out
	if len(args) == 0 {
		shell := make([]string, 0, len(shellHelp))
		for name := range shellHelp {
			shell = append(shell, name)
		}
		slices.Sort(shell)
		fmt.Fprint(out, "\nDocumented shell commands:\n===========================\n")
		fmt.Fprint(out, columnize(shell, 79))
		fmt.Fprintln(out)
		topics := make([]string, 0, len(cqlHelpTopics))
		for t := range cqlHelpTopics {
			topics = append(topics, strings.ToUpper(t))
		}
		slices.Sort(topics)
		fmt.Fprint(out, "CQL help topics:\n================\n")
		fmt.Fprint(out, columnize(topics, 79))
		fmt.Fprintln(out)
		return
	}
	for _, t := range args {
		if text, ok := shellHelp[strings.ToUpper(t)]; ok {
			fmt.Fprintln(out, text)
			continue
		}
		if anchor, ok := cqlHelpTopics[strings.ToLower(t)]; ok {
			s.error(fmt.Sprintf("*** No browser to display CQL help. URL for help topic %s : %s#%s", t, cqlDocURL, anchor))
			continue
		}
		s.error(fmt.Sprintf("*** No help on %s", t))
	}
}
