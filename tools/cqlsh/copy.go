package cqlsh

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gocql/gocql"
	"github.com/sibyldb/sibyl/cqltype"
)

// COPY moves a table's rows to and from CSV files, as cqlsh's COPY does:
// values in the shell's display form (top-level text as it is), which is
// also CQL literal syntax for everything else, so COPY FROM writes each
// row back with an INSERT of literals.

var copyPattern = regexp.MustCompile(`(?is)^COPY\s+("[^"]+"|[\w]+)(?:\.("[^"]+"|[\w]+))?\s*(?:\(([^)]*)\))?\s+(TO|FROM)\s+('(?:[^']|'')*'|STDOUT|STDIN)\s*(?:WITH\s+(.*))?$`)

type copyOptions struct {
	header    bool
	delimiter rune
	null      string
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
	opts, err := parseCopyOptions(m[6], strings.ToUpper(m[4]))
	if err != nil {
		s.error(err.Error())
		return
	}
	file := m[5]
	if strings.HasPrefix(file, "'") {
		file = strings.ReplaceAll(file[1:len(file)-1], "''", "'")
	}
	if strings.EqualFold(m[4], "TO") {
		err = s.copyTo(ks, table, cols, file, opts)
	} else {
		err = s.copyFrom(ks, table, cols, file, opts)
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

func parseCopyOptions(text, direction string) (copyOptions, error) {
	opts := copyOptions{delimiter: ','}
	if strings.TrimSpace(text) == "" {
		return opts, nil
	}
	var unknown []string
	for _, part := range regexp.MustCompile(`(?i)\s+AND\s+`).Split(strings.TrimSpace(text), -1) {
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return opts, fmt.Errorf("Improper COPY command.")
		}
		k = strings.ToUpper(strings.TrimSpace(k))
		v = strings.TrimSpace(v)
		if strings.HasPrefix(v, "'") && strings.HasSuffix(v, "'") && len(v) >= 2 {
			v = strings.ReplaceAll(v[1:len(v)-1], "''", "'")
		}
		switch k {
		case "HEADER":
			opts.header = strings.EqualFold(v, "true")
		case "DELIMITER":
			r := []rune(v)
			if len(r) != 1 {
				return opts, fmt.Errorf("DELIMITER must be a single character")
			}
			opts.delimiter = r[0]
		case "NULL":
			opts.null = v
		default:
			unknown = append(unknown, strings.ToLower(k))
		}
	}
	if len(unknown) > 0 {
		return opts, fmt.Errorf("Unrecognized COPY %s options: %s", direction, strings.Join(unknown, ", "))
	}
	return opts, nil
}

// csvValue is a value as COPY TO writes it.
func csvValue(info gocql.TypeInfo, v *rawValue, null string) string {
	if v.null {
		return null
	}
	t := cqlType(info)
	if t.Kind == cqltype.Text || t.Kind == cqltype.Ascii {
		return string(v.data)
	}
	return t.Display(v.data)
}

func (s *Shell) copyTo(ks, table string, cols []string, file string, opts copyOptions) error {
	sel := "*"
	if len(cols) > 0 {
		sel = strings.Join(quoteNames(cols), ", ")
	}
	var w io.Writer = s.opts.Out
	if !strings.EqualFold(file, "STDOUT") {
		f, err := os.Create(file)
		if err != nil {
			return fmt.Errorf("Can't open %s for writing: %v", quoteRepr(file), err)
		}
		defer f.Close()
		w = f
	}
	start := time.Now()
	iter := s.session.Query(fmt.Sprintf("SELECT %s FROM %s.%s", sel, quoteName(ks), quoteName(table))).
		Consistency(s.consistency).PageSize(1000).Iter()
	columns := iter.Columns()
	names := make([]string, len(columns))
	for i, c := range columns {
		names[i] = c.Name
	}
	fmt.Fprintf(s.opts.Out, "Using 1 child processes\n\nStarting copy of %s.%s with columns [%s].\n", ks, table, strings.Join(names, ", "))
	cw := csv.NewWriter(w)
	cw.Comma = opts.delimiter
	if opts.header {
		_ = cw.Write(names)
	}
	rows := 0
	for {
		vals, ok := scanRaw(iter, columns)
		if !ok {
			break
		}
		record := make([]string, len(columns))
		for i, c := range columns {
			record[i] = csvValue(c.TypeInfo, vals[i], opts.null)
		}
		if err := cw.Write(record); err != nil {
			return err
		}
		rows++
	}
	cw.Flush()
	if err := iter.Close(); err != nil {
		return err
	}
	if err := cw.Error(); err != nil {
		return err
	}
	elapsed := time.Since(start).Seconds()
	fmt.Fprintf(s.opts.Out, "Processed: %d rows; Rate: %7.0f rows/s; Avg. rate: %7.0f rows/s\n", rows, rate(rows, elapsed), rate(rows, elapsed))
	fmt.Fprintf(s.opts.Out, "%d rows exported to 1 files in %.3f seconds.\n", rows, elapsed)
	return nil
}

func rate(n int, secs float64) float64 {
	if secs <= 0 {
		return 0
	}
	return float64(n) / secs
}

func (s *Shell) copyFrom(ks, table string, cols []string, file string, opts copyOptions) error {
	meta, err := s.session.KeyspaceMetadata(ks)
	if err != nil {
		return fmt.Errorf("Keyspace '%s' not found.", ks)
	}
	tm := meta.Tables[table]
	if tm == nil {
		return fmt.Errorf("'%s' not found in keyspace '%s'", table, ks)
	}
	if len(cols) == 0 {
		cols = tableOrder(tm)
	}
	types := make([]*cqltype.Type, len(cols))
	for i, c := range cols {
		cm := tm.Columns[c]
		if cm == nil {
			return fmt.Errorf("Invalid column name %s", c)
		}
		types[i] = cqlType(cm.Type)
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
	fmt.Fprintf(s.opts.Out, "Using 1 child processes\n\nStarting copy of %s.%s with columns [%s].\n", ks, table, strings.Join(cols, ", "))
	start := time.Now()
	cr := csv.NewReader(r)
	cr.Comma = opts.delimiter
	cr.FieldsPerRecord = len(cols)
	prefix := fmt.Sprintf("INSERT INTO %s.%s (%s) VALUES (", quoteName(ks), quoteName(table), strings.Join(quoteNames(cols), ", "))
	work := make(chan string, 256)
	var mu sync.Mutex
	var firstErr error
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for q := range work {
				if err := s.session.Query(q).Consistency(s.consistency).Exec(); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("%w (in %s)", err, q)
					}
					mu.Unlock()
				}
			}
		}()
	}
	rows := 0
	header := opts.header
	for {
		record, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			close(work)
			wg.Wait()
			return fmt.Errorf("Failed to import from %s: %v", file, err)
		}
		if header {
			header = false
			continue
		}
		vals := make([]string, len(record))
		for i, v := range record {
			vals[i] = cqlLiteral(types[i], v, opts.null)
		}
		work <- prefix + strings.Join(vals, ", ") + ")"
		rows++
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		return fmt.Errorf("Failed to import %s: %v", file, firstErr)
	}
	elapsed := time.Since(start).Seconds()
	fmt.Fprintf(s.opts.Out, "Processed: %d rows; Rate: %7.0f rows/s; Avg. rate: %7.0f rows/s\n\n", rows, rate(rows, elapsed), rate(rows, elapsed))
	fmt.Fprintf(s.opts.Out, "%d rows imported from 1 files in %.3f seconds (0 skipped).\n", rows, elapsed)
	return nil
}

// cqlLiteral turns a CSV value back into CQL: the display form is CQL
// already, but for top-level strings and the quoted scalar types.
func cqlLiteral(t *cqltype.Type, v, null string) string {
	if v == null {
		return "null"
	}
	switch t.Kind {
	case cqltype.Text, cqltype.Ascii, cqltype.Timestamp, cqltype.Date, cqltype.Time, cqltype.Inet:
		return "'" + strings.ReplaceAll(v, "'", "''") + "'"
	case cqltype.Boolean:
		return strings.ToLower(v)
	case cqltype.Duration:
		if v == "" {
			return "0s"
		}
	}
	return v
}

func quoteName(n string) string { return `"` + strings.ReplaceAll(n, `"`, `""`) + `"` }

func quoteNames(ns []string) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = quoteName(n)
	}
	return out
}

// tableOrder is the order of SELECT *'s columns, which COPY TO wrote:
// the partition key, the clustering columns, then the others by name.
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
