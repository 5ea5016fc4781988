package clients

import (
	"encoding/binary"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// rawConn speaks the protocol by hand, for what drivers never send.
type rawConn struct {
	t  *testing.T
	nc net.Conn
}

func dialRaw(t *testing.T, port int) *rawConn {
	t.Helper()
	return dialRawAt(t, "127.0.0.1", port)
}

// dialRawAt is dialRaw to a node at another address.
func dialRawAt(t *testing.T, host string, port int) *rawConn {
	t.Helper()
	nc, err := net.Dial("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	return &rawConn{t: t, nc: nc}
}

func (c *rawConn) send(version byte, stream int16, op byte, body []byte) {
	c.t.Helper()
	h := []byte{version, 0, 0, 0, op, 0, 0, 0, 0}
	binary.BigEndian.PutUint16(h[2:], uint16(stream))
	binary.BigEndian.PutUint32(h[5:], uint32(len(body)))
	if _, err := c.nc.Write(append(h, body...)); err != nil {
		c.t.Fatal(err)
	}
}

type rawResponse struct {
	version, op byte
	stream      int16
	body        []byte
}

// code and message of an ERROR response.
func (r rawResponse) errorText() (int32, string) {
	if r.op != 0 || len(r.body) < 6 {
		return -1, ""
	}
	n := int(binary.BigEndian.Uint16(r.body[4:6]))
	return int32(binary.BigEndian.Uint32(r.body[:4])), string(r.body[6 : 6+n])
}

func (c *rawConn) recv() rawResponse {
	c.t.Helper()
	var h [9]byte
	if _, err := io.ReadFull(c.nc, h[:]); err != nil {
		c.t.Fatalf("reading a response: %v", err)
	}
	body := make([]byte, binary.BigEndian.Uint32(h[5:]))
	if _, err := io.ReadFull(c.nc, body); err != nil {
		c.t.Fatalf("reading a response body: %v", err)
	}
	return rawResponse{version: h[0], op: h[4], stream: int16(binary.BigEndian.Uint16(h[2:])), body: body}
}

// closedByServer reports whether the server closed the connection.
func (c *rawConn) closedByServer() bool {
	var b [1]byte
	_, err := c.nc.Read(b[:])
	return err == io.EOF
}

// startupBody is a STARTUP's options: CQL_VERSION, then the pairs of
// names and values given.
func startupBody(options ...string) []byte {
	options = append([]string{"CQL_VERSION", "3.0.0"}, options...)
	b := binary.BigEndian.AppendUint16(nil, uint16(len(options)/2))
	for _, s := range options {
		b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
		b = append(b, s...)
	}
	return b
}

func queryBody(q string) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(q)))
	b = append(b, q...)
	return append(b, 0, 1, 0) // consistency ONE, no flags
}

// TestVersionNegotiation answers the versions the Python driver tries
// first (its DSE versions) and those out of range with the protocol error
// that makes it try the next one down, on the request's stream, in
// version 5; then closes the connection.
func TestVersionNegotiation(t *testing.T) {
	_, cluster := startNode(t)
	for _, v := range []byte{0x42, 0x41, 6, 2} {
		c := dialRaw(t, cluster.Port)
		c.send(v, 0, 5, nil)
		r := c.recv()
		code, msg := r.errorText()
		if r.version != 0x85 || r.stream != 0 || code != 0x000A || !strings.Contains(msg, "unsupported protocol version") {
			t.Errorf("version %d: answered version 0x%02x stream %d code 0x%04x %q", v, r.version, r.stream, code, msg)
		}
		if !c.closedByServer() {
			t.Errorf("version %d: the connection stays open", v)
		}
	}
	// Versions 3, 4 and 5 are answered in their own version.
	for _, v := range []byte{3, 4, 5} {
		c := dialRaw(t, cluster.Port)
		c.send(v, 7, 5, nil)
		if r := c.recv(); r.version != 0x80|v || r.op != 6 || r.stream != 7 {
			t.Errorf("OPTIONS in v%d: answered version 0x%02x op %d stream %d", v, r.version, r.op, r.stream)
		}
	}
}

// TestBadFramesAreProtocolErrors checks that a request before STARTUP, a
// malformed body and an oversized frame are answered with protocol errors
// (the last closing the connection), and that other connections go on.
func TestBadFramesAreProtocolErrors(t *testing.T) {
	_, cluster := startNode(t)
	other := dialRaw(t, cluster.Port)
	other.send(4, 1, 1, startupBody())
	if r := other.recv(); r.op != 2 {
		t.Fatalf("STARTUP answered with op %d", r.op)
	}

	c := dialRaw(t, cluster.Port)
	c.send(4, 3, 7, queryBody("SELECT * FROM system.local"))
	if code, msg := c.recv().errorText(); code != 0x000A || msg != "Unexpected message QUERY, expecting STARTUP or OPTIONS" {
		t.Errorf("query before STARTUP: 0x%04x %q", code, msg)
	}

	c = dialRaw(t, cluster.Port)
	c.send(4, 1, 1, startupBody())
	c.recv()
	c.send(4, 2, 7, []byte{0, 0, 1, 0, 'x'}) // a long string longer than the body
	r := c.recv()
	if code, msg := r.errorText(); code != 0x000A || r.stream != 2 || !strings.Contains(msg, "Invalid QUERY message") {
		t.Errorf("malformed QUERY: stream %d 0x%04x %q", r.stream, code, msg)
	}
	c.send(4, 3, 7, queryBody("SELECT key FROM system.local"))
	if r := c.recv(); r.op != 8 || r.stream != 3 {
		t.Errorf("the connection after a malformed request: op %d stream %d", r.op, r.stream)
	}

	h := []byte{4, 0, 0, 4, 7, 0x10, 0, 0, 0} // 256 MiB
	if _, err := c.nc.Write(h); err != nil {
		t.Fatal(err)
	}
	r = c.recv()
	if code, msg := r.errorText(); code != 0x000A || r.stream != 4 || !strings.Contains(msg, "Request is too big") {
		t.Errorf("oversized frame: stream %d 0x%04x %q", r.stream, code, msg)
	}
	if !c.closedByServer() {
		t.Error("the connection stays open after an oversized frame")
	}

	other.send(4, 2, 7, queryBody("SELECT key FROM system.local"))
	if r := other.recv(); r.op != 8 || r.stream != 2 {
		t.Errorf("another connection: op %d stream %d", r.op, r.stream)
	}
}

// TestCompressedFrames negotiates LZ4 by hand: a compressed request is
// understood, and the response comes compressed.
func TestCompressedFrames(t *testing.T) {
	_, cluster := startNode(t)
	c := dialRaw(t, cluster.Port)
	c.send(4, 1, 1, startupBody("COMPRESSION", "lz4"))
	if r := c.recv(); r.op != 2 {
		t.Fatalf("STARTUP with lz4: op %d", r.op)
	}
	q, err := lz4Compressor{}.Encode(queryBody("SELECT release_version FROM system.local"))
	if err != nil {
		t.Fatal(err)
	}
	h := []byte{4, 1, 0, 2, 7, 0, 0, 0, 0} // flags: compressed
	binary.BigEndian.PutUint32(h[5:], uint32(len(q)))
	if _, err := c.nc.Write(append(h, q...)); err != nil {
		t.Fatal(err)
	}
	var rh [9]byte
	if _, err := io.ReadFull(c.nc, rh[:]); err != nil {
		t.Fatal(err)
	}
	resp := make([]byte, binary.BigEndian.Uint32(rh[5:]))
	if _, err := io.ReadFull(c.nc, resp); err != nil {
		t.Fatal(err)
	}
	if rh[1]&1 == 0 || rh[4] != 8 {
		t.Fatalf("response flags 0x%02x op %d: want a compressed RESULT", rh[1], rh[4])
	}
	plain, err := lz4Compressor{}.Decode(resp)
	if err != nil || !strings.Contains(string(plain), "4.1.6") {
		t.Fatalf("decompressed response %q, %v", plain, err)
	}
}

// TestEventsAndUnprepared registers a connection for schema changes and
// checks a DDL statement on another connection reaches it as an EVENT on
// stream -1; and that executing an unknown prepared id answers
// Unprepared with that id.
func TestEventsAndUnprepared(t *testing.T) {
	_, cluster := startNode(t)
	listener := dialRaw(t, cluster.Port)
	listener.send(4, 1, 1, startupBody())
	listener.recv()
	reg := []byte{0, 1, 0, 13}
	reg = append(reg, "SCHEMA_CHANGE"...)
	listener.send(4, 2, 0x0B, reg)
	if r := listener.recv(); r.op != 2 || r.stream != 2 {
		t.Fatalf("REGISTER answered op %d stream %d", r.op, r.stream)
	}
	c := dialRaw(t, cluster.Port)
	c.send(4, 1, 1, startupBody())
	c.recv()
	c.send(4, 2, 7, queryBody("CREATE KEYSPACE evks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"))
	if r := c.recv(); r.op != 8 || binary.BigEndian.Uint32(r.body) != 5 {
		t.Fatalf("CREATE KEYSPACE answered op %d body %x", r.op, r.body)
	}
	ev := listener.recv()
	if ev.op != 0x0C || ev.stream != -1 || !strings.Contains(string(ev.body), "SCHEMA_CHANGE") ||
		!strings.Contains(string(ev.body), "CREATED") || !strings.Contains(string(ev.body), "evks") {
		t.Fatalf("event: op %d stream %d body %q", ev.op, ev.stream, ev.body)
	}

	id := []byte("0123456789abcdef")
	body := append([]byte{0, 16}, id...)
	body = append(body, 0, 1, 0) // consistency ONE, no flags
	c.send(4, 3, 0x0A, body)
	r := c.recv()
	code, _ := r.errorText()
	n := int(binary.BigEndian.Uint16(r.body[4:6]))
	rest := r.body[6+n:]
	if code != 0x2500 || len(rest) < 2 || string(rest[2:2+binary.BigEndian.Uint16(rest)]) != string(id) {
		t.Fatalf("EXECUTE of an unknown id: code 0x%04x, rest %x", code, rest)
	}
}
