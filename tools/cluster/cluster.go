package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gocql/gocql"
	"github.com/sibyldb/sibyl/tools/nodetool"
)

// Config is a cluster's shape, kept in its directory's cluster.json.
type Config struct {
	// Name is the cluster_name every node runs with; empty: the server's
	// default.
	Name        string `json:"name,omitempty"`
	Nodes       int    `json:"nodes"`
	Binary      string `json:"binary"` // the sibyl binary the nodes run
	NativePort  int    `json:"native_port"`
	AdminPort   int    `json:"admin_port"`
	GossipPort  int    `json:"gossip_port"`
	StoragePort int    `json:"storage_port"`
	// Places are the data centre and rack of the nodes added with them,
	// by node number; the others take the server's defaults.
	Places map[int]Place `json:"places,omitempty"`
	// Decommissioned are the nodes that left the ring: their directories
	// stay, and they are not started again.
	Decommissioned []int `json:"decommissioned,omitempty"`
	// PasswordAuth runs the nodes with PasswordAuthenticator and
	// CassandraAuthorizer (the default superuser cassandra/cassandra).
	PasswordAuth bool `json:"pwd_auth,omitempty"`
	// SSL runs them with TLS on every port and gossip sealed, under an
	// authority made in the cluster's pki/ directory; RequireClientAuth
	// asks clients for a certificate of it too.
	SSL               bool `json:"ssl,omitempty"`
	RequireClientAuth bool `json:"require_client_auth,omitempty"`
}

// member reports whether node k is in the cluster: not decommissioned.
func (c *Cluster) member(k int) bool { return !slices.Contains(c.Decommissioned, k) }

// members counts the nodes in the cluster.
func (c *Cluster) members() int { return c.Nodes - len(c.Decommissioned) }

// Place is where a node says it is: its data centre and rack (empty: the
// server's default).
type Place struct {
	DataCenter string `json:"dc,omitempty"`
	Rack       string `json:"rack,omitempty"`
}

// Cluster is a local cluster in a directory.
type Cluster struct {
	Dir string
	Config
	Out io.Writer
	// UpTimeout bounds the wait for a node to serve CQL (one that joins
	// streams its ranges first); default two minutes (sibyl cluster
	// --wait).
	UpTimeout time.Duration
}

// Open reads the cluster in dir (made by Up).
func Open(dir string, out io.Writer) (*Cluster, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "cluster.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no cluster in %s (sibyl cluster up makes one)", dir)
	}
	if err != nil {
		return nil, err
	}
	c := &Cluster{Dir: dir, Out: out}
	if err := json.Unmarshal(raw, &c.Config); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "cluster.json"), err)
	}
	return c, nil
}

// Address is node k's listen address.
func Address(k int) string { return "127.0.0." + strconv.Itoa(k) }

func (c *Cluster) nodeDir(k int) string { return filepath.Join(c.Dir, "node"+strconv.Itoa(k)) }
func (c *Cluster) pidFile(k int) string { return filepath.Join(c.nodeDir(k), "sibyl.pid") }

// LogFile is node k's log.
func (c *Cluster) LogFile(k int) string { return filepath.Join(c.nodeDir(k), "logs", "system.log") }

// Up makes the cluster (or takes the one in Dir) and starts its nodes one
// after another, each joining through node 1, then waits until every node
// sees them all up and lists the others in its system.peers. A cluster already running is left alone, with an
// error saying so.
func Up(c *Cluster) error {
	if c.Nodes < 1 || c.Nodes > 254 {
		return fmt.Errorf("--nodes: %d is not between 1 and 254", c.Nodes)
	}
	if existing, err := Open(c.Dir, c.Out); err == nil {
		if running := existing.running(); len(running) > 0 {
			return fmt.Errorf("the cluster in %s is already running (nodes %v); sibyl cluster down stops it", c.Dir, running)
		}
		c.Config = existing.Config // its shape is kept: the nodes keep their data
	}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return err
	}
	if err := c.save(); err != nil {
		return err
	}
	if err := c.writeSecurity(); err != nil {
		return err
	}
	for k := 1; k <= c.Nodes; k++ {
		if !c.member(k) {
			continue
		}
		if err := c.Start(k); err != nil {
			return err
		}
	}
	if err := c.waitAllUp(); err != nil {
		return err
	}
	fmt.Fprintf(c.Out, "%d nodes up in %s\n", c.members(), c.Dir)
	if c.secured() {
		fmt.Fprintf(c.Out, "connect with: sibyl cqlsh --cqlshrc %s\n", filepath.Join(c.Dir, "cqlshrc"))
	}
	return nil
}

// Add adds node N+1 to a running cluster of N nodes, in the data centre
// and rack of at (the server's defaults where empty), starts it (it joins
// through node 1, taking tokens of its own, and bootstraps: it streams the
// data of its ranges from the nodes giving them up, which must be running)
// and waits, as Up does, until every running node
// sees every running node up and lists every other in its system.peers.
func Add(c *Cluster, at Place) error {
	if c.Nodes >= 254 {
		return fmt.Errorf("the cluster has %d nodes, the most 127.0.0.x holds", c.Nodes)
	}
	if _, ok := c.pid(1); !ok {
		return fmt.Errorf("node1, the seed a new node joins through, is not running; sibyl cluster start node1 starts it")
	}
	c.Nodes++
	if at != (Place{}) {
		if c.Places == nil {
			c.Places = map[int]Place{}
		}
		c.Places[c.Nodes] = at
	}
	if err := c.save(); err != nil {
		return err
	}
	if err := c.Start(c.Nodes); err != nil {
		return err
	}
	if err := c.waitAllUp(); err != nil {
		return err
	}
	fmt.Fprintf(c.Out, "node%d added: %d nodes up in %s\n", c.Nodes, c.members(), c.Dir)
	return nil
}

// Decommission takes running node k out of the ring (nodetool
// decommission: it streams its ranges to the nodes that take them over
// and leaves), stops it, records it decommissioned, and waits until every
// running node sees the others up and no longer lists it in its
// system.peers. Its directory stays, for its log.
func Decommission(c *Cluster, k int, force bool) error {
	if _, ok := c.pid(k); !ok || !c.member(k) {
		return fmt.Errorf("node%d is not running; sibyl cluster start node%d starts it", k, k)
	}
	args := append(c.nodetoolArgs(k), "decommission")
	if force {
		args = append(args, "--force")
	}
	var errs strings.Builder
	if code := nodetool.Run(args, c.Out, &errs); code != 0 {
		return fmt.Errorf("nodetool decommission on node%d: %s", k, strings.TrimSpace(errs.String()))
	}
	c.Decommissioned = append(c.Decommissioned, k)
	if err := c.save(); err != nil {
		return err
	}
	if err := c.Stop(k); err != nil {
		return err
	}
	if err := c.waitAllUp(); err != nil {
		return err
	}
	fmt.Fprintf(c.Out, "node%d decommissioned: %d nodes up in %s\n", k, c.members(), c.Dir)
	return nil
}

// save writes the cluster's shape to its cluster.json.
func (c *Cluster) save() error {
	raw, _ := json.MarshalIndent(c.Config, "", "  ")
	return os.WriteFile(filepath.Join(c.Dir, "cluster.json"), raw, 0o644)
}

// Replace stands in for a dead node k with a new one at its address, as
// after a lost disk: node k must be stopped; its data directory is moved
// aside (to data.replaced-TIME, kept for a look), and the node starts
// empty with --replace-address its own address, taking its tokens and
// streaming its ranges from the other replicas; Replace returns once
// every running node sees it up.
func Replace(c *Cluster, k int) error {
	if k < 1 || k > c.Nodes || !c.member(k) {
		return fmt.Errorf("no node%d in this cluster", k)
	}
	if pid, ok := c.pid(k); ok {
		return fmt.Errorf("node%d is running (pid %d): only a dead node is replaced; sibyl cluster stop node%d first", k, pid, k)
	}
	data := filepath.Join(c.nodeDir(k), "data")
	aside := data + ".replaced-" + time.Now().Format("20060102T150405")
	if err := os.Rename(data, aside); err != nil {
		return fmt.Errorf("moving node%d's data aside: %w", k, err)
	}
	if err := c.start(k, "--replace-address", Address(k)); err != nil {
		return err
	}
	if err := c.waitAllUp(); err != nil {
		return err
	}
	fmt.Fprintf(c.Out, "node%d replaced (its old data in %s): %d nodes up in %s\n", k, aside, c.members(), c.Dir)
	return nil
}

// Start starts node k and waits until it serves CQL.
func (c *Cluster) Start(k int) error { return c.start(k) }

func (c *Cluster) start(k int, extra ...string) error {
	if k < 1 || k > c.Nodes {
		return fmt.Errorf("no node%d in this cluster of %d", k, c.Nodes)
	}
	if !c.member(k) {
		return fmt.Errorf("node%d was decommissioned: it does not rejoin the ring with its data (its directory, %s, is kept)", k, c.nodeDir(k))
	}
	if pid, ok := c.pid(k); ok {
		return fmt.Errorf("node%d is already running (pid %d)", k, pid)
	}
	if err := os.MkdirAll(filepath.Dir(c.LogFile(k)), 0o755); err != nil {
		return err
	}
	log, err := os.OpenFile(c.LogFile(k), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	args := []string{"server",
		"--listen-address", Address(k), "--data-dir", filepath.Join(c.nodeDir(k), "data"),
		"--seeds", Address(1), "--native-transport-port", strconv.Itoa(c.NativePort),
		"--admin-port", strconv.Itoa(c.AdminPort), "--gossip-port", strconv.Itoa(c.GossipPort),
		"--storage-port", strconv.Itoa(c.StoragePort)}
	if c.Name != "" {
		args = append(args, "--cluster-name", c.Name)
	}
	args = append(args, c.nodeArgs()...)
	args = append(args, extra...)
	if at := c.Places[k]; at.DataCenter != "" {
		args = append(args, "--dc", at.DataCenter)
	}
	if at := c.Places[k]; at.Rack != "" {
		args = append(args, "--rack", at.Rack)
	}
	cmd := exec.Command(c.Binary, args...)
	cmd.Stdout, cmd.Stderr = log, log
	// Its own session: the node outlives this command and the terminal's
	// Ctrl-C.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting node%d: %w", k, err)
	}
	if err := os.WriteFile(c.pidFile(k), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(c.upTimeout())
	for {
		if conn, err := net.DialTimeout("tcp", net.JoinHostPort(Address(k), strconv.Itoa(c.NativePort)), time.Second); err == nil {
			conn.Close()
			fmt.Fprintf(c.Out, "node%d up on %s (pid %d)\n", k, Address(k), cmd.Process.Pid)
			return nil
		}
		select {
		case err := <-exited:
			os.Remove(c.pidFile(k))
			return fmt.Errorf("node%d exited (%v); its log, %s, ends:\n%s", k, err, c.LogFile(k), tail(c.LogFile(k), 20))
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("node%d did not serve CQL within %s; see %s", k, c.upTimeout(), c.LogFile(k))
		}
	}
}

func (c *Cluster) upTimeout() time.Duration {
	if c.UpTimeout > 0 {
		return c.UpTimeout
	}
	return 2 * time.Minute
}

// waitAllUp waits until every running node sees every running node of
// the ring up (its admin API's status) and holds every other node of the
// ring, running or stopped, in its own system.peers, as a client that
// connects to it reads them (ccm's wait-other-notice): a client that
// connects the moment Up or Add returns sees the whole cluster through
// any node. A node that left the ring (decommissioned, removed) is in no
// one's view, running or not.
func (c *Cluster) waitAllUp() error {
	deadline := time.Now().Add(c.upTimeout())
	running := c.running()
	for _, k := range running {
		for {
			view, raw, err := c.ringView(k)
			want, up := 0, 0
			for _, j := range running {
				st, ok := view[Address(j)]
				if ok || c.member(j) {
					want++ // a running node of the cluster not seen yet counts
				}
				if ok && st == "Up" {
					up++
				}
			}
			peers := 0
			if err == nil && up == want {
				peers, err = c.peerCount(k)
			}
			if err == nil && up == want && peers == len(view)-1 {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("node%d sees %d of the %d nodes running up and %d of %d peers in system.peers after %s (%v); its view: %s",
					k, up, want, peers, len(view)-1, c.upTimeout(), err, raw)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	return nil
}

// peerCount is how many peers node k's system.peers holds, read as a
// driver reads it, from that node alone.
func (c *Cluster) peerCount(k int) (int, error) {
	cluster := gocql.NewCluster(Address(k))
	cluster.Port = c.NativePort
	cluster.DisableInitialHostLookup = true
	cluster.Events.DisableNodeStatusEvents, cluster.Events.DisableTopologyEvents, cluster.Events.DisableSchemaEvents = true, true, true
	cluster.Timeout, cluster.ConnectTimeout = 5*time.Second, 5*time.Second
	if err := c.secureSession(cluster); err != nil {
		return 0, err
	}
	s, err := cluster.CreateSession()
	if err != nil {
		return 0, err
	}
	defer s.Close()
	iter := s.Query("SELECT peer FROM system.peers").Iter()
	n := 0
	var peer string
	for iter.Scan(&peer) {
		n++
	}
	return n, iter.Close()
}

// ringView asks node k for the ring's nodes and whether each is up or
// down, and returns its whole answer too (for an error that says what it
// saw).
func (c *Cluster) ringView(k int) (map[string]string, string, error) {
	client, scheme, err := c.adminClient()
	if err != nil {
		return nil, "", err
	}
	resp, err := client.Get(scheme + net.JoinHostPort(Address(k), strconv.Itoa(c.AdminPort)) + "/status")
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, "", err
	}
	var nodes []struct {
		Address string `json:"address"`
		Status  string `json:"status"`
	}
	if err := json.Unmarshal(raw, &nodes); err != nil {
		return nil, string(raw), err
	}
	view := map[string]string{}
	for _, n := range nodes {
		view[n.Address] = n.Status
	}
	return view, string(raw), nil
}

// Stop stops node k cleanly (SIGTERM: it drains, flushes and tells the
// others) and waits for it to exit.
func (c *Cluster) Stop(k int) error {
	pid, ok := c.pid(k)
	if !ok {
		return fmt.Errorf("node%d is not running", k)
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return fmt.Errorf("stopping node%d (pid %d): %w", k, pid, err)
	}
	deadline := time.Now().Add(c.upTimeout())
	for alive(pid) {
		if time.Now().After(deadline) {
			return fmt.Errorf("node%d (pid %d) did not stop within %s", k, pid, c.upTimeout())
		}
		time.Sleep(50 * time.Millisecond)
	}
	os.Remove(c.pidFile(k))
	fmt.Fprintf(c.Out, "node%d stopped\n", k)
	return nil
}

// Down stops every running node, the last first.
func Down(c *Cluster) error {
	var errs []error
	for k := c.Nodes; k >= 1; k-- {
		if _, ok := c.pid(k); ok {
			errs = append(errs, c.Stop(k))
		}
	}
	return errors.Join(errs...)
}

// Status prints each node's process, then the ring as a running node
// sees it (nodetool status).
func Status(c *Cluster, errOut io.Writer) error {
	first := 0
	for k := 1; k <= c.Nodes; k++ {
		if pid, ok := c.pid(k); ok {
			fmt.Fprintf(c.Out, "node%d: running (pid %d) on %s\n", k, pid, Address(k))
			if first == 0 {
				first = k
			}
		} else {
			fmt.Fprintf(c.Out, "node%d: stopped\n", k)
		}
	}
	if first == 0 {
		return nil
	}
	fmt.Fprintln(c.Out)
	if code := nodetool.Run(append(c.nodetoolArgs(first), "status"), c.Out, errOut); code != 0 {
		return fmt.Errorf("nodetool status on node%d failed", first)
	}
	return nil
}

// running are the nodes whose process is alive.
func (c *Cluster) running() []int {
	var out []int
	for k := 1; k <= c.Nodes; k++ {
		if _, ok := c.pid(k); ok {
			out = append(out, k)
		}
	}
	return out
}

// pid is node k's process, if its pid file names a live one.
func (c *Cluster) pid(k int) (int, bool) {
	raw, err := os.ReadFile(c.pidFile(k))
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil || !alive(pid) {
		return 0, false
	}
	return pid, true
}

// alive reports whether a process exists and is not a zombie.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // no /proc: the signal said it exists
	}
	// The state follows the command name in parentheses; Z is a zombie.
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

// tail is the last n lines of a file.
func tail(path string, n int) string {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
