package messaging

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// Verb says what a message asks for. The numbers are the wire's; a new
// verb takes a new number, and a retired one's is not taken again (5 and
// 6 pulled and pushed schemas before the metadata log carried them).
type Verb uint16

// The verbs.
const (
	VerbEcho            Verb = 1  // liveness: the payload comes back
	VerbMutation        Verb = 2  // apply a mutation
	VerbRead            Verb = 3  // read (data, or a digest of it)
	VerbRangeRead       Verb = 4  // read a token range
	VerbHint            Verb = 7  // a mutation held for a node that was down
	VerbTruncate        Verb = 8  // remove every row of a table
	VerbMetadata        Verb = 9  // a Raft message of the metadata group (one way)
	VerbMetadataJoin    Verb = 10 // add me to the metadata group
	VerbMetadataWait    Verb = 11 // answer once you have applied this index
	VerbStreamPrepare   Verb = 12 // list the sections of these tables' key spans
	VerbStreamChunk     Verb = 13 // the bytes of a section from an offset
	VerbStreamComplete  Verb = 14 // the session is over: let its SSTables go
	VerbStreamPull      Verb = 15 // pull these tables' key spans from a node
	VerbRepairTree      Verb = 16 // the hashes of a table's data in a token range's pieces
	VerbRepairRecord    Verb = 17 // these ranges of a table were repaired on every replica
	VerbPaxosPrepare    Verb = 18 // promise a Paxos ballot (and read the partition)
	VerbPaxosPropose    Verb = 19 // accept a Paxos proposal
	VerbPaxosCommit     Verb = 20 // apply a decided Paxos proposal
	VerbBatchStore      Verb = 21 // keep a logged batch in the batchlog
	VerbBatchRemove     Verb = 22 // a logged batch's writes are in: forget it
	VerbCounterMutation Verb = 23 // lead a counter write: make the updates shards, replicate them
	VerbRepairPaxos     Verb = 24 // the partitions of a table's range with a Paxos proposal left unfinished
)

func (v Verb) String() string {
	switch v {
	case VerbEcho:
		return "ECHO"
	case VerbMutation:
		return "MUTATION"
	case VerbRead:
		return "READ"
	case VerbRangeRead:
		return "RANGE_READ"
	case VerbHint:
		return "HINT"
	case VerbTruncate:
		return "TRUNCATE"
	case VerbMetadata:
		return "METADATA"
	case VerbMetadataJoin:
		return "METADATA_JOIN"
	case VerbMetadataWait:
		return "METADATA_WAIT"
	case VerbStreamPrepare:
		return "STREAM_PREPARE"
	case VerbStreamChunk:
		return "STREAM_CHUNK"
	case VerbStreamComplete:
		return "STREAM_COMPLETE"
	case VerbStreamPull:
		return "STREAM_PULL"
	case VerbRepairTree:
		return "REPAIR_TREE"
	case VerbRepairRecord:
		return "REPAIR_RECORD"
	case VerbPaxosPrepare:
		return "PAXOS_PREPARE"
	case VerbPaxosPropose:
		return "PAXOS_PROPOSE"
	case VerbPaxosCommit:
		return "PAXOS_COMMIT"
	case VerbBatchStore:
		return "BATCH_STORE"
	case VerbBatchRemove:
		return "BATCH_REMOVE"
	case VerbCounterMutation:
		return "COUNTER_MUTATION"
	case VerbRepairPaxos:
		return "REPAIR_PAXOS"
	}
	return fmt.Sprintf("VERB_%d", uint16(v))
}

// Kind says whether a frame asks or answers.
type Kind uint8

// The kinds.
const (
	KindRequest  Kind = 1 // answer expected, with the same id
	KindResponse Kind = 2 // the answer's payload
	KindFailure  Kind = 3 // the handler failed: the payload is its message
	KindOneWay   Kind = 4 // no answer
)

// Frame is one message.
type Frame struct {
	ID   uint64
	Verb Verb
	Kind Kind
	// Trace, when set, is the trace session of the request the message
	// is part of: the peer records what it does for it there.
	Trace   *[16]byte
	Payload []byte
}

// kindTraced marks, in the kind byte, a frame whose payload starts with
// the 16 bytes of its trace session.
const kindTraced = 0x80

// Version is the protocol version the handshake names.
const Version = 1

// MaxPayload bounds a frame's payload; a larger one is refused, and a
// peer announcing one is cut off.
const MaxPayload = 128 << 20

// frameHeader: length of what follows the CRC (4), CRC32C of it (4), id
// (8), verb (2), kind (1).
const frameHeader = 4 + 4 + 8 + 2 + 1

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrCorrupt is a frame whose checksum does not match.
var ErrCorrupt = errors.New("messaging: corrupt frame (checksum mismatch)")

// AppendFrame encodes f after dst.
func AppendFrame(dst []byte, f Frame) []byte {
	start := len(dst)
	kind, trace := byte(f.Kind), []byte(nil)
	if f.Trace != nil {
		kind, trace = kind|kindTraced, f.Trace[:]
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(8+2+1+len(trace)+len(f.Payload)))
	dst = append(dst, 0, 0, 0, 0) // the CRC, once the rest is in
	body := len(dst)
	dst = binary.BigEndian.AppendUint64(dst, f.ID)
	dst = binary.BigEndian.AppendUint16(dst, uint16(f.Verb))
	dst = append(dst, kind)
	dst = append(dst, trace...)
	dst = append(dst, f.Payload...)
	binary.BigEndian.PutUint32(dst[start+4:], crc32.Checksum(dst[body:], castagnoli))
	return dst
}

// ReadFrame reads one frame. It refuses a declared length beyond
// MaxPayload before reading it, and a checksum that does not match.
func ReadFrame(r io.Reader) (Frame, error) {
	var h [8]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return Frame{}, err
	}
	n := binary.BigEndian.Uint32(h[:4])
	if n < 8+2+1 || n > 8+2+1+MaxPayload {
		return Frame{}, fmt.Errorf("messaging: frame length %d is out of range", n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return Frame{}, err
	}
	if crc32.Checksum(body, castagnoli) != binary.BigEndian.Uint32(h[4:]) {
		return Frame{}, ErrCorrupt
	}
	f := Frame{ID: binary.BigEndian.Uint64(body), Verb: Verb(binary.BigEndian.Uint16(body[8:])), Kind: Kind(body[10] &^ kindTraced), Payload: body[11:]}
	if f.Kind < KindRequest || f.Kind > KindOneWay {
		return Frame{}, fmt.Errorf("messaging: unknown frame kind %d", f.Kind)
	}
	if body[10]&kindTraced != 0 {
		if len(f.Payload) < 16 {
			return Frame{}, fmt.Errorf("messaging: a traced frame of %d bytes has no room for its trace session", len(f.Payload))
		}
		f.Trace, f.Payload = (*[16]byte)(f.Payload[:16]), f.Payload[16:]
	}
	return f, nil
}
