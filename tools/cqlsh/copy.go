package cqlsh

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gocql/gocql"
	"github.com/sibyldb/sibyl/cqltype"
)

// COPY moves a table's rows to and from CSV files as cqlsh 4.1's COPY
// does (copyutil.py): the same options, the same CSV dialect, the same
// value forms (cqlsh's display form, timestamps to the millisecond,
// booleans in BOOLSTYLE), so that each shell reads the other's files. One
// deliberate difference: floats and doubles are written in the shortest
// form that reads back exactly, unless FLOATPRECISION or DOUBLEPRECISION
// asks for cqlsh's rounding (its defaults, 5 and 12 significant digits,
// lose data); and COPY FROM reads back the backslash escapes cqlsh writes
// in text, which cqlsh itself leaves in. COPY FROM
// writes each row with an INSERT of literals, rows of one partition
// batched, from NUMPROCESSES workers at up to INGESTRATE rows a second.

var copyPattern = regexp.MustCompile(`(?is)^COPY\s+("[^"]+"|[\w]+)(?:\.("[^"]+"|[\w]+))?\s*(?:\(([^)]*)\))?\s+(TO|FROM)\s+('(?:[^']|'')*'|STDOUT|STDIN)\s*(?:WITH\s+(.*))?$`)

// copyOptions are COPY's options, with cqlsh's defaults.
type copyOptions struct {
	dialect        csvDialect
	header         bool
	null           string
	dateTimeFormat string
	boolStyle      [2]string
	numProcesses   int
	maxAttempts    int
	// COPY TO.
	pageSize        int
	floatPrecision  int
	doublePrecision int
	// precisionGiven says FLOATPRECISION or DOUBLEPRECISION was given:
	// without either, floats and doubles are written exactly (cqlsh's
	// defaults, 5 and 12 digits, lose some).
	precisionGiven bool
	beginToken     string
	endToken       string
	maxOutputSize  int
	// COPY FROM.
	chunkSize       int
	ingestRate      int
	maxBatchSize    int
	maxRows         int
	skipRows        int
	skipCols        []string
	maxParseErrors  int
	maxInsertErrors int
	errFile         string
	ttl             int
}

// copyOptionNames are the options cqlsh knows for each direction; the ones
// that tune its own processes (report frequency, timeouts, in-flight
// limits) are taken and have no effect here.
var copyOptionNames = map[string]map[string]bool{
	"TO": setOf("delimiter", "quote", "escape", "header", "null", "datetimeformat", "maxattempts", "reportfrequency",
		"decimalsep", "thousandssep", "boolstyle", "numprocesses", "configfile", "ratefile", "encoding", "pagesize",
		"pagetimeout", "begintoken", "endtoken", "maxrequests", "maxoutputsize", "floatprecision", "doubleprecision"),
	"FROM": setOf("delimiter", "quote", "escape", "header", "null", "datetimeformat", "maxattempts", "reportfrequency",
		"decimalsep", "thousandssep", "boolstyle", "numprocesses", "configfile", "ratefile", "chunksize", "ingestrate",
		"maxbatchsize", "minbatchsize", "maxrows", "skiprows", "skipcols", "maxparseerrors", "maxinserterrors",
		"errfile", "preparedstatements", "ttl"),
}

func setOf(names ...string) map[string]bool {
	out := map[string]bool{}
	for _, n := range names {
		out[n] = true
	}
	return out
}

func (s *Shell) copy(stmt string) {
	m := copyPattern.FindStringSubmatch(strings.TrimSpace(stmt))
	if m == nil {
		s.error("Improper COPY command.")
		return
	}
	ks, table := unquoteName(m[1]), unquoteName(m[2])
	if m[2] == "" {
		ks, table = s.keyspace, unquoteName(m[1])
		if ks == "" {
			s.error("Not in any keyspace.")
			return
		}
	}
	var cols []string
	for _, c := range strings.Split(m[3], ",") {
		if c = strings.TrimSpace(c); c != "" {
			cols = append(cols, unquoteName(c))
		}
	}
	direction := strings.ToUpper(m[4])
	opts, err := parseCopyOptions(m[6], direction, ks, table)
	if err != nil {
		s.error(err.Error())
		return
	}
	file := m[5]
	if strings.HasPrefix(file, "'") {
		file = strings.ReplaceAll(file[1:len(file)-1], "''", "'")
	}
	// gocql refreshes its schema a moment after a change is announced:
	// a table made by the statement before is waited for, as the real
	// cqlsh waits for schema agreement after its DDL.
	var tm *gocql.TableMetadata
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		meta, err := s.session.KeyspaceMetadata(ks)
		if err == nil {
			tm = meta.Tables[table]
		}
		if tm != nil || time.Now().After(deadline) {
			if err != nil {
				s.error(fmt.Sprintf("Keyspace '%s' not found.", ks))
				return
			}
			break
		}
	}
	if tm == nil {
		s.error(fmt.Sprintf("'%s' not found in keyspace '%s'", table, ks))
		return
	}
	if len(cols) == 0 {
		cols = tableOrder(tm)
	}
	if direction == "TO" {
		err = s.copyTo(ks, table, tm, cols, file, opts)
	} else {
		err = s.copyFrom(ks, table, tm, cols, file, opts)
	}
	if err != nil {
		s.error(err.Error())
	}
}

func unquoteName(n string) string {
	if strings.HasPrefix(n, `"`) {
		return strings.ReplaceAll(n[1:len(n)-1], `""`, `"`)
	}
	return strings.ToLower(n)
}

var optionSeparator = regexp.MustCompile(`(?i)\s+AND\s+`)

func parseCopyOptions(text, direction, ks, table string) (copyOptions, error) {
	opts := copyOptions{
		dialect:        csvDialect{delimiter: ',', quote: '"', escape: '\\'},
		dateTimeFormat: "%Y-%m-%d %H:%M:%S.%f%z",
		boolStyle:      [2]string{"True", "False"},
		numProcesses:   max(1, min(16, runtime.NumCPU()-1)),
		maxAttempts:    5, pageSize: 1000, floatPrecision: 5, doublePrecision: 12, maxOutputSize: -1,
		chunkSize: 5000, ingestRate: 100000, maxBatchSize: 20, maxRows: -1, maxParseErrors: -1,
		maxInsertErrors: 1000, errFile: fmt.Sprintf("import_%s_%s.err", ks, table), ttl: -1,
	}
	given := map[string]string{}
	var unknown []string
	if t := strings.TrimSpace(text); t != "" {
		for _, part := range optionSeparator.Split(t, -1) {
			k, v, ok := strings.Cut(part, "=")
			if !ok {
				return opts, fmt.Errorf("Improper COPY command.")
			}
			k = strings.ToLower(strings.TrimSpace(k))
			v = strings.TrimSpace(v)
			if strings.HasPrefix(v, "'") && strings.HasSuffix(v, "'") && len(v) >= 2 {
				v = strings.ReplaceAll(v[1:len(v)-1], "''", "'")
			}
			if !copyOptionNames[direction][k] {
				unknown = append(unknown, k)
				continue
			}
			given[k] = v
		}
	}
	if len(unknown) > 0 {
		return opts, fmt.Errorf("Unrecognized COPY %s options: %s", direction, strings.Join(unknown, ", "))
	}
	char := func(name string, dst *rune) error {
		v, ok := given[name]
		if !ok {
			return nil
		}
		r := []rune(v)
		if len(r) != 1 {
			return fmt.Errorf("%s must be a 1-character string", strings.ToUpper(name))
		}
		*dst = r[0]
		return nil
	}
	integer := func(name string, dst *int) error {
		v, ok := given[name]
		if !ok {
			return nil
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("invalid literal for int() with base 10: %s", quoteRepr(v))
		}
		*dst = n
		return nil
	}
	for _, err := range []error{
		char("delimiter", &opts.dialect.delimiter), char("quote", &opts.dialect.quote), char("escape", &opts.dialect.escape),
		integer("maxattempts", &opts.maxAttempts), integer("numprocesses", &opts.numProcesses),
		integer("pagesize", &opts.pageSize), integer("floatprecision", &opts.floatPrecision),
		integer("doubleprecision", &opts.doublePrecision), integer("maxoutputsize", &opts.maxOutputSize),
		integer("chunksize", &opts.chunkSize), integer("ingestrate", &opts.ingestRate),
		integer("maxbatchsize", &opts.maxBatchSize), integer("maxrows", &opts.maxRows),
		integer("skiprows", &opts.skipRows), integer("maxparseerrors", &opts.maxParseErrors),
		integer("maxinserterrors", &opts.maxInsertErrors), integer("ttl", &opts.ttl),
	} {
		if err != nil {
			return opts, err
		}
	}
	if opts.dialect.quote == opts.dialect.escape {
		opts.dialect.escape = 0 // quotes are doubled, as Python's doublequote
	}
	_, floatGiven := given["floatprecision"]
	_, doubleGiven := given["doubleprecision"]
	opts.precisionGiven = floatGiven || doubleGiven
	opts.header = strings.EqualFold(given["header"], "true")
	opts.null = given["null"]
	if v, ok := given["datetimeformat"]; ok {
		opts.dateTimeFormat = v
	}
	if v, ok := given["boolstyle"]; ok {
		parts := strings.Split(v, ",")
		if len(parts) != 2 || strings.TrimSpace(parts[0]) == "" || strings.TrimSpace(parts[1]) == "" ||
			strings.TrimSpace(parts[0]) == strings.TrimSpace(parts[1]) {
			return opts, fmt.Errorf("Invalid boolean styles %s", quoteRepr(v))
		}
		opts.boolStyle = [2]string{strings.TrimSpace(parts[0]), strings.TrimSpace(parts[1])}
	}
	for _, sep := range []struct{ name, def string }{{"decimalsep", "."}, {"thousandssep", ""}} {
		if v, ok := given[sep.name]; ok && v != sep.def {
			return opts, fmt.Errorf("COPY option %s is not supported by this shell", strings.ToUpper(sep.name))
		}
	}
	opts.beginToken, opts.endToken = given["begintoken"], given["endtoken"]
	for _, c := range strings.Split(given["skipcols"], ",") {
		if c = strings.TrimSpace(c); c != "" {
			opts.skipCols = append(opts.skipCols, unquoteName(c))
		}
	}
	if v, ok := given["errfile"]; ok {
		opts.errFile = v
	}
	if opts.numProcesses < 1 {
		opts.numProcesses = 1
	}
	return opts, nil
}

// describeInterval is cqlsh's (under Python 3, whose division makes every
// unit of a copy of a second or more print, as "0 day").
func describeInterval(seconds float64) string {
	var desc []string
	for _, u := range []struct {
		length float64
		name   string
	}{{86400, "day"}, {3600, "hour"}, {60, "minute"}} {
		num := float64(int64(seconds)) / u.length
		if num > 0 {
			d := fmt.Sprintf("%d %s", int64(num), u.name)
			if num > 1 {
				d += "s"
			}
			desc = append(desc, d)
		}
		seconds = pyMod(seconds, u.length)
	}
	words := fmt.Sprintf("%.03f seconds", seconds)
	switch {
	case len(desc) > 1:
		words = strings.Join(desc, ", ") + ", and " + words
	case len(desc) == 1:
		words = desc[0] + " and " + words
	}
	return words
}

func pyMod(a, b float64) float64 {
	m := a - b*float64(int64(a/b))
	if m < 0 {
		m += b
	}
	return m
}

func (s *Shell) copyStarted(ks, table string, processes int, cols []string) {
	fmt.Fprintf(s.opts.Out, "Using %d child processes\n\nStarting copy of %s.%s with columns [%s].\n", processes, ks, table, strings.Join(cols, ", "))
}

func (s *Shell) copyProgress(rows int, start time.Time) {
	r := rate(rows, time.Since(start).Seconds())
	fmt.Fprintf(s.opts.Out, "Processed: %d rows; Rate: %7.0f rows/s; Avg. rate: %7.0f rows/s\n", rows, r, r)
}

func rate(n int, secs float64) float64 {
	if secs <= 0 {
		return 0
	}
	return float64(n) / secs
}

// exportValue is a value as COPY TO writes it: cqlsh's display form, with
// COPY's precision, timestamps and booleans.
func exportValue(t *cqltype.Type, v *rawValue, opts *copyOptions) string {
	if v.null || len(v.data) == 0 && t.Kind != cqltype.Text && t.Kind != cqltype.Ascii {
		return opts.null
	}
	prec := opts.floatPrecision
	if t.Kind == cqltype.Double {
		prec = opts.doublePrecision
	}
	return t.DisplayWith(v.data, cqltype.DisplayStyle{
		Precision: prec,
		Exact:     !opts.precisionGiven,
		Timestamp: func(ms int64) string { return formatCopyTimestamp(ms, opts.dateTimeFormat) },
		True:      opts.boolStyle[0], False: opts.boolStyle[1],
		FieldNull: &opts.null,
	})
}

func (s *Shell) copyTo(ks, table string, tm *gocql.TableMetadata, cols []string, file string, opts copyOptions) error {
	if err := checkColumns(tm, cols); err != nil {
		return err
	}
	where := ""
	if opts.beginToken != "" || opts.endToken != "" {
		pk := make([]string, len(tm.PartitionKey))
		for i, c := range tm.PartitionKey {
			pk[i] = quoteName(c.Name)
		}
		var conds []string
		if opts.beginToken != "" {
			conds = append(conds, fmt.Sprintf("token(%s) > %s", strings.Join(pk, ", "), opts.beginToken))
		}
		if opts.endToken != "" {
			conds = append(conds, fmt.Sprintf("token(%s) <= %s", strings.Join(pk, ", "), opts.endToken))
		}
		where = " WHERE " + strings.Join(conds, " AND ")
	}
	out := &copyOutput{name: file, stdout: s.opts.Out}
	if err := out.open(); err != nil {
		return err
	}
	defer out.close()
	start := time.Now()
	s.copyStarted(ks, table, 1, cols)
	iter := s.session.Query(fmt.Sprintf("SELECT %s FROM %s.%s%s", strings.Join(quoteNames(cols), ", "), quoteName(ks), quoteName(table), where)).
		Consistency(s.consistency).PageSize(opts.pageSize).Iter()
	columns := iter.Columns()
	types := make([]*cqltype.Type, len(columns))
	for i, c := range columns {
		types[i] = cqlType(c.TypeInfo)
	}
	cw := &csvWriter{w: out, d: opts.dialect}
	if opts.header {
		if err := cw.write(cols); err != nil {
			return err
		}
	}
	rows, inFile := 0, 0
	for {
		vals, ok := scanRaw(iter, columns)
		if !ok {
			break
		}
		if opts.maxOutputSize > 0 && inFile == opts.maxOutputSize {
			if err := out.next(); err != nil {
				return err
			}
			cw.w, inFile = out, 0
			if opts.header {
				if err := cw.write(cols); err != nil {
					return err
				}
			}
		}
		record := make([]string, len(columns))
		for i := range columns {
			record[i] = exportValue(types[i], vals[i], &opts)
		}
		if err := cw.write(record); err != nil {
			return err
		}
		rows++
		inFile++
	}
	if err := iter.Close(); err != nil {
		return err
	}
	if err := out.close(); err != nil {
		return err
	}
	s.copyProgress(rows, start)
	fmt.Fprintf(s.opts.Out, "%d rows exported to %d files in %s.\n", rows, out.files, describeInterval(time.Since(start).Seconds()))
	return nil
}

// copyOutput is COPY TO's destination: standard output, or the file and,
// past MAXOUTPUTSIZE rows each, more files named after it with .1, .2...
type copyOutput struct {
	name   string
	stdout io.Writer
	f      *os.File
	w      *bufio.Writer
	files  int
}

func (o *copyOutput) open() error {
	o.files++
	if strings.EqualFold(o.name, "STDOUT") {
		o.w = bufio.NewWriter(o.stdout)
		return nil
	}
	name := o.name
	if o.files > 1 {
		name = fmt.Sprintf("%s.%d", o.name, o.files-1)
	}
	f, err := os.Create(name)
	if err != nil {
		return fmt.Errorf("Can't open %s for writing: %v", quoteRepr(name), err)
	}
	o.f, o.w = f, bufio.NewWriter(f)
	return nil
}

func (o *copyOutput) next() error {
	if err := o.close(); err != nil {
		return err
	}
	return o.open()
}

func (o *copyOutput) Write(p []byte) (int, error) { return o.w.Write(p) }

func (o *copyOutput) close() error {
	if o.w == nil {
		return nil
	}
	err := o.w.Flush()
	o.w = nil
	if o.f != nil {
		err = errors.Join(err, o.f.Close())
		o.f = nil
	}
	return err
}

// importRow is one CSV record on its way in: its line for messages, its
// fields as read (written to ERRFILE if it fails), and its INSERT.
type importRow struct {
	record []string
	key    string // the partition key's literals, which batch rows together
	values []string
}

func (s *Shell) copyFrom(ks, table string, tm *gocql.TableMetadata, cols []string, file string, opts copyOptions) error {
	var valid []string
	keep := make([]bool, len(cols))
	for i, c := range cols {
		if !slices.Contains(opts.skipCols, c) {
			valid = append(valid, c)
			keep[i] = true
		}
	}
	if len(valid) == 0 {
		return fmt.Errorf("No valid column specified")
	}
	if err := checkColumns(tm, valid); err != nil {
		return err
	}
	for _, c := range append(append([]*gocql.ColumnMetadata(nil), tm.PartitionKey...), tm.ClusteringColumns...) {
		if !slices.Contains(valid, c.Name) {
			return fmt.Errorf("Primary key column '%s' missing or skipped", c.Name)
		}
	}
	// The table metadata names user types without their fields: a
	// result's metadata describes them whole.
	iter := s.session.Query(fmt.Sprintf("SELECT %s FROM %s.%s LIMIT 1", strings.Join(quoteNames(valid), ", "), quoteName(ks), quoteName(table))).
		Consistency(s.consistency).Iter()
	described := iter.Columns()
	if err := iter.Close(); err != nil {
		return err
	}
	types := make([]*cqltype.Type, len(cols))
	keyColumns := map[int]keyColumn{} // the primary key's, which may not be null
	for i, c := range cols {
		if !keep[i] {
			continue // a column of the file that is not read
		}
		for _, d := range described {
			if d.Name == c {
				types[i] = cqlType(d.TypeInfo)
			}
		}
		if k := tm.Columns[c].Kind; k == gocql.ColumnPartitionKey || k == gocql.ColumnClusteringKey {
			keyColumns[i] = keyColumn{name: c, partition: k == gocql.ColumnPartitionKey}
		}
	}
	var r io.Reader = os.Stdin
	if !strings.EqualFold(file, "STDIN") {
		f, err := os.Open(file)
		if err != nil {
			return fmt.Errorf("Can't open %s for reading: %v", quoteRepr(file), err)
		}
		defer f.Close()
		r = f
	}
	s.copyStarted(ks, table, opts.numProcesses, valid)
	start := time.Now()
	imp := &importer{s: s, opts: &opts, batch: "UNLOGGED"}
	insert := fmt.Sprintf("INSERT INTO %s.%s (%s) VALUES (", quoteName(ks), quoteName(table), strings.Join(quoteNames(valid), ", "))
	using := ""
	if opts.ttl > 0 {
		using = fmt.Sprintf(" USING TTL %d", opts.ttl)
	}
	imp.statement = func(values []string) string { return insert + strings.Join(values, ", ") + ")" + using }
	if isCounterTable(tm) {
		// Counters are written as cqlsh writes them: each value added,
		// in counter batches.
		imp.batch = "COUNTER"
		imp.statement = func(values []string) string {
			var set, where []string
			for i, c := range valid {
				name := quoteName(c)
				switch k := tm.Columns[c].Kind; {
				case k == gocql.ColumnPartitionKey || k == gocql.ColumnClusteringKey:
					where = append(where, name+"="+values[i])
				case values[i] != "null": // nothing to add (cqlsh fails the row)
					set = append(set, name+"="+name+"+"+values[i])
				}
			}
			if len(set) == 0 {
				return "" // a row of no counts: nothing to write
			}
			return fmt.Sprintf("UPDATE %s.%s SET %s WHERE %s", quoteName(ks), quoteName(table), strings.Join(set, ","), strings.Join(where, " AND "))
		}
	}
	chunks := make(chan []importRow, opts.numProcesses)
	var wg sync.WaitGroup
	for w := 0; w < opts.numProcesses; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for chunk := range chunks {
				imp.load(chunk)
			}
		}()
	}
	cr := &csvReader{r: bufio.NewReader(r), d: opts.dialect}
	header := opts.header
	skip := opts.skipRows
	read, skipped := 0, 0
	var chunk []importRow
	send := func() {
		if len(chunk) > 0 {
			imp.pace(len(chunk), start)
			chunks <- chunk
			chunk = nil
		}
	}
	var readErr error
	for opts.maxRows < 0 || read < opts.maxRows {
		record, err := cr.read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			readErr = fmt.Errorf("Failed to import from %s: %v", file, err)
			break
		}
		if len(record) == 0 {
			continue // a blank line
		}
		if header {
			header = false
			continue
		}
		if skip > 0 {
			skip--
			skipped++
			continue
		}
		read++
		row, err := convertRecord(record, types, keep, keyColumns, &opts)
		if err != nil {
			imp.failed([]importRow{{record: record}}, "ParseError", err.Error(), 0)
			if imp.stopped() {
				break
			}
			continue
		}
		chunk = append(chunk, row)
		if len(chunk) >= opts.chunkSize {
			send()
		}
		if imp.stopped() {
			break
		}
	}
	if !imp.stopped() {
		send()
	}
	close(chunks)
	wg.Wait()
	if readErr != nil {
		return readErr
	}
	imported, failed := imp.counts()
	s.copyProgress(imported+failed, start)
	if failed > 0 {
		s.error(fmt.Sprintf("Failed to process %d rows; failed rows written to %s", failed, opts.errFile))
	}
	fmt.Fprintf(s.opts.Out, "%d rows imported from 1 files in %s (%d skipped).\n", imported, describeInterval(time.Since(start).Seconds()), skipped)
	return nil
}

// checkColumns refuses a column the table does not have.
func checkColumns(tm *gocql.TableMetadata, cols []string) error {
	for _, c := range cols {
		if tm.Columns[c] == nil {
			return fmt.Errorf("Invalid column name %s", c)
		}
	}
	return nil
}

// convertRecord turns a CSV record into the literals of an INSERT.
// keyColumn is a primary key column of a COPY FROM file, by its place.
type keyColumn struct {
	name      string
	partition bool // of the partition key, which batches rows together
}

func convertRecord(record []string, types []*cqltype.Type, keep []bool, keyColumns map[int]keyColumn, opts *copyOptions) (importRow, error) {
	if len(record) != len(types) {
		return importRow{}, fmt.Errorf("Invalid row length %d should be %d", len(record), len(types))
	}
	row := importRow{record: record}
	var key []string
	for i, field := range record {
		if !keep[i] {
			continue
		}
		lit, err := importLiteral(types[i], field, opts)
		if err != nil {
			return importRow{}, err
		}
		if k, ok := keyColumns[i]; ok {
			if lit == "null" {
				msg := fmt.Sprintf("Cannot insert null value for primary key column '%s'.", k.name)
				if opts.null == "" {
					msg += " If you want to insert empty strings, consider using the WITH NULL=<marker> option for COPY."
				}
				return importRow{}, errors.New(msg)
			}
			if k.partition {
				key = append(key, lit)
			}
		}
		row.values = append(row.values, lit)
	}
	row.key = strings.Join(key, "\x00")
	return row, nil
}

// importer sends the rows of COPY FROM and keeps its counts.
type importer struct {
	s    *Shell
	opts *copyOptions
	// statement writes one row; batch is the kind of batch of several.
	statement func(values []string) string
	batch     string

	mu           sync.Mutex
	imported     int
	failedRows   int
	parseErrors  int
	insertErrors int
	sent         int
	stop         bool
	errFile      *os.File
}

// pace holds the reader to INGESTRATE rows a second.
func (imp *importer) pace(rows int, start time.Time) {
	imp.sent += rows
	if imp.opts.ingestRate <= 0 {
		return
	}
	due := start.Add(time.Duration(float64(imp.sent) / float64(imp.opts.ingestRate) * float64(time.Second)))
	if wait := time.Until(due); wait > 0 {
		time.Sleep(wait)
	}
}

// load writes a chunk: each partition's rows in unlogged batches of up to
// MAXBATCHSIZE, each tried up to MAXATTEMPTS times.
func (imp *importer) load(chunk []importRow) {
	groups := map[string][]importRow{}
	var order []string
	for _, r := range chunk {
		if _, ok := groups[r.key]; !ok {
			order = append(order, r.key)
		}
		groups[r.key] = append(groups[r.key], r)
	}
	for _, k := range order {
		rows := groups[k]
		for len(rows) > 0 {
			n := min(len(rows), max(1, imp.opts.maxBatchSize))
			imp.send(rows[:n])
			rows = rows[n:]
		}
	}
}

func (imp *importer) send(rows []importRow) {
	if imp.stopped() {
		return
	}
	var stmt string
	var stmts []string
	for _, r := range rows {
		if st := imp.statement(r.values); st != "" {
			stmts = append(stmts, st)
		}
	}
	switch len(stmts) {
	case 0:
		imp.mu.Lock()
		imp.imported += len(rows)
		imp.mu.Unlock()
		return
	case 1:
		stmt = stmts[0]
	default:
		var b strings.Builder
		b.WriteString("BEGIN " + imp.batch + " BATCH\n")
		for _, st := range stmts {
			b.WriteString(st + ";\n")
		}
		b.WriteString("APPLY BATCH")
		stmt = b.String()
	}
	var err error
	for attempt := 1; attempt <= max(1, imp.opts.maxAttempts); attempt++ {
		if err = imp.s.session.Query(stmt).Consistency(imp.s.consistency).Exec(); err == nil {
			imp.mu.Lock()
			imp.imported += len(rows)
			imp.mu.Unlock()
			return
		}
		var reqErr gocql.RequestError
		if errors.As(err, &reqErr) && (reqErr.Code() == gocql.ErrCodeInvalid || reqErr.Code() == gocql.ErrCodeSyntax) {
			break // the same statement fails the same way again
		}
	}
	imp.failed(rows, errorName(err), err.Error(), max(1, imp.opts.maxAttempts))
}

// errorName names an error's kind as the Python driver's exception names
// it in cqlsh's messages.
func errorName(err error) string {
	var reqErr gocql.RequestError
	if errors.As(err, &reqErr) {
		switch reqErr.Code() {
		case gocql.ErrCodeInvalid:
			return "InvalidRequest"
		case gocql.ErrCodeUnavailable:
			return "Unavailable"
		case gocql.ErrCodeWriteTimeout:
			return "WriteTimeout"
		case gocql.ErrCodeSyntax:
			return "SyntaxException"
		}
	}
	return "Error"
}

// failed records rows that could not be imported: counted, written to
// ERRFILE, and reported as cqlsh reports them.
func (imp *importer) failed(rows []importRow, name, msg string, attempts int) {
	imp.mu.Lock()
	defer imp.mu.Unlock()
	imp.failedRows += len(rows)
	if name == "ParseError" {
		imp.parseErrors += len(rows)
		imp.s.error(fmt.Sprintf("Failed to import %d rows: %s - %s,  given up without retries", len(rows), name, msg))
	} else {
		imp.insertErrors += len(rows)
		imp.s.error(fmt.Sprintf("Failed to import %d rows: %s - %s,  given up after %d attempts", len(rows), name, msg, attempts))
	}
	if imp.errFile == nil {
		if _, err := os.Stat(imp.opts.errFile); err == nil {
			_ = os.Rename(imp.opts.errFile, imp.opts.errFile+time.Now().Format(".20060102_150405"))
		}
		f, err := os.OpenFile(imp.opts.errFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			imp.s.error(fmt.Sprintf("Can't open %s for writing: %v", quoteRepr(imp.opts.errFile), err))
			return
		}
		imp.errFile = f
	}
	w := &csvWriter{w: imp.errFile, d: imp.opts.dialect}
	for _, r := range rows {
		_ = w.write(r.record)
	}
	switch {
	case imp.insertErrors > imp.opts.maxInsertErrors && imp.opts.maxInsertErrors >= 0:
		imp.s.error(fmt.Sprintf("Exceeded maximum number of insert errors %d", imp.opts.maxInsertErrors))
		imp.stop = true
	case imp.parseErrors > imp.opts.maxParseErrors && imp.opts.maxParseErrors >= 0:
		imp.s.error(fmt.Sprintf("Exceeded maximum number of parse errors %d", imp.opts.maxParseErrors))
		imp.stop = true
	}
}

func (imp *importer) stopped() bool {
	imp.mu.Lock()
	defer imp.mu.Unlock()
	return imp.stop
}

func (imp *importer) counts() (imported, failed int) {
	imp.mu.Lock()
	defer imp.mu.Unlock()
	if imp.errFile != nil {
		_ = imp.errFile.Close()
		imp.errFile = nil
	}
	return imp.imported, imp.failedRows
}

func quoteName(n string) string { return `"` + strings.ReplaceAll(n, `"`, `""`) + `"` }

func quoteNames(ns []string) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = quoteName(n)
	}
	return out
}

// tableOrder is the order cqlsh copies a table's columns in when none are
// named (the Python driver's metadata order): the partition key, the
// clustering columns, then the others, static or not, by name.
func tableOrder(tm *gocql.TableMetadata) []string {
	var out []string
	key := map[string]bool{}
	for _, c := range append(append([]*gocql.ColumnMetadata(nil), tm.PartitionKey...), tm.ClusteringColumns...) {
		out = append(out, c.Name)
		key[c.Name] = true
	}
	var rest []string
	for name := range tm.Columns {
		if !key[name] {
			rest = append(rest, name)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

// isCounterTable reports a table whose regular columns are counters.
func isCounterTable(tm *gocql.TableMetadata) bool {
	counters := false
	for _, c := range tm.Columns {
		if c.Kind == gocql.ColumnRegular || c.Kind == gocql.ColumnStatic {
			if c.Type.Type() != gocql.TypeCounter {
				return false
			}
			counters = true
		}
	}
	return counters
}
