package cqlsh

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gocql/gocql"
	"github.com/sibyldb/sibyl/cqltype"
)

// Version is the cqlsh version the shell presents itself as: the one its
// output follows (Cassandra 4.1's).
const Version = "6.1.0"

// Options configure a shell.
type Options struct {
	Host string
	Port int
	// Cluster connects; its Keyspace is changed by USE.
	Cluster *gocql.ClusterConfig
	// Out and Err receive results and errors.
	Out, Err io.Writer
	// TTY makes the shell interactive: banner, prompts, ---MORE--- and
	// no file:line: prefixes on errors.
	TTY bool
	// Color paints values, column names and errors with cqlsh's colours.
	Color bool
	// MaxTraceWait is how long TRACING ON waits for a statement's trace
	// to be complete (cqlshrc's [tracing] max_trace_wait); default 10s.
	MaxTraceWait time.Duration
	// ReadPassword asks the terminal for LOGIN's password; nil when there
	// is no terminal to ask.
	ReadPassword func() (string, error)
}

// EnsureDefaults fills unset fields: 127.0.0.1:9042, standard output and
// error.
func (o *Options) EnsureDefaults() {
	if o.Host == "" {
		o.Host = "127.0.0.1"
	}
	if o.Port == 0 {
		o.Port = 9042
	}
	if o.Out == nil {
		o.Out = os.Stdout
	}
	if o.Err == nil {
		o.Err = os.Stderr
	}
	if o.MaxTraceWait == 0 {
		o.MaxTraceWait = 10 * time.Second
	}
}

// Validate reports what is wrong with the options.
func (o *Options) Validate() error {
	if o.Cluster == nil {
		return errors.New("cqlsh: Options.Cluster is required")
	}
	if o.Port < 0 || o.Port > 65535 {
		return fmt.Errorf("cqlsh: port %d is not a port", o.Port)
	}
	return nil
}

// Shell runs statements and shell commands, printing as cqlsh does.
type Shell struct {
	opts        Options
	session     *gocql.Session
	keyspace    string
	consistency gocql.Consistency
	serial      gocql.SerialConsistency
	paging      bool
	pageSize    int
	expand      bool
	// tracing traces each statement (TRACING ON) and prints the trace.
	tracing bool
	// inputName and line name the input for error prefixes (non-tty).
	inputName string
	line      int
	// failed says some statement failed (batch mode exits 2).
	failed bool
	// more waits for Enter between pages (interactive).
	more func() bool
	// capture, when set, receives query results instead of Out (CAPTURE).
	capture     *os.File
	captureName string
}

// results is where query output goes: the CAPTURE file, or Out.
func (s *Shell) results() io.Writer {
	if s.capture != nil {
		return s.capture
	}
	return s.opts.Out
}

// New connects a shell.
func New(opts Options) (*Shell, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts.EnsureDefaults()
	s := &Shell{opts: opts, consistency: gocql.One, serial: gocql.Serial, paging: true, pageSize: 100}
	if err := s.connect(opts.Cluster.Keyspace); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Shell) connect(keyspace string) error {
	cfg := *s.opts.Cluster
	cfg.Keyspace = keyspace
	// Every result carries its columns: a conditional write's depend on
	// whether it applied, which the prepared statement cannot say.
	cfg.DisableSkipMetadata = true
	session, err := cfg.CreateSession()
	if err != nil {
		return err
	}
	if s.session != nil {
		s.session.Close()
	}
	s.session, s.keyspace = session, keyspace
	return nil
}

// login connects again as another user (LOGIN user ['password']),
// staying in the keyspace; without a password it asks the terminal. The
// old session stays if the new one cannot be had.
func (s *Shell) login(args []string) {
	if len(args) < 1 || len(args) > 2 {
		s.error("Improper LOGIN command.")
		return
	}
	user := args[0]
	var password string
	if len(args) == 2 {
		password = args[1]
		if len(password) >= 2 && password[0] == '\'' && password[len(password)-1] == '\'' {
			password = strings.ReplaceAll(password[1:len(password)-1], "''", "'")
		}
	} else {
		if s.opts.ReadPassword == nil {
			s.error("LOGIN without a password needs a terminal to ask it on.")
			return
		}
		p, err := s.opts.ReadPassword()
		if err != nil {
			s.error(fmt.Sprintf("Connection error: %v", err))
			return
		}
		password = p
	}
	cluster := *s.opts.Cluster
	cluster.Authenticator = gocql.PasswordAuthenticator{Username: user, Password: password}
	old := s.opts.Cluster
	s.opts.Cluster = &cluster
	if err := s.connect(s.keyspace); err != nil {
		s.opts.Cluster = old
		s.error(fmt.Sprintf("Connection error: %v", err))
	}
}

// Close disconnects (and ends a CAPTURE).
func (s *Shell) Close() {
	if s.capture != nil {
		s.capture.Close()
	}
	s.session.Close()
}

// Failed reports whether a statement failed.
func (s *Shell) Failed() bool { return s.failed }

// Prompt is the prompt before a new statement, or its continuation.
func (s *Shell) Prompt(continuation bool) string {
	switch {
	case continuation && s.keyspace == "":
		return "   ... "
	case continuation:
		return strings.Repeat(" ", len(s.keyspace)) + "    ... "
	case s.keyspace == "":
		return "cqlsh> "
	}
	return "cqlsh:" + s.keyspace + "> "
}

// Banner prints what an interactive shell shows first.
func (s *Shell) Banner() {
	var cluster string
	_ = s.session.Query("SELECT cluster_name FROM system.local WHERE key = 'local'").Scan(&cluster)
	fmt.Fprintf(s.opts.Out, "Connected to %s at %s:%d\n", cluster, s.opts.Host, s.opts.Port)
	s.showVersion()
	fmt.Fprintln(s.opts.Out, "Use HELP for help.")
}

func (s *Shell) showVersion() {
	var release, cql string
	_ = s.session.Query("SELECT release_version, cql_version FROM system.local WHERE key = 'local'").Scan(&release, &cql)
	for strings.Count(cql, ".") < 2 {
		cql += ".0"
	}
	fmt.Fprintf(s.opts.Out, "[cqlsh %s | Cassandra %s | CQL spec %s | Native protocol v%d]\n", Version, release, cql, s.opts.Cluster.ProtoVersion)
}

// RunExecute runs the statements of -e: errors name them <stdin>, line
// 1, as cqlsh names a single statement's.
func (s *Shell) RunExecute(text string) {
	s.inputName, s.line = "<stdin>", 1
	var sp splitter
	for _, line := range strings.Split(text, "\n") {
		for _, st := range sp.add(line) {
			if s.Run(st) {
				return
			}
		}
	}
	if sp.pending() {
		s.error("Incomplete statement at end of file")
	}
}

// RunInput reads statements from r (a file, piped input) and runs them,
// naming source in errors.
func (s *Shell) RunInput(r io.Reader, source string) {
	s.inputName, s.line = source, 1
	var sp splitter
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		text := sc.Text()
		s.line++
		for _, st := range sp.add(text) {
			if s.Run(st) {
				return
			}
		}
	}
	if sp.pending() {
		s.error("Incomplete statement at end of file")
	}
}

// shellLine recognises the shell commands (the splitter decides where
// they end).
func (s *Shell) shellLine(line string) (string, bool) {
	t := strings.TrimSpace(line)
	word := strings.ToUpper(strings.TrimRight(strings.SplitN(t, " ", 2)[0], ";"))
	switch word {
	case "CONSISTENCY", "SERIAL", "PAGING", "EXPAND", "SHOW", "HELP", "?", "EXIT", "QUIT", "CLEAR", "CLS", "COPY",
		"SOURCE", "CAPTURE", "TRACING", "LOGIN", "UNICODE":
		return strings.TrimSuffix(t, ";"), true
	}
	return "", false
}

// Run runs one statement or shell command; it reports whether the shell
// should stop (EXIT).
func (s *Shell) Run(stmt string) bool {
	if cmd, ok := s.shellLine(stmt); ok {
		return s.command(cmd)
	}
	word := strings.ToUpper(firstWord(stmt))
	switch word {
	case "USE":
		s.use(stmt)
	case "DESC", "DESCRIBE":
		s.describe(stmt)
	default:
		s.query(stmt)
	}
	return false
}

func firstWord(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexFunc(s, func(r rune) bool { return r == ' ' || r == '\n' || r == '\t' || r == '(' }); i >= 0 {
		return s[:i]
	}
	return s
}

// use switches keyspace: gocql sessions are bound to one, so the shell
// reconnects in it (after checking it exists, as USE would).
func (s *Shell) use(stmt string) {
	name := strings.TrimSpace(stmt[len(firstWord(stmt)):])
	if strings.HasPrefix(name, `"`) && strings.HasSuffix(name, `"`) && len(name) >= 2 {
		name = strings.ReplaceAll(name[1:len(name)-1], `""`, `"`)
	} else {
		name = strings.ToLower(name)
	}
	var found string
	err := s.session.Query("SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name = ?", name).Scan(&found)
	if errors.Is(err, gocql.ErrNotFound) {
		s.error(fmt.Sprintf("InvalidRequest: Error from server: code=2200 [Invalid query] message=\"Keyspace '%s' does not exist\"", name))
		return
	}
	if err != nil {
		s.queryError(err)
		return
	}
	if err := s.connect(name); err != nil {
		s.error(fmt.Sprintf("Connection error: %v", err))
	}
}

// command runs a shell command; it reports whether to exit.
func (s *Shell) command(cmd string) bool {
	fields := strings.Fields(cmd)
	word := strings.ToUpper(fields[0])
	args := fields[1:]
	out := s.opts.Out
	switch word {
	case "COPY":
		s.copy(cmd)
	case "SOURCE":
		s.source(strings.TrimSpace(cmd[len(fields[0]):]))
	case "CAPTURE":
		s.captureCommand(strings.TrimSpace(cmd[len(fields[0]):]))
	case "EXIT", "QUIT":
		return true
	case "CLEAR", "CLS":
		if s.opts.TTY {
			fmt.Fprint(out, "\x1b[H\x1b[2J")
		}
	case "CONSISTENCY":
		if len(args) == 0 {
			fmt.Fprintf(out, "Current consistency level is %s.\n", consistencyName(s.consistency))
			break
		}
		c, err := parseConsistency(args[0])
		if err != nil {
			s.error(fmt.Sprintf("Improper CONSISTENCY command (problem at %s).", quoteRepr(args[0])))
			break
		}
		s.consistency = c
		fmt.Fprintf(out, "Consistency level set to %s.\n", consistencyName(c))
	case "SERIAL":
		if len(args) == 0 || strings.ToUpper(args[0]) != "CONSISTENCY" {
			s.error("Improper SERIAL command.")
			break
		}
		if len(args) == 1 {
			fmt.Fprintf(out, "Current serial consistency level is %s.\n", s.serial)
			break
		}
		switch strings.ToUpper(args[1]) {
		case "SERIAL":
			s.serial = gocql.Serial
		case "LOCAL_SERIAL":
			s.serial = gocql.LocalSerial
		default:
			s.error(fmt.Sprintf("Improper SERIAL command (problem at %s).", quoteRepr(args[1])))
			return false
		}
		fmt.Fprintf(out, "Serial consistency level set to %s.\n", s.serial)
	case "EXPAND":
		s.expand = s.switchCommand("Expanded output", "EXPAND", s.expand, args)
	case "TRACING":
		s.tracing = s.switchCommand("Tracing", "TRACING", s.tracing, args)
	case "PAGING":
		if len(args) == 1 {
			if n, err := strconv.Atoi(args[0]); err == nil && n > 0 {
				s.paging, s.pageSize = true, n
				fmt.Fprintf(out, "Page size: %d\n", n)
				break
			}
		}
		s.paging = s.switchCommand("Query paging", "PAGING", s.paging, args)
		if s.paging {
			fmt.Fprintf(out, "Page size: %d\n", s.pageSize)
		} else {
			s.pageSize = 100
		}
	case "SHOW":
		switch {
		case len(args) == 1 && strings.ToUpper(args[0]) == "VERSION":
			s.showVersion()
		case len(args) == 2 && strings.ToUpper(args[0]) == "SESSION":
			id, err := gocql.ParseUUID(args[1])
			if err != nil {
				s.error("Improper SHOW command.")
				break
			}
			s.showSession(id, true)
		case len(args) == 1 && strings.ToUpper(args[0]) == "HOST":
			var cluster string
			_ = s.session.Query("SELECT cluster_name FROM system.local WHERE key = 'local'").Scan(&cluster)
			fmt.Fprintf(out, "Connected to %s at %s:%d\n", cluster, s.opts.Host, s.opts.Port)
		default:
			s.error("Improper SHOW command.")
		}
	case "HELP", "?":
		s.help(args)
	case "UNICODE":
		// A help topic only, as in cqlsh.
		s.error("Improper UNICODE command.")
	case "LOGIN":
		s.login(args)
	}
	return false
}

// switchCommand runs EXPAND-like ON/OFF commands with cqlsh's messages.
func (s *Shell) switchCommand(what, cmd string, on bool, args []string) bool {
	out := s.opts.Out
	if len(args) == 0 {
		if on {
			fmt.Fprintf(out, "%s is currently enabled. Use %s OFF to disable\n", what, cmd)
		} else {
			fmt.Fprintf(out, "%s is currently disabled. Use %s ON to enable.\n", what, cmd)
		}
		return on
	}
	switch strings.ToUpper(args[0]) {
	case "ON":
		if on {
			s.error(fmt.Sprintf("%s is already enabled. Use %s OFF to disable.", what, cmd))
			return true
		}
		fmt.Fprintf(out, "Now %s is enabled\n", what)
		return true
	case "OFF":
		if !on {
			s.error(fmt.Sprintf("%s is not enabled.", what))
			return false
		}
		fmt.Fprintf(out, "Disabled %s.\n", what)
		return false
	}
	s.error(fmt.Sprintf("Improper %s command.", cmd))
	return on
}

func parseConsistency(s string) (gocql.Consistency, error) {
	switch strings.ToUpper(s) {
	case "SERIAL":
		return serialRead, nil
	case "LOCAL_SERIAL":
		return localSerialRead, nil
	}
	var c gocql.Consistency
	err := c.UnmarshalText([]byte(strings.ToUpper(s)))
	return c, err
}

// serialRead and localSerialRead are SERIAL and LOCAL_SERIAL as the
// level of a statement (SELECTs read at them), which gocql's Consistency
// does not name.
const (
	serialRead      gocql.Consistency = 0x08
	localSerialRead gocql.Consistency = 0x09
)

// consistencyName names a level as cqlsh does.
func consistencyName(c gocql.Consistency) string {
	switch c {
	case serialRead:
		return "SERIAL"
	case localSerialRead:
		return "LOCAL_SERIAL"
	}
	return c.String()
}

// quoteRepr quotes as Python's repr of a string does.
func quoteRepr(s string) string { return "'" + strings.ReplaceAll(s, "'", `\'`) + "'" }

// error prints a failure: on stderr, prefixed by the input's name and
// line when not interactive.
func (s *Shell) error(msg string) {
	s.failed = true
	if !s.opts.TTY {
		source, line := s.inputName, s.line
		if source == "" {
			source, line = "<stdin>", 1
		}
		msg = fmt.Sprintf("%s:%d:%s", source, line, msg)
	}
	if s.opts.Color {
		msg = colorRed + msg + colorReset
	}
	fmt.Fprintln(s.opts.Err, msg)
}

// queryError prints a statement's failure as cqlsh (through the Python
// driver) words it.
func (s *Shell) queryError(err error) {
	var exists *gocql.RequestErrAlreadyExists
	var re gocql.RequestError
	switch {
	case errors.As(err, &exists):
		if exists.Table == "" {
			s.error(fmt.Sprintf("AlreadyExists: Keyspace '%s' already exists", exists.Keyspace))
		} else {
			s.error(fmt.Sprintf("AlreadyExists: Table '%s.%s' already exists", exists.Keyspace, exists.Table))
		}
	case errors.As(err, &re):
		switch re.Code() {
		case gocql.ErrCodeSyntax:
			s.error("SyntaxException: " + re.Message())
		case gocql.ErrCodeConfig:
			s.error("ConfigurationException: " + re.Message())
		default:
			class, what := errorClass(re.Code())
			s.error(fmt.Sprintf("%s: Error from server: code=%04x [%s] message=%q", class, re.Code(), what, re.Message()))
		}
	default:
		s.error(err.Error())
	}
}

// errorClasses name server errors as the Python driver does: its class
// and the description it puts in brackets.
var errorClasses = map[int][2]string{
	gocql.ErrCodeInvalid:      {"InvalidRequest", "Invalid query"},
	gocql.ErrCodeUnauthorized: {"Unauthorized", "Unauthorized"},
	gocql.ErrCodeReadTimeout:  {"ReadTimeout", "Coordinator node timed out waiting for replica nodes' responses"},
	gocql.ErrCodeWriteTimeout: {"WriteTimeout", "Coordinator node timed out waiting for replica nodes' responses"},
	gocql.ErrCodeUnavailable:  {"Unavailable", "Unavailable exception"},
	gocql.ErrCodeReadFailure:  {"ReadFailure", "Replica(s) failed to execute read"},
	gocql.ErrCodeWriteFailure: {"WriteFailure", "Replica(s) failed to execute write"},
	gocql.ErrCodeOverloaded:   {"OverloadedErrorMessage", "Coordinator node overloaded"},
	gocql.ErrCodeTruncate:     {"TruncateError", "Error during truncate"},
}

func errorClass(code int) (class, description string) {
	if c, ok := errorClasses[code]; ok {
		return c[0], c[1]
	}
	return "ServerError", "Server error"
}

// query runs a CQL statement and prints its rows, page by page.
func (s *Shell) query(stmt string) {
	q := s.session.Query(stmt).Consistency(s.consistency).SerialConsistency(s.serial)
	size := s.pageSize
	if !s.paging {
		size = 0
	}
	q.PageSize(size)
	var traced *traceIDs
	if s.tracing && !s.readsTraces(stmt) {
		traced = &traceIDs{}
		q.Trace(traced)
		defer s.printTraces(traced)
	}
	iter := q.Iter()
	cols := iter.Columns()
	isSelect := strings.EqualFold(firstWord(stmt), "select")
	if len(cols) == 0 {
		warnings := iter.Warnings() // Close lets go of them
		if err := iter.Close(); err != nil {
			s.queryError(err)
			return
		}
		s.printWarnings(warnings)
		return
	}
	var page [][]string
	total := 0
	first := true
	for {
		row, ok := s.scanRow(iter, cols)
		if !ok {
			break
		}
		page = append(page, row)
		total++
		if size > 0 && iter.WillSwitchPage() {
			// A page ends and another follows: print it, and when
			// interactive wait for the reader.
			s.printPage(cols, page, first, total-len(page))
			first, page = false, page[:0]
			if s.opts.TTY && s.more != nil && !s.more() {
				break
			}
		}
	}
	warnings := iter.Warnings() // the last page's, as cqlsh prints them
	if err := iter.Close(); err != nil {
		s.queryError(err)
		return
	}
	if first || len(page) > 0 {
		s.printPage(cols, page, first, total-len(page))
	}
	if !s.opts.TTY {
		fmt.Fprintln(s.results())
	}
	if isSelect {
		fmt.Fprintf(s.results(), "(%d rows)\n", total)
	}
	s.printWarnings(warnings)
}

// printWarnings prints the server's warnings after a statement's result,
// as cqlsh does.
func (s *Shell) printWarnings(warnings []string) {
	if len(warnings) == 0 {
		return
	}
	w := s.results()
	fmt.Fprint(w, "\nWarnings :\n")
	for _, warning := range warnings {
		fmt.Fprintf(w, "%s\n\n", warning)
	}
}

// scanRow reads one row's values as cqlsh prints them.
func (s *Shell) scanRow(iter *gocql.Iter, cols []gocql.ColumnInfo) ([]string, bool) {
	vals, ok := scanRaw(iter, cols)
	if !ok {
		return nil, false
	}
	out := make([]string, len(cols))
	for i, c := range cols {
		switch {
		case vals[i].null && s.opts.Color:
			out[i] = colorRed + "null" + colorReset
		case vals[i].null:
			out[i] = "null"
		case s.opts.Color:
			out[i] = cqlType(c.TypeInfo).DisplayPainted(vals[i].data, paintValue)
		default:
			out[i] = cqlType(c.TypeInfo).Display(vals[i].data)
		}
	}
	return out, true
}

// scanRaw reads one row's values as the server sent them, one per column.
func scanRaw(iter *gocql.Iter, cols []gocql.ColumnInfo) ([]*rawValue, bool) {
	var dests []any
	var spans []int // values per column: a tuple spreads over its elements
	for _, c := range cols {
		n := 1
		if t, ok := c.TypeInfo.(gocql.TupleTypeInfo); ok {
			n = len(t.Elems)
		}
		spans = append(spans, n)
		for i := 0; i < n; i++ {
			dests = append(dests, &rawValue{})
		}
	}
	if !iter.Scan(dests...) {
		return nil, false
	}
	out := make([]*rawValue, len(cols))
	at := 0
	for i, c := range cols {
		if _, ok := c.TypeInfo.(gocql.TupleTypeInfo); ok {
			// gocql hands a tuple over element by element; a null tuple
			// comes as elements that are all null.
			fields := make([][]byte, spans[i])
			null := true
			for j := range fields {
				if v := dests[at+j].(*rawValue); !v.null {
					fields[j], null = v.data, false
				}
			}
			out[i] = &rawValue{typ: c.TypeInfo, data: cqltype.EncodeTuple(fields), null: null}
		} else {
			out[i] = dests[at].(*rawValue)
		}
		at += spans[i]
	}
	return out, true
}

// printPage prints one page of rows as a table (or, with EXPAND ON, row
// by row). The first page has the blank line, header and rule; later
// pages get them again only when interactive.
func (s *Shell) printPage(cols []gocql.ColumnInfo, rows [][]string, first bool, before int) {
	out := s.results()
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = displayName(c.Name)
		if s.opts.Color {
			names[i] = s.columnColor(c) + names[i] + colorReset
		}
	}
	if first {
		fmt.Fprintln(out)
	}
	if s.expand && len(rows) > 0 {
		nameWidth, valueWidth := 0, 0
		for _, n := range names {
			nameWidth = max(nameWidth, width(n))
		}
		for _, r := range rows {
			for _, v := range r {
				valueWidth = max(valueWidth, width(v))
			}
		}
		for i, r := range rows {
			fmt.Fprintf(out, "@ Row %d\n", before+i+1)
			fmt.Fprintf(out, "-%s-+-%s-\n", strings.Repeat("-", nameWidth), strings.Repeat("-", valueWidth))
			for j, v := range r {
				fmt.Fprintf(out, " %s | %s\n", pad(names[j], nameWidth, false), v)
			}
			fmt.Fprintln(out)
		}
		return
	}
	widths := make([]int, len(cols))
	for i, n := range names {
		widths[i] = width(n)
	}
	for _, r := range rows {
		for i, v := range r {
			widths[i] = max(widths[i], width(v))
		}
	}
	if first || s.opts.TTY {
		cells := make([]string, len(names))
		rule := make([]string, len(names))
		for i, n := range names {
			cells[i] = pad(n, widths[i], false)
			rule[i] = strings.Repeat("-", widths[i])
		}
		fmt.Fprintln(out, strings.TrimRight(" "+strings.Join(cells, " | "), " "))
		fmt.Fprintln(out, "-"+strings.Join(rule, "-+-")+"-")
	}
	for _, r := range rows {
		cells := make([]string, len(r))
		for i, v := range r {
			cells[i] = pad(v, widths[i], true)
		}
		fmt.Fprintln(out, " "+strings.Join(cells, " | "))
	}
	if s.opts.TTY || len(rows) == 0 {
		fmt.Fprintln(out)
	}
}

// displayName is a column name as cqlsh shows it (escaped like text).
func displayName(n string) string { return cqltype.TextType.Display([]byte(n)) }

// width is the display width of s: characters, East Asian wide ones
// counting two, colour escapes none.
func width(s string) int {
	w := 0
	escape := false
	for _, r := range s {
		switch {
		case escape:
			escape = r != 'm'
		case r == 0x1b:
			escape = true
		case r >= 0x1100 && (r <= 0x115F || r == 0x2329 || r == 0x232A ||
			r >= 0x2E80 && r <= 0xA4CF && r != 0x303F || r >= 0xAC00 && r <= 0xD7A3 ||
			r >= 0xF900 && r <= 0xFAFF || r >= 0xFE30 && r <= 0xFE6F || r >= 0xFF00 && r <= 0xFF60 ||
			r >= 0xFFE0 && r <= 0xFFE6 || r >= 0x20000 && r <= 0x2FFFD || r >= 0x30000 && r <= 0x3FFFD):
			w += 2
		case r >= 0x300 && r <= 0x36F: // combining marks
		default:
			w++
		}
	}
	return w
}

func pad(s string, w int, right bool) string {
	n := w - width(s)
	if n <= 0 {
		return s
	}
	if right {
		return strings.Repeat(" ", n) + s
	}
	return s + strings.Repeat(" ", n)
}

// columnize lays names out in columns as Python's cmd.Cmd.columnize does:
// the fewest rows whose columns (two spaces apart) fit in width.
func columnize(items []string, lineWidth int) string {
	if len(items) == 0 {
		return "<empty>\n"
	}
	if len(items) == 1 {
		return items[0] + "\n"
	}
	for nrows := 1; nrows < len(items); nrows++ {
		ncols := (len(items) + nrows - 1) / nrows
		widths := make([]int, ncols)
		total := -2
		for c := 0; c < ncols; c++ {
			for r := 0; r < nrows; r++ {
				if i := c*nrows + r; i < len(items) {
					widths[c] = max(widths[c], utf8.RuneCountInString(items[i]))
				}
			}
			total += widths[c] + 2
		}
		if total > lineWidth {
			continue
		}
		var b strings.Builder
		for r := 0; r < nrows; r++ {
			var cells []string
			for c := 0; c < ncols; c++ {
				if i := c*nrows + r; i < len(items) {
					cells = append(cells, pad(items[i], widths[c], false))
				}
			}
			b.WriteString(strings.Join(cells, "  ") + "\n")
		}
		return b.String()
	}
	return strings.Join(items, "\n") + "\n"
}

// describe runs DESCRIBE on the server and prints as cqlsh does.
func (s *Shell) describe(stmt string) {
	iter := s.session.Query(stmt).Consistency(gocql.LocalOne).PageSize(0).Iter()
	rows, err := iter.SliceMap()
	if err != nil {
		var re gocql.RequestError
		if errors.As(err, &re) {
			s.error(re.Message())
		} else {
			s.error(err.Error())
		}
		return
	}
	out := s.results()
	fields := strings.Fields(strings.ToUpper(stmt))
	kind := ""
	if len(fields) > 1 {
		kind = fields[1]
	}
	switch kind {
	case "CLUSTER":
		if len(rows) == 0 {
			return
		}
		r := rows[0]
		fmt.Fprintf(out, "\nCluster: %v\nPartitioner: %v\nSnitch: %v\n\n", r["cluster"], r["partitioner"], r["snitch"])
		if own, ok := r["range_ownership"].(map[string][]string); ok {
			fmt.Fprintln(out, "Range ownership:")
			tokens := make([]string, 0, len(own))
			for t := range own {
				tokens = append(tokens, t)
			}
			slices.Sort(tokens)
			for _, t := range tokens {
				fmt.Fprintf(out, " %39s  [%s]\n", t, strings.Join(own[t], ", "))
			}
			fmt.Fprintln(out)
		}
	case "KEYSPACES":
		var names []string
		for _, r := range rows {
			names = append(names, fmt.Sprint(r["name"]))
		}
		fmt.Fprintln(out)
		fmt.Fprint(out, columnize(names, 80))
		fmt.Fprintln(out)
	case "TABLES", "COLUMNFAMILIES", "TYPES", "FUNCTIONS", "AGGREGATES":
		if len(rows) == 0 {
			return
		}
		for i := 0; i < len(rows); {
			ks := fmt.Sprint(rows[i]["keyspace_name"])
			var names []string
			j := i
			for ; j < len(rows) && fmt.Sprint(rows[j]["keyspace_name"]) == ks; j++ {
				names = append(names, fmt.Sprint(rows[j]["name"]))
			}
			fmt.Fprintln(out)
			if s.keyspace == "" {
				header := "Keyspace " + ks
				fmt.Fprintf(out, "%s\n%s\n", header, strings.Repeat("-", len(header)))
			}
			fmt.Fprint(out, columnize(names, 80))
			i = j
		}
		fmt.Fprintln(out)
	default:
		for _, r := range rows {
			fmt.Fprintf(out, "\n%v\n", r["create_statement"])
		}
	}
}

// unquoteFile reads a shell command's 'file' argument.
func unquoteFile(arg string) string {
	if len(arg) >= 2 && arg[0] == '\'' && arg[len(arg)-1] == '\'' {
		arg = strings.ReplaceAll(arg[1:len(arg)-1], "''", "'")
	}
	if strings.HasPrefix(arg, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			arg = home + arg[1:]
		}
	}
	return arg
}

// source runs the statements of a file, as SOURCE 'file' does; errors
// name the file and line, and the shell goes back to its own input.
func (s *Shell) source(arg string) {
	name := unquoteFile(arg)
	f, err := os.Open(name)
	if err != nil {
		s.error(fmt.Sprintf("Could not open %s: %v", quoteRepr(name), err))
		return
	}
	defer f.Close()
	input, line, tty := s.inputName, s.line, s.opts.TTY
	s.opts.TTY = false
	s.RunInput(f, name)
	s.inputName, s.line, s.opts.TTY = input, line, tty
}

// captureCommand runs CAPTURE: results go to a file (appended to) until
// CAPTURE OFF.
func (s *Shell) captureCommand(arg string) {
	switch {
	case arg == "":
		if s.capture != nil {
			fmt.Fprintf(s.opts.Out, "Currently capturing query output to %s.\n", quoteRepr(s.captureName))
		} else {
			fmt.Fprintln(s.opts.Out, "Currently not capturing query output.")
		}
	case strings.EqualFold(arg, "OFF"):
		if s.capture == nil {
			s.error("Not currently capturing output.")
			return
		}
		s.capture.Close()
		s.capture, s.captureName = nil, ""
	default:
		name := unquoteFile(arg)
		f, err := os.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			s.error(fmt.Sprintf("Unable to open %s for writing: %v", quoteRepr(name), err))
			return
		}
		if s.capture != nil {
			s.capture.Close()
		}
		s.capture, s.captureName = f, name
		fmt.Fprintf(s.opts.Out, "Now capturing query output to %s.\n", quoteRepr(name))
	}
}
