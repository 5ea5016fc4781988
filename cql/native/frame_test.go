package native

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/sibyldb/sibyl/cql/exec"
	"github.com/sibyldb/sibyl/cqltype"
)

// requestFrame builds a request envelope.
func requestFrame(version byte, stream int16, op byte, body []byte) []byte {
	b := appendFrame(nil, version, 0, stream, op, body)
	b[0] &^= responseBit
	return b
}

func queryBody(text string, flags byte, values ...[]byte) []byte {
	var w writer
	w.longString(text)
	w.short(1) // ONE
	w.byte(flags | qfValues)
	w.short(uint16(len(values)))
	for _, v := range values {
		w.bytes(v)
	}
	return w.b
}

func seedFrames() [][]byte {
	var startup writer
	startup.short(1)
	startup.string("CQL_VERSION")
	startup.string("3.0.0")
	var execute writer
	execute.shortBytes(make([]byte, 16))
	execute.short(4)
	execute.byte(qfValues | qfPageSize | qfPagingState | qfDefaultTimestamp | qfNamesForValues)
	execute.short(1)
	execute.string("k")
	execute.int(-2)
	execute.int(100)
	execute.bytes([]byte{1, 2})
	execute.long(1)
	var batch writer
	batch.byte(1)
	batch.short(2)
	batch.byte(0)
	batch.longString("INSERT INTO t (k) VALUES (?)")
	batch.short(1)
	batch.bytes([]byte{0, 0, 0, 1})
	batch.byte(1)
	batch.shortBytes(make([]byte, 16))
	batch.short(0)
	batch.short(1)
	batch.byte(qfDefaultTimestamp)
	batch.long(7)
	var register writer
	register.stringList([]string{"SCHEMA_CHANGE"})
	return [][]byte{
		requestFrame(4, 0, opOptions, nil),
		requestFrame(4, 1, opStartup, startup.b),
		requestFrame(4, 2, opQuery, queryBody("SELECT * FROM t WHERE k = ?", qfPageSize, []byte{0, 0, 0, 1})),
		requestFrame(4, 3, opExecute, execute.b),
		requestFrame(3, 4, opBatch, batch.b),
		requestFrame(4, 5, opRegister, register.b),
		requestFrame(0x42, 0, opOptions, nil),
		{4, 0, 0, 1, 7, 0x7f, 0xff, 0xff, 0xff},
	}
}

// decodeAll reads frames from b and decodes each body as its opcode says,
// as the server does before running anything.
func decodeAll(b []byte) error {
	r := bytes.NewReader(b)
	var hdr [headerSize]byte
	for {
		f, err := readFrame(r, hdr[:], 1<<16)
		if err != nil {
			return err
		}
		body := &reader{b: f.body}
		switch f.opcode {
		case opStartup:
			body.stringMap()
		case opQuery:
			body.longString()
			body.queryParams(f.version)
		case opExecute:
			body.shortBytes()
			if f.version >= 5 {
				body.shortBytes()
			}
			body.queryParams(f.version)
		case opBatch:
			body.batch(f.version)
		case opRegister:
			body.stringList()
		case opPrepare:
			body.longString()
		}
	}
}

// FuzzFrameDecode feeds arbitrary bytes to the frame reader and the body
// decoders: they refuse what is malformed and never panic.
func FuzzFrameDecode(f *testing.F) {
	for _, s := range seedFrames() {
		f.Add(s)
	}
	f.Add(bytes.Join(seedFrames(), nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = decodeAll(b)
	})
}

func TestFrameErrors(t *testing.T) {
	var hdr [headerSize]byte
	for _, c := range []struct {
		name  string
		frame []byte
		want  string
	}{
		{"version 66", requestFrame(0x42, 0, opOptions, nil), "Invalid or unsupported protocol version (66); supported versions are (3/v3, 4/v4, 5/v5)"},
		{"version 6", requestFrame(6, 0, opOptions, nil), "Invalid or unsupported protocol version (6)"},
		{"too big", []byte{4, 0, 0, 1, 7, 0, 1, 0, 1}, "Request is too big: length 65537 exceeds maximum allowed length 65536."},
		{"negative length", []byte{4, 0, 0, 1, 7, 0x80, 0, 0, 0}, "Invalid frame body length"},
		{"a response", []byte{0x84, 0, 0, 1, 2, 0, 0, 0, 0}, "a response"},
	} {
		_, err := readFrame(bytes.NewReader(c.frame), hdr[:], 1<<16)
		var pe *protocolError
		if !errors.As(err, &pe) || !pe.fatal || !bytes.Contains([]byte(pe.msg), []byte(c.want)) {
			t.Errorf("%s: %v, want a fatal protocol error containing %q", c.name, err, c.want)
		}
	}
	// Every seed frame that a client sends decodes cleanly.
	for i, s := range seedFrames()[:6] {
		r := bytes.NewReader(s)
		f, err := readFrame(r, hdr[:], 1<<16)
		if err != nil {
			t.Fatalf("seed %d: %v", i, err)
		}
		if f.opcode == opBatch {
			body := &reader{b: f.body}
			b := body.batch(f.version)
			if body.err != nil || len(b.entries) != 2 || !b.params.hasTimestamp || b.params.timestamp != 7 || b.entries[1].id == nil {
				t.Fatalf("batch decoded as %+v, %v", b, body.err)
			}
		}
		if f.opcode == opExecute {
			body := &reader{b: f.body}
			body.shortBytes()
			p := body.queryParams(f.version)
			if body.err != nil || !p.unset[0] || p.names[0] != "k" || p.pageSize != 100 || string(p.pagingState) != "\x01\x02" {
				t.Fatalf("execute params decoded as %+v, %v", p, body.err)
			}
		}
	}
}

// TestReplicaFailureBodies checks the extra fields of the replica
// failures, as each version lays them out.
func TestReplicaFailureBodies(t *testing.T) {
	f := &exec.ReplicaFailure{Consistency: 4, Received: 1, BlockFor: 2, DataPresent: true, NumFailures: 1,
		Failures: []exec.ReplicaReason{{Address: []byte{127, 0, 0, 2}, Reason: 3}}, WriteType: "BATCH_LOG",
		FunctionKeyspace: "ks", Function: "f", ArgTypes: []string{"int"}}
	body := func(code exec.ErrorCode, version byte) []byte {
		var w writer
		w.writeError(&exec.Error{Code: code, Message: "m", Replica: f}, nil, version)
		return w.b
	}
	head := func(code int32) []byte { return append(binary.BigEndian.AppendUint32(nil, uint32(code)), 0, 1, 'm') }
	cl := []byte{0, 4}
	one, two := []byte{0, 0, 0, 1}, []byte{0, 0, 0, 2}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	for _, c := range []struct {
		name    string
		code    exec.ErrorCode
		version byte
		want    []byte
	}{
		{"unavailable", exec.Unavailable, 4, cat(head(0x1000), cl, two, one)},
		{"write timeout", exec.WriteTimeout, 4, cat(head(0x1100), cl, one, two, []byte{0, 9}, []byte("BATCH_LOG"))},
		{"read timeout", exec.ReadTimeout, 4, cat(head(0x1200), cl, one, two, []byte{1})},
		{"read failure v4", exec.ReadFailure, 4, cat(head(0x1300), cl, one, two, one, []byte{1})},
		{"read failure v5", exec.ReadFailure, 5, cat(head(0x1300), cl, one, two, one, []byte{4, 127, 0, 0, 2, 0, 3}, []byte{1})},
		{"read failure v3", exec.ReadFailure, 3, cat(head(0x1200), cl, one, two, []byte{1})},
		{"write failure v4", exec.WriteFailure, 4, cat(head(0x1500), cl, one, two, one, []byte{0, 9}, []byte("BATCH_LOG"))},
		{"function failure", exec.FunctionFailure, 4, cat(head(0x1400), []byte{0, 2, 'k', 's', 0, 1, 'f', 0, 1, 0, 3}, []byte("int"))},
		{"cas unknown v5", exec.CASWriteUnknown, 5, cat(head(0x1700), cl, one, two)},
	} {
		if got := body(c.code, c.version); !bytes.Equal(got, c.want) {
			t.Errorf("%s:\n got %x\nwant %x", c.name, got, c.want)
		}
	}
}

func TestResultMetadataIDFollowsUserTypeFields(t *testing.T) {
	addr := func(fields ...string) *cqltype.Type {
		types := make([]*cqltype.Type, len(fields))
		for i := range types {
			types[i] = cqltype.Native(cqltype.Text)
		}
		return cqltype.UDTOf("ks", "addr", fields, types, true)
	}
	cols := func(t *cqltype.Type) []exec.ColumnSpec {
		return []exec.ColumnSpec{{Keyspace: "ks", Table: "t", Name: "a", Type: t}}
	}
	before := resultMetadataID(cols(addr("street")))
	if !bytes.Equal(before, resultMetadataID(cols(addr("street")))) {
		t.Fatal("the same columns hash differently")
	}
	for _, changed := range []*cqltype.Type{addr("street", "city"), addr("road"), cqltype.ListOf(addr("street"), true)} {
		if bytes.Equal(before, resultMetadataID(cols(changed))) {
			t.Errorf("columns of %s keep the metadata id of frozen<addr> with one field", changed)
		}
	}
}
