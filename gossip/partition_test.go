package gossip

import (
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"
)

// partition places nodes on sides: nodes on different sides reach each
// other by neither packet nor stream, as behind a firewall rule.
type partition struct {
	mu    sync.Mutex
	sides map[string]int // by host; 0 unless placed
}

func (p *partition) split(sides map[string]int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sides = sides
}

func (p *partition) heal() { p.split(nil) }

func (p *partition) cut(a, b string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sides[a] != p.sides[b]
}

// cutTransport is memberlist's transport for node self, dropping what
// crosses the partition.
type cutTransport struct {
	*memberlist.NetTransport
	self    string
	p       *partition
	packets chan *memberlist.Packet
	streams chan net.Conn
}

func newCutTransport(t *testing.T, self string, port int, p *partition) *cutTransport {
	t.Helper()
	nt, err := memberlist.NewNetTransport(&memberlist.NetTransportConfig{BindAddrs: []string{self}, BindPort: port, Logger: log.New(io.Discard, "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	c := &cutTransport{NetTransport: nt, self: self, p: p, packets: make(chan *memberlist.Packet), streams: make(chan net.Conn)}
	go func() {
		for pk := range nt.PacketCh() {
			if !c.cutFrom(pk.From.String()) {
				c.packets <- pk
			}
		}
	}()
	go func() {
		for conn := range nt.StreamCh() {
			if c.cutFrom(conn.RemoteAddr().String()) {
				conn.Close()
				continue
			}
			c.streams <- conn
		}
	}()
	return c
}

func (c *cutTransport) cutFrom(addr string) bool {
	host, _, _ := net.SplitHostPort(addr)
	return c.p.cut(c.self, host)
}

var errCut = errors.New("partitioned")

func (c *cutTransport) PacketCh() <-chan *memberlist.Packet { return c.packets }
func (c *cutTransport) StreamCh() <-chan net.Conn           { return c.streams }
func (c *cutTransport) WriteTo(b []byte, addr string) (time.Time, error) {
	return c.WriteToAddress(b, memberlist.Address{Addr: addr})
}
func (c *cutTransport) WriteToAddress(b []byte, a memberlist.Address) (time.Time, error) {
	if c.cutFrom(a.Addr) {
		return time.Now(), nil // lost on the way
	}
	return c.NetTransport.WriteToAddress(b, a)
}
func (c *cutTransport) DialTimeout(addr string, timeout time.Duration) (net.Conn, error) {
	return c.DialAddressTimeout(memberlist.Address{Addr: addr}, timeout)
}
func (c *cutTransport) DialAddressTimeout(a memberlist.Address, timeout time.Duration) (net.Conn, error) {
	if c.cutFrom(a.Addr) {
		return nil, errCut
	}
	return c.NetTransport.DialAddressTimeout(a, timeout)
}

// startCut runs a gossiper on 127.0.0.n behind partition p, with short
// timings and a member found dead forgotten after a second.
func startCut(t *testing.T, n int, p *partition, seeds ...string) *Gossiper {
	t.Helper()
	name := fmt.Sprintf("127.0.0.%d", n)
	tr := newCutTransport(t, name, 0, p)
	g, err := Start(Options{
		Name: name, Port: tr.GetAutoBindPort(), Seeds: seeds, Generation: 100, Transport: tr,
		States:        map[ApplicationState]string{HostID: fmt.Sprintf("host-%d", n), Status: StatusNormal + ",0"},
		ProbeInterval: 100 * time.Millisecond, PushPullInterval: 300 * time.Millisecond, GossipInterval: 50 * time.Millisecond,
		DeadGossipTime: time.Second, ReconnectInterval: 200 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	return g
}

// allSee waits until each gossiper sees each of the others alive or not.
func allSee(t *testing.T, what string, alive bool, gs ...*Gossiper) {
	t.Helper()
	for _, g := range gs {
		for _, o := range gs {
			if o == g {
				continue
			}
			eventually(t, what, func() (bool, string) {
				s := g.Endpoint(o.Name())
				if s == nil {
					return false, fmt.Sprintf("%s does not know %s", g.Name(), o.Name())
				}
				return s.Alive == alive, fmt.Sprintf("%s sees %s alive=%v", g.Name(), o.Name(), s.Alive)
			})
		}
	}
}

// TestPartitionHeals: after a partition long enough for memberlist to
// forget the other side, the two sides find each other again once it is
// healed, each reaching out to the members it sees down.
func TestPartitionHeals(t *testing.T) {
	var p partition
	g1 := startCut(t, 1, &p)
	seed := fmt.Sprintf("127.0.0.1:%d", g1.Port())
	g2, g3 := startCut(t, 2, &p, seed), startCut(t, 3, &p, seed)
	allSee(t, "the cluster formed", true, g1, g2, g3)

	p.split(map[string]int{"127.0.0.3": 1})
	allSee(t, "3 cut off from 1", false, g1, g3)
	allSee(t, "3 cut off from 2", false, g2, g3)
	time.Sleep(2 * time.Second) // past DeadGossipTime: memberlist alone no longer contacts the other side
	p.heal()
	allSee(t, "the partition healed", true, g1, g2, g3)
}

// TestRestartedSeedRejoins: a seed that restarts with only itself as seed
// (so it contacts nobody) is found again by the nodes that saw it go down.
func TestRestartedSeedRejoins(t *testing.T) {
	var p partition
	g1 := startCut(t, 1, &p)
	port := g1.Port()
	seed := fmt.Sprintf("127.0.0.1:%d", port)
	g2, g3 := startCut(t, 2, &p, seed), startCut(t, 3, &p, seed)
	allSee(t, "the cluster formed", true, g1, g2, g3)
	if err := g1.Close(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the seed seen down", func() (bool, string) { return sees(g2, "127.0.0.1", false, HostID, "host-1") })
	time.Sleep(2 * time.Second) // past DeadGossipTime
	tr := newCutTransport(t, "127.0.0.1", port, &p)
	restarted, err := Start(Options{Name: "127.0.0.1", Port: port, Seeds: []string{seed}, Generation: 200, Transport: tr,
		States:        map[ApplicationState]string{HostID: "host-1", Status: StatusNormal + ",0"},
		ProbeInterval: 100 * time.Millisecond, PushPullInterval: 300 * time.Millisecond, GossipInterval: 50 * time.Millisecond,
		DeadGossipTime: time.Second, ReconnectInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer restarted.Close()
	allSee(t, "the restarted seed back", true, restarted, g2, g3)
}
