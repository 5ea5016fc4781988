package native

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
)

// Opcodes (cql-clients.md 1.4).
const (
	opError         = 0x00
	opStartup       = 0x01
	opReady         = 0x02
	opAuthenticate  = 0x03
	opOptions       = 0x05
	opSupported     = 0x06
	opQuery         = 0x07
	opResult        = 0x08
	opPrepare       = 0x09
	opExecute       = 0x0A
	opRegister      = 0x0B
	opEvent         = 0x0C
	opBatch         = 0x0D
	opAuthChallenge = 0x0E
	opAuthResponse  = 0x0F
	opAuthSuccess   = 0x10
)

var opNames = map[byte]string{
	opError: "ERROR", opStartup: "STARTUP", opReady: "READY", opAuthenticate: "AUTHENTICATE",
	opOptions: "OPTIONS", opSupported: "SUPPORTED", opQuery: "QUERY", opResult: "RESULT",
	opPrepare: "PREPARE", opExecute: "EXECUTE", opRegister: "REGISTER", opEvent: "EVENT",
	opBatch: "BATCH", opAuthChallenge: "AUTH_CHALLENGE", opAuthResponse: "AUTH_RESPONSE",
	opAuthSuccess: "AUTH_SUCCESS",
}

func opName(op byte) string {
	if n, ok := opNames[op]; ok {
		return n
	}
	return fmt.Sprintf("opcode 0x%02X", op)
}

// Envelope flags (cql-clients.md 1.2).
const (
	flagCompression   = 0x01
	flagTracing       = 0x02
	flagCustomPayload = 0x04
	flagWarning       = 0x08
	flagBeta          = 0x10
)

const (
	headerSize   = 9
	responseBit  = 0x80
	versionMask  = 0x7F
	minVersion   = 3
	maxVersion   = 5
	eventStream  = -1
	supportedVer = "3/v3, 4/v4, 5/v5"
)

// header is an envelope's 9-byte header (versions 3 and up).
type header struct {
	version byte // without the response bit
	flags   byte
	stream  int16
	opcode  byte
	length  int32
}

func parseHeader(b []byte) header {
	return header{
		version: b[0] & versionMask,
		flags:   b[1],
		stream:  int16(binary.BigEndian.Uint16(b[2:4])),
		opcode:  b[4],
		length:  int32(binary.BigEndian.Uint32(b[5:9])),
	}
}

// frame is a whole envelope: its header and its (decompressed) body.
type frame struct {
	header
	body []byte
}

// protocolError is a failure of the protocol itself: answered with
// error code 0x000A, after which the connection may be closed.
type protocolError struct {
	msg   string
	fatal bool // close the connection once the error is written
}

func (e *protocolError) Error() string { return e.msg }

func protocolErrorf(fatal bool, format string, args ...any) *protocolError {
	return &protocolError{msg: fmt.Sprintf(format, args...), fatal: fatal}
}

// readFrame reads one envelope. A version this server does not speak, or a
// body over maxSize, is a fatal protocol error (the caller answers, then
// closes); the header comes back for the answer's stream id.
func readFrame(r io.Reader, hdr []byte, maxSize int) (frame, error) {
	if _, err := io.ReadFull(r, hdr[:headerSize]); err != nil {
		return frame{}, err
	}
	h := parseHeader(hdr)
	f := frame{header: h}
	if hdr[0]&responseBit != 0 {
		return f, protocolErrorf(true, "Invalid frame: a response (version byte 0x%02X) sent to the server", hdr[0])
	}
	if h.version < minVersion || h.version > maxVersion {
		return f, protocolErrorf(true, "Invalid or unsupported protocol version (%d); supported versions are (%s)", h.version, supportedVer)
	}
	if h.length < 0 {
		return f, protocolErrorf(true, "Invalid frame body length %d", h.length)
	}
	if int(h.length) > maxSize {
		return f, protocolErrorf(true, "Request is too big: length %d exceeds maximum allowed length %d.", h.length, maxSize)
	}
	body, err := readBody(r, int(h.length))
	f.body = body
	return f, err
}

// readBody reads n bytes. A big body is read in steps, so that memory
// follows the bytes that arrive, not a length a client declared.
func readBody(r io.Reader, n int) ([]byte, error) {
	const step = 64 << 10
	if n <= step {
		b := make([]byte, n)
		_, err := io.ReadFull(r, b)
		return b, err
	}
	var buf bytes.Buffer
	_, err := io.CopyN(&buf, r, int64(n))
	return buf.Bytes(), err
}

// appendFrame appends a response envelope with the given body.
func appendFrame(dst []byte, version, flags byte, stream int16, opcode byte, body []byte) []byte {
	dst = append(dst, make([]byte, headerSize)...)
	putHeader(dst[len(dst)-headerSize:], version, flags, stream, opcode, len(body))
	return append(dst, body...)
}

// putHeader writes a response envelope's header into dst[:headerSize].
func putHeader(dst []byte, version, flags byte, stream int16, opcode byte, length int) {
	dst[0], dst[1] = version|responseBit, flags
	binary.BigEndian.PutUint16(dst[2:], uint16(stream))
	dst[4] = opcode
	binary.BigEndian.PutUint32(dst[5:], uint32(length))
}
