package native

import (
	"crypto/md5"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/sibyldb/sibyl/cql/exec"
	"github.com/sibyldb/sibyl/cqltype"
)

// Result kinds (cql-clients.md 1.12).
const (
	resultVoid         = 0x0001
	resultRows         = 0x0002
	resultSetKeyspace  = 0x0003
	resultPrepared     = 0x0004
	resultSchemaChange = 0x0005
)

// Rows metadata flags.
const (
	mfGlobalTablesSpec = 0x0001
	mfHasMorePages     = 0x0002
	mfNoMetadata       = 0x0004
	mfMetadataChanged  = 0x0008
)

// Error codes the server sends besides those of exec.
const (
	codeServerError         = 0x0000
	codeProtocolError       = 0x000A
	codeAuthenticationError = 0x0100
	codeUnprepared          = 0x2500
)

// writeResult encodes a statement's result as a RESULT body.
func (w *writer) writeResult(r *exec.Result, version byte, skipMetadata bool) {
	switch r.Kind {
	case exec.VoidResult:
		w.int(resultVoid)
	case exec.SetKeyspaceResult:
		w.int(resultSetKeyspace)
		w.string(r.Keyspace)
	case exec.SchemaChangeResult:
		if r.Change == nil { // IF [NOT] EXISTS changed nothing
			w.int(resultVoid)
			return
		}
		w.int(resultSchemaChange)
		w.schemaChange(r.Change)
	case exec.RowsResult:
		w.int(resultRows)
		w.rowsMetadata(r.Columns, r.PagingState, version, skipMetadata)
		w.rows(r.Rows)
	}
}

func (w *writer) rows(rows [][][]byte) {
	w.int(int32(len(rows)))
	for _, row := range rows {
		for _, v := range row {
			w.bytes(v)
		}
	}
}

// resultMetadataID identifies a result's columns (protocol v5): a client
// that executes with an id that is no longer current gets the columns
// again.
func resultMetadataID(cols []exec.ColumnSpec) []byte {
	h := md5.New()
	for _, c := range cols {
		fmt.Fprintf(h, "%s.%s.%s ", c.Keyspace, c.Table, c.Name)
		hashType(h, c.Type)
		h.Write([]byte{'\n'})
	}
	return h.Sum(nil)
}

// hashType writes a type as the client decodes it: a user type by its
// fields too, which its name alone does not show (ALTER TYPE changes them).
func hashType(h io.Writer, t *cqltype.Type) {
	fmt.Fprintf(h, "%s", t)
	if t.Kind == cqltype.UDT {
		for i, f := range t.FieldNames {
			fmt.Fprintf(h, " %q:", f)
			hashType(h, t.Params[i])
		}
		h.Write([]byte{';'})
		return
	}
	for _, p := range t.Params {
		h.Write([]byte{' '})
		hashType(h, p)
	}
}

// sameColumns reports whether two column lists name the same columns of
// the same types, without hashing them as resultMetadataID does.
func sameColumns(a, b []exec.ColumnSpec) bool {
	return slices.EqualFunc(a, b, func(x, y exec.ColumnSpec) bool {
		return x.Keyspace == y.Keyspace && x.Table == y.Table && x.Name == y.Name && x.Type.Equal(y.Type)
	})
}

// rowsMetadataChanged writes v5 rows metadata that carries a new result
// metadata id and the full column list.
func (w *writer) rowsMetadataChanged(cols []exec.ColumnSpec, pagingState, id []byte, version byte) {
	flags := int32(mfMetadataChanged)
	global := sameTable(cols)
	if global {
		flags |= mfGlobalTablesSpec
	}
	if pagingState != nil {
		flags |= mfHasMorePages
	}
	w.int(flags)
	w.int(int32(len(cols)))
	if pagingState != nil {
		w.bytes(pagingState)
	}
	w.shortBytes(id)
	w.columnSpecs(cols, global, version)
}

// rowsMetadata writes the metadata of rows (or of a prepared statement's
// results, with no paging state).
func (w *writer) rowsMetadata(cols []exec.ColumnSpec, pagingState []byte, version byte, skip bool) {
	flags := int32(0)
	global := sameTable(cols)
	if global {
		flags |= mfGlobalTablesSpec
	}
	if pagingState != nil {
		flags |= mfHasMorePages
	}
	if skip {
		flags |= mfNoMetadata
	}
	w.int(flags)
	w.int(int32(len(cols)))
	if pagingState != nil {
		w.bytes(pagingState)
	}
	if skip {
		return
	}
	w.columnSpecs(cols, global, version)
}

func (w *writer) columnSpecs(cols []exec.ColumnSpec, global bool, version byte) {
	if global {
		w.string(cols[0].Keyspace)
		w.string(cols[0].Table)
	}
	for _, c := range cols {
		if !global {
			w.string(c.Keyspace)
			w.string(c.Table)
		}
		w.string(c.Name)
		w.writeType(c.Type, version)
	}
}

// sameTable reports whether every column comes from one table (and there
// is at least one), which the global table spec then names once.
func sameTable(cols []exec.ColumnSpec) bool {
	if len(cols) == 0 {
		return false
	}
	for _, c := range cols[1:] {
		if c.Keyspace != cols[0].Keyspace || c.Table != cols[0].Table {
			return false
		}
	}
	return true
}

// prepared writes a Prepared result: the id, the bind markers' metadata
// (with the partition key's marker indexes from version 4) and the result
// metadata.
func (w *writer) prepared(id []byte, p *exec.Prepared, version byte) {
	w.int(resultPrepared)
	w.shortBytes(id)
	if version >= 5 {
		w.shortBytes(resultMetadataID(p.Columns))
	}
	global := sameTable(p.Markers)
	flags := int32(0)
	if global {
		flags |= mfGlobalTablesSpec
	}
	w.int(flags)
	w.int(int32(len(p.Markers)))
	if version >= 4 {
		w.int(int32(len(p.PartitionKeyIndexes)))
		for _, i := range p.PartitionKeyIndexes {
			w.short(uint16(i))
		}
	}
	w.columnSpecs(p.Markers, global, version)
	if p.Columns == nil {
		w.int(mfNoMetadata)
		w.int(0)
		return
	}
	w.rowsMetadata(p.Columns, nil, version, false)
}

// schemaChange writes the body shared by a Schema_change result and a
// SCHEMA_CHANGE event.
func (w *writer) schemaChange(c *exec.SchemaChange) {
	w.string(c.Change)
	w.string(c.Target)
	w.string(c.Keyspace)
	if c.Target != "KEYSPACE" {
		w.string(c.Name)
	}
}

// writeError encodes a failure as an ERROR body with its code's extra
// fields.
func (w *writer) writeError(err error, unpreparedID []byte, version byte) {
	var pe *protocolError
	var ae *authError
	var ee *exec.Error
	switch {
	case errors.As(err, &pe):
		w.int(codeProtocolError)
		w.string(pe.msg)
	case errors.As(err, &ae):
		w.int(codeAuthenticationError)
		w.string(ae.msg)
	case unpreparedID != nil:
		w.int(codeUnprepared)
		w.string(err.Error())
		w.shortBytes(unpreparedID)
	case errors.As(err, &ee):
		code := ee.Code
		if version < 4 && (code == exec.ReadFailure || code == exec.WriteFailure) {
			// Version 3 has no failures: Cassandra sends the timeouts.
			code = map[exec.ErrorCode]exec.ErrorCode{exec.ReadFailure: exec.ReadTimeout, exec.WriteFailure: exec.WriteTimeout}[code]
		}
		if version < 5 && code == exec.CASWriteUnknown {
			code = exec.WriteTimeout
		}
		w.int(int32(code))
		w.string(ee.Message)
		switch {
		case code == exec.AlreadyExists:
			w.string(ee.Keyspace)
			w.string(ee.Table)
		case ee.Replica != nil:
			w.replicaFailure(code, ee.Replica, version)
		}
	default:
		w.int(codeServerError)
		w.string(err.Error())
	}
}

// replicaFailure writes the extra fields of Unavailable, the timeouts and
// the failures (cql-clients.md 1.15), as the connection's version has them.
func (w *writer) replicaFailure(code exec.ErrorCode, f *exec.ReplicaFailure, version byte) {
	failures := func() {
		if version >= 5 {
			w.int(int32(len(f.Failures)))
			for _, r := range f.Failures {
				w.byte(byte(len(r.Address)))
				w.b = append(w.b, r.Address...)
				w.short(r.Reason)
			}
			return
		}
		w.int(f.NumFailures)
	}
	dataPresent := byte(0)
	if f.DataPresent {
		dataPresent = 1
	}
	switch code {
	case exec.Unavailable: // consistency, required, alive
		w.short(f.Consistency)
		w.int(f.BlockFor)
		w.int(f.Received)
	case exec.CASWriteUnknown:
		w.short(f.Consistency)
		w.int(f.Received)
		w.int(f.BlockFor)
	case exec.WriteTimeout:
		w.short(f.Consistency)
		w.int(f.Received)
		w.int(f.BlockFor)
		w.string(f.WriteType)
		if version >= 5 && f.WriteType == "CAS" {
			w.short(f.Contentions)
		}
	case exec.ReadTimeout:
		w.short(f.Consistency)
		w.int(f.Received)
		w.int(f.BlockFor)
		w.byte(dataPresent)
	case exec.ReadFailure:
		w.short(f.Consistency)
		w.int(f.Received)
		w.int(f.BlockFor)
		failures()
		w.byte(dataPresent)
	case exec.WriteFailure:
		w.short(f.Consistency)
		w.int(f.Received)
		w.int(f.BlockFor)
		failures()
		w.string(f.WriteType)
	case exec.FunctionFailure:
		w.string(f.FunctionKeyspace)
		w.string(f.Function)
		w.stringList(f.ArgTypes)
	}
}
