package messaging

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sibyldb/sibyl/internal/testutil"
	"github.com/sibyldb/sibyl/internal/tlsconf"
)

func TestFrameRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	frames := []Frame{
		{ID: 1, Verb: VerbMutation, Kind: KindRequest, Payload: []byte("hello")},
		{ID: 1<<63 + 5, Verb: VerbRead, Kind: KindResponse, Payload: []byte{}},
		{ID: 7, Verb: Verb(999), Kind: KindOneWay, Payload: bytes.Repeat([]byte{0xAB}, 100_000)},
	}
	for _, f := range frames {
		buf.Write(AppendFrame(nil, f))
	}
	for _, want := range frames {
		got, err := ReadFrame(&buf)
		if err != nil || got.ID != want.ID || got.Verb != want.Verb || got.Kind != want.Kind || !bytes.Equal(got.Payload, want.Payload) {
			t.Fatalf("read %+v, %v; want %+v", got.ID, err, want.ID)
		}
	}
	// One flipped bit fails the checksum.
	b := AppendFrame(nil, frames[0])
	b[len(b)-1] ^= 1
	if _, err := ReadFrame(bytes.NewReader(b)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a corrupt frame read as %v", err)
	}
	// A declared length past the limit is refused before it is read.
	huge := []byte{0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0}
	if _, err := ReadFrame(bytes.NewReader(huge)); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("a 4 GiB frame read as %v", err)
	}
}

func FuzzReadFrame(f *testing.F) {
	f.Add(AppendFrame(nil, Frame{ID: 3, Verb: VerbEcho, Kind: KindRequest, Payload: []byte("x")}))
	f.Add([]byte{0, 0, 0, 11, 1, 2, 3, 4})
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := ReadFrame(bytes.NewReader(b))
		if err != nil {
			return
		}
		// What decodes encodes back to the same bytes.
		if again := AppendFrame(nil, fr); !bytes.Equal(again, b[:len(again)]) {
			t.Fatalf("re-encoding differs")
		}
	})
}

// pair starts services on 127.0.0.1 and 127.0.0.2 on one port, over a
// faulty transport the test can steer. Each echoes, and fails on "fail".
func pair(t *testing.T) (a, b *Service, faults *FaultyTransport) {
	t.Helper()
	faults = NewFaultyTransport(nil)
	a = startService(t, "127.0.0.1", 0, faults)
	b = startService(t, "127.0.0.2", a.Port(), faults)
	return a, b, faults
}

func startService(t *testing.T, name string, port int, tr Transport) *Service {
	t.Helper()
	s, err := Start(Options{Name: name, Port: port, Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	s.Handle(VerbEcho, func(_ context.Context, from string, p []byte) ([]byte, error) {
		if string(p) == "fail" {
			return nil, fmt.Errorf("asked to fail by %s", from)
		}
		return append([]byte(name+" heard "+from+": "), p...), nil
	})
	t.Cleanup(func() { s.Close() })
	return s
}

func request(s *Service, to, payload string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	out, err := s.Request(ctx, to, VerbEcho, []byte(payload))
	return string(out), err
}

func TestRequests(t *testing.T) {
	a, b, _ := pair(t)
	if got, err := request(a, "127.0.0.2", "hi", time.Second); err != nil || got != "127.0.0.2 heard 127.0.0.1: hi" {
		t.Fatalf("a to b: %q, %v", got, err)
	}
	if got, err := request(b, "127.0.0.1", "yo", time.Second); err != nil || got != "127.0.0.1 heard 127.0.0.2: yo" {
		t.Fatalf("b to a: %q, %v", got, err)
	}
	if got, err := request(a, "127.0.0.1", "me", time.Second); err != nil || got != "127.0.0.1 heard 127.0.0.1: me" {
		t.Fatalf("a to itself: %q, %v", got, err)
	}
	var remote *RemoteError
	if _, err := request(a, "127.0.0.2", "fail", time.Second); !errors.As(err, &remote) || remote.Message != "asked to fail by 127.0.0.1" {
		t.Fatalf("a failing handler: %v", err)
	}
	if _, err := a.Request(context.Background(), "127.0.0.2", VerbRead, nil); !errors.As(err, &remote) || remote.Message != "no handler for READ" {
		t.Fatalf("a verb with no handler: %v", err)
	}
	// Many requests in flight on the one connection, each answered.
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for i := 0; i < 200; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			want := fmt.Sprintf("127.0.0.2 heard 127.0.0.1: %d", i)
			if got, err := request(a, "127.0.0.2", fmt.Sprint(i), 5*time.Second); err != nil || got != want {
				errs <- fmt.Errorf("request %d: %q, %v", i, got, err)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// One-way messages arrive.
	got := make(chan string, 1)
	b.Handle(VerbHint, func(_ context.Context, from string, p []byte) ([]byte, error) {
		got <- from + ":" + string(p)
		return nil, nil
	})
	if err := a.Send(context.Background(), "127.0.0.2", VerbHint, []byte("h")); err != nil {
		t.Fatal(err)
	}
	select {
	case g := <-got:
		if g != "127.0.0.1:h" {
			t.Errorf("one-way message %q", g)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the one-way message did not arrive")
	}
}

// TestFaults drops, delays and cuts messages between the two nodes, and
// heals the link.
func TestFaults(t *testing.T) {
	a, _, faults := pair(t)
	if _, err := request(a, "127.0.0.2", "warm", time.Second); err != nil {
		t.Fatal(err)
	}
	// Dropped requests time out.
	faults.Drop("127.0.0.1", "127.0.0.2")
	if _, err := request(a, "127.0.0.2", "lost", 200*time.Millisecond); !errors.Is(err, ErrTimeout) {
		t.Fatalf("a dropped request: %v", err)
	}
	// Dropped answers too: the request arrives, its answer does not.
	faults.HealAll()
	faults.Drop("127.0.0.2", "127.0.0.1")
	if _, err := request(a, "127.0.0.2", "unanswered", 200*time.Millisecond); !errors.Is(err, ErrTimeout) {
		t.Fatalf("a dropped answer: %v", err)
	}
	// A delay beyond the timeout times out; within it, the answer comes.
	faults.HealAll()
	faults.Delay("127.0.0.2", "127.0.0.1", 300*time.Millisecond)
	if _, err := request(a, "127.0.0.2", "slow", 100*time.Millisecond); !errors.Is(err, ErrTimeout) {
		t.Fatalf("a slow answer: %v", err)
	}
	if got, err := request(a, "127.0.0.2", "patient", 2*time.Second); err != nil || !strings.HasSuffix(got, "patient") {
		t.Fatalf("a patient request: %q, %v", got, err)
	}
	// A cut link fails at once, and works again once healed (the
	// connection is dialled anew).
	faults.HealAll()
	faults.Cut("127.0.0.1", "127.0.0.2")
	if _, err := request(a, "127.0.0.2", "cut", time.Second); !errors.Is(err, ErrCut) {
		t.Fatalf("a cut link: %v", err)
	}
	faults.HealAll()
	time.Sleep(150 * time.Millisecond) // past RedialAfter
	if got, err := request(a, "127.0.0.2", "healed", time.Second); err != nil || !strings.HasSuffix(got, "healed") {
		t.Fatalf("after healing: %q, %v", got, err)
	}
}

// TestRedialForgetsAFailedDial: within RedialAfter of a failed dial a
// request fails with that dial's error, unless Redial (a peer seen up
// again) made it dial at once.
func TestRedialForgetsAFailedDial(t *testing.T) {
	a, err := Start(Options{Name: "127.0.0.1", RedialAfter: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	if _, err := request(a, "127.0.0.2", "nobody there", time.Second); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("a peer not listening: %v", err)
	}
	startService(t, "127.0.0.2", a.Port(), nil)
	if _, err := request(a, "127.0.0.2", "too soon", time.Second); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("within RedialAfter of the failed dial: %v", err)
	}
	a.Redial("127.0.0.2")
	if got, err := request(a, "127.0.0.2", "up again", time.Second); err != nil || !strings.HasSuffix(got, "up again") {
		t.Fatalf("after Redial: %q, %v", got, err)
	}
}

// TestConnectionLostInFlight: a request whose connection ends before its
// answer (the peer's process stops, and its system closes the socket)
// fails at once, not as a timeout: its answer can no longer come.
func TestConnectionLostInFlight(t *testing.T) {
	a, b, _ := pair(t)
	running, release := make(chan struct{}), make(chan struct{})
	b.Handle(VerbRead, func(context.Context, string, []byte) ([]byte, error) {
		close(running)
		<-release
		return []byte("too late"), nil
	})
	failed := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, err := a.Request(ctx, "127.0.0.2", VerbRead, nil)
		failed <- err
	}()
	<-running
	closed := make(chan error, 1)
	go func() { closed <- b.Close() }() // closes its connections, then waits for the handler
	err := <-failed
	close(release)
	<-closed
	if err == nil || errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "connection ended") {
		t.Fatalf("a request whose connection ended: %v", err)
	}
}

// hangingDial is a transport whose dials get no answer (a peer behind a
// partition) until their context ends; it tells dialling when one starts.
type hangingDial struct {
	Transport
	dialling chan struct{}
}

func (h hangingDial) Dial(ctx context.Context, _, addr string) (Conn, error) {
	h.dialling <- struct{}{}
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestWaitingToDialHonoursTheDeadline: a request waiting while another
// dials the same peer gives up when its own time runs out, as a timeout,
// not when the other's dial does.
func TestWaitingToDialHonoursTheDeadline(t *testing.T) {
	tr := hangingDial{Transport: TCP{}, dialling: make(chan struct{}, 1)}
	a := startService(t, "127.0.0.1", 0, tr)
	first, stopFirst := context.WithCancel(context.Background())
	firstDone := make(chan error, 1)
	go func() {
		_, err := a.Request(first, "127.0.0.2", VerbEcho, nil)
		firstDone <- err
	}()
	<-tr.dialling
	if _, err := request(a, "127.0.0.2", "behind the dial", 50*time.Millisecond); !errors.Is(err, ErrTimeout) {
		t.Fatalf("a request waiting behind a dial: %v", err)
	}
	select {
	case err := <-firstDone:
		t.Fatalf("the dialling request ended first: %v", err)
	default:
	}
	stopFirst()
	if err := <-firstDone; !errors.Is(err, ErrTimeout) {
		t.Fatalf("a request whose dial its context ended: %v", err)
	}
}

// TestPeerRestarts: requests to a stopped peer fail, and reach it again
// once it is back on the same address.
func TestPeerRestarts(t *testing.T) {
	a, b, faults := pair(t)
	if _, err := request(a, "127.0.0.2", "before", time.Second); err != nil {
		t.Fatal(err)
	}
	b.Close()
	if _, err := request(a, "127.0.0.2", "while down", time.Second); err == nil {
		t.Fatal("a request to a stopped node succeeded")
	}
	startService(t, "127.0.0.2", a.Port(), faults)
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, err := request(a, "127.0.0.2", "after", time.Second)
		if err == nil && strings.HasSuffix(got, "after") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the restart: %q, %v", got, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestHandshake refuses what is not a Sibyl node of this version.
func TestHandshake(t *testing.T) {
	a, _, _ := pair(t)
	addr := net.JoinHostPort("127.0.0.1", fmt.Sprint(a.Port()))
	for _, hello := range [][]byte{[]byte("GET / HTTP/1.1\r\n\r\n"), append([]byte("SBYL"), 99, 1, 'x')} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.Write(hello)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		reply, _ := io.ReadAll(c)
		c.Close()
		if len(reply) > 1 || len(reply) == 1 && reply[0] != Version {
			t.Errorf("hello %q got %v", hello, reply)
		}
	}
	if _, err := Start(Options{Name: "localhost"}); err == nil {
		t.Error("a name that is not an address was accepted")
	}
}

// TestManyInFlight sends requests of assorted sizes from many goroutines
// at once, each answer checked byte for byte: frames queued while the
// connection's writer writes must go out whole and in one piece.
func TestManyInFlight(t *testing.T) {
	a, b, _ := pair(t)
	b.Handle(VerbRead, func(_ context.Context, _ string, p []byte) ([]byte, error) { return p, nil })
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 48; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 400; i++ {
				payload := bytes.Repeat([]byte{byte(g), byte(i)}, (g*31+i*17)%2048)
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				got, err := a.Request(ctx, "127.0.0.2", VerbRead, payload)
				cancel()
				if err != nil || !bytes.Equal(got, payload) {
					errs <- fmt.Errorf("goroutine %d request %d: %d bytes back of %d, %v", g, i, len(got), len(payload), err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestSilentPeersHoldUpNoOne: clients that connect to the storage port
// and say nothing do not keep a real node's connection waiting. The real
// one is accepted, and its request answered, while their handshakes are
// still open (they are hung up on only when their handshake time ends).
func TestSilentPeersHoldUpNoOne(t *testing.T) {
	a := startService(t, "127.0.0.1", 0, TCP{})
	addr := net.JoinHostPort("127.0.0.1", fmt.Sprint(a.Port()))
	var silent []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		silent = append(silent, c)
	}
	b := startService(t, "127.0.0.2", a.Port(), TCP{})
	// b's request opens b's connection to a; a answers on it.
	if got, err := request(b, "127.0.0.1", "hello", time.Minute); err != nil || got != "127.0.0.1 heard 127.0.0.2: hello" {
		t.Fatalf("request past three silent connections: %q, %v", got, err)
	}
	for i, c := range silent {
		c.SetReadDeadline(time.Now().Add(time.Millisecond))
		var one [1]byte
		if _, err := c.Read(one[:]); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("silent connection %d was hung up on (%v) before the real one was served", i, err)
		}
	}
}

// TestDialsFromListenAddress: a node's connections to its peers come
// from its own address, not from whichever the system would choose.
func TestDialsFromListenAddress(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.9:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	from := make(chan string, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			from <- err.Error()
			return
		}
		defer c.Close()
		from <- c.RemoteAddr().(*net.TCPAddr).IP.String()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if c, err := (TCP{}).Dial(ctx, "127.0.0.7", l.Addr().String()); err == nil {
		c.Close() // the listener does no handshake: the dial is expected to fail
	}
	if got := <-from; got != "127.0.0.7" {
		t.Errorf("the connection came from %s, want 127.0.0.7", got)
	}
}

// TestPlaintextOnlyFromAllowedPeers: on a storage port that takes TLS and
// plaintext (internode_encryption dc or rack), a plaintext hello from an
// address AllowPlaintext refuses is cut off; from one it allows, and with
// TLS from anyone, it is taken.
func TestPlaintextOnlyFromAllowedPeers(t *testing.T) {
	pki := testutil.NewPKI(t, "cluster")
	cert, key := pki.Issue(t, "node")
	srv, err := tlsconf.NewServer(tlsconf.Options{Enabled: true, Optional: true, Keystore: cert, KeystoreKey: key})
	if err != nil {
		t.Fatal(err)
	}
	tr := TCP{TLS: &TCPTLS{Server: srv, AllowPlaintext: func(host string) bool { return host == "127.0.0.2" }}}
	l, err := tr.Listen("127.0.0.1", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				for {
					f, err := c.Recv()
					if err != nil {
						return
					}
					_ = c.Send(f)
				}
			}()
		}
	}()
	addr := fmt.Sprintf("127.0.0.1:%d", l.Port())
	clientTLS, err := tlsconf.ClientSettings{}.ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		local string
		tr    TCP
		taken bool
	}{
		{"127.0.0.2", TCP{}, true},
		{"127.0.0.9", TCP{}, false},
		{"127.0.0.9", TCP{TLS: &TCPTLS{Dial: func(string) *tls.Config { return clientTLS }}}, true},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		conn, err := c.tr.Dial(ctx, c.local, addr)
		cancel()
		if err == nil {
			err = conn.Send(Frame{Kind: KindRequest, ID: 1, Verb: 1})
			if err == nil {
				_, err = conn.Recv()
			}
			conn.Close()
		}
		if (err == nil) != c.taken {
			t.Errorf("from %s (TLS %v): %v, want taken %v", c.local, c.tr.TLS != nil, err, c.taken)
		}
	}
}

// TestExpiredMessagesAreDropped checks a message that waited past its
// verb's expiry is dropped unanswered and counted by verb, while verbs
// without an expiry are answered.
func TestExpiredMessagesAreDropped(t *testing.T) {
	a := startService(t, "127.0.0.1", 0, nil)
	// Every wait is longer than a nanosecond: each ECHO expires.
	expiring, err := Start(Options{Name: "127.0.0.2", Port: a.Port(), Expiry: func(v Verb) time.Duration {
		if v == VerbEcho {
			return time.Nanosecond
		}
		return 0
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { expiring.Close() })
	var ran atomic.Int32
	expiring.Handle(VerbEcho, func(context.Context, string, []byte) ([]byte, error) { ran.Add(1); return nil, nil })
	expiring.Handle(VerbRead, func(context.Context, string, []byte) ([]byte, error) { return []byte("read"), nil })
	for range 3 {
		if _, err := request(a, "127.0.0.2", "late", 200*time.Millisecond); err == nil || !strings.Contains(err.Error(), "timed out") {
			t.Errorf("an expired request: %v, want no answer", err)
		}
	}
	if got := expiring.Dropped(VerbEcho); got != 3 || ran.Load() != 0 {
		t.Errorf("ECHO dropped %d, ran %d times; want 3 and 0", got, ran.Load())
	}
	out, err := a.Request(context.Background(), "127.0.0.2", VerbRead, nil)
	if err != nil || string(out) != "read" || expiring.Dropped(VerbRead) != 0 {
		t.Errorf("a verb that never expires: %q, %v, dropped %d", out, err, expiring.Dropped(VerbRead))
	}
}
