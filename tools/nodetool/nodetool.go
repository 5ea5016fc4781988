package nodetool

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sibyldb/sibyl/internal/tlsconf"
)

// Exit statuses, as nodetool's: 1 for bad use (and the failures the node
// reports as bad arguments), 2 for other errors.
const (
	exitBadUse  = 1
	exitFailure = 2
)

// globalOptions are nodetool's options before the command.
var globalOptions = []string{"-h", "--host", "-p", "--port", "-u", "--username", "-pw", "--password", "-pwf", "--password-file",
	"--truststore", "--ssl"}

// Run runs one nodetool command line (the global -h and -p, the command,
// its arguments) and returns the exit status.
func Run(args []string, stdout, stderr io.Writer) int {
	host, port := "127.0.0.1", 7199
	var user, password, passwordFile, truststore string
	useTLS := false
	// nodetool's own options come before the command; each but --ssl
	// takes a value.
	for len(args) > 0 && slices.Contains(globalOptions, args[0]) {
		if args[0] == "--ssl" {
			useTLS, args = true, args[1:]
			continue
		}
		if len(args) < 2 {
			return badUse(stdout, fmt.Sprintf("Required values for option '%s' not provided", args[0]))
		}
		switch args[0] {
		case "-h", "--host":
			host = args[1]
		case "-p", "--port":
			p, err := strconv.Atoi(args[1])
			if err != nil {
				fmt.Fprintf(stdout, "nodetool: For input string: %q\n", args[1])
				return exitBadUse
			}
			port = p
		case "-u", "--username":
			user = args[1]
		case "-pw", "--password":
			password = args[1]
		case "-pwf", "--password-file":
			passwordFile = args[1]
		case "--truststore":
			truststore = args[1]
		}
		args = args[2:]
	}
	if len(args) == 0 {
		return badUse(stdout, "Found unexpected parameters: []")
	}
	if passwordFile != "" && password == "" {
		p, err := passwordFor(passwordFile, user)
		if err != nil {
			fmt.Fprintf(stderr, "nodetool: %v\n", err)
			return exitBadUse
		}
		password = p
	}
	scheme := "http://"
	transport := http.DefaultTransport
	if useTLS {
		// The node's certificate checked against the truststore given, or
		// the system's authorities.
		cfg, err := tlsconf.ClientSettings{CAFile: truststore, VerifyServer: true}.ClientConfig()
		if err != nil {
			fmt.Fprintf(stderr, "nodetool: --truststore: %v\n", err)
			return exitBadUse
		}
		scheme, transport = "https://", &http.Transport{TLSClientConfig: cfg}
	}
	c := &client{base: scheme + net.JoinHostPort(host, strconv.Itoa(port)), host: host, port: port,
		out: stdout, errOut: stderr, http: &http.Client{Timeout: 10 * time.Minute, Transport: transport},
		user: user, password: password}
	cmd, rest := args[0], args[1:]
	run, ok := commands[cmd]
	if !ok {
		return badUse(stdout, fmt.Sprintf("Found unexpected parameters: [%s]", strings.Join(args, ", ")))
	}
	err := run(c, rest)
	var use *useError
	var conn *connError
	var exit *exitError
	var denied *deniedError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.code
	case errors.As(err, &denied):
		fmt.Fprintf(stderr, "nodetool: Failed to connect to '%s:%d' - SecurityException: '%s'.\n", host, port, denied.msg)
		return exitBadUse
	case errors.As(err, &conn):
		fmt.Fprintf(stderr, "nodetool: Failed to connect to '%s:%d' - ConnectException: 'Connection refused'.\n", host, port)
		return exitBadUse
	case errors.As(err, &use):
		return badUse(stdout, use.msg)
	}
	fmt.Fprintf(stderr, "error: %s\n-- StackTrace --\n%s\n", err, err)
	return exitFailure
}

func badUse(out io.Writer, msg string) int {
	fmt.Fprintf(out, "nodetool: %s\nSee 'nodetool help' or 'nodetool help <command>'.\n", msg)
	return exitBadUse
}

// exitError ends a command that has printed its own message.
type exitError struct{ code int }

func (e *exitError) Error() string { return "exit " + strconv.Itoa(e.code) }

// keyspaceExists asks the node.
func (c *client) keyspaceExists(ks string) bool {
	var stats []tableStats
	return c.call("GET", "/tablestats", url.Values{"keyspace": {ks}}, &stats) == nil
}

// useError is a failure nodetool reports as bad use (exit 1).
type useError struct{ msg string }

func (e *useError) Error() string { return e.msg }

func usef(format string, args ...any) error { return &useError{msg: fmt.Sprintf(format, args...)} }

// deniedError is a request the admin API refused for its credentials.
type deniedError struct{ msg string }

func (e *deniedError) Error() string { return e.msg }

// passwordFor reads a user's password from a file of "user password"
// lines, as nodetool's -pwf takes JMX's password file.
func passwordFor(path, user string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && !strings.HasPrefix(f[0], "#") && f[0] == user {
			return f[1], nil
		}
	}
	return "", fmt.Errorf("%s has no password for %q", path, user)
}

type connError struct{ err error }

func (e *connError) Error() string { return e.err.Error() }

type client struct {
	base, host     string
	port           int
	out, errOut    io.Writer
	http           *http.Client
	user, password string // HTTP basic credentials; none when user is ""
}

// call runs an admin API request; a refusal the node does not mark as a
// failure is bad use, anything else an error.
func (c *client) call(method, path string, query url.Values, into any) error {
	u := c.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequest(method, u, nil)
	if err != nil {
		return err
	}
	return c.do(req, into)
}

// postForm runs an admin API request whose arguments go in its body (a
// key, which a URL would leave in logs).
func (c *client) postForm(path string, form url.Values, into any) error {
	req, err := http.NewRequest("POST", c.base+path, strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return c.do(req, into)
}

// do sends a request with the client's credentials and reads its answer
// into into.
func (c *client) do(req *http.Request, into any) error {
	if c.user != "" {
		req.SetBasicAuth(c.user, c.password)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return &connError{err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error   string `json:"error"`
			Failure bool   `json:"failure"`
		}
		_ = json.Unmarshal(body, &e)
		if resp.StatusCode == http.StatusUnauthorized {
			return &deniedError{msg: e.Error}
		}
		if resp.StatusCode == http.StatusBadRequest && !e.Failure {
			return usef("%s", e.Error)
		}
		return errors.New(e.Error)
	}
	if into != nil {
		return json.Unmarshal(body, into)
	}
	return nil
}

// The admin API's answers (node/admin.go).
type status struct {
	Address    string   `json:"address"`
	DataCenter string   `json:"data_center"`
	Rack       string   `json:"rack"`
	Status     string   `json:"status"`
	State      string   `json:"state"`
	LoadBytes  int64    `json:"load_bytes"`
	Tokens     []string `json:"tokens"`
	HostID     string   `json:"host_id"`
	Ownership  float64  `json:"ownership"`
}

type info struct {
	status
	NativeTransport bool    `json:"native_transport_active"`
	GossipActive    bool    `json:"gossip_active"`
	Generation      int64   `json:"generation"`
	UptimeSeconds   int64   `json:"uptime_seconds"`
	HeapUsedMiB     float64 `json:"heap_used_mib"`
	HeapTotalMiB    float64 `json:"heap_total_mib"`
	OffHeapMiB      float64 `json:"off_heap_mib"`
	ChunkCache      struct {
		Entries, SizeBytes, CapacityBytes, Misses, Requests int64
		RecentHitRate                                       *float64
	} `json:"chunk_cache"`
}

type tableStats struct {
	Keyspace         string  `json:"keyspace"`
	Table            string  `json:"table"`
	SSTables         int     `json:"SSTables"`
	LiveBytes        int64   `json:"LiveBytes"`
	MemtableBytes    int64   `json:"MemtableBytes"`
	MemtableEntries  int     `json:"MemtableEntries"`
	Partitions       int64   `json:"Partitions"`
	Reads            int64   `json:"Reads"`
	SSTablesPerRead  float64 `json:"SSTablesPerRead"`
	Writes           int64   `json:"Writes"`
	BloomFilterBytes int64   `json:"BloomFilterBytes"`
	PendingFlushes   int     `json:"PendingFlushes"`
}

type tokenRange struct {
	Start     string   `json:"start_token"`
	End       string   `json:"end_token"`
	Endpoints []string `json:"endpoints"`
	Details   []struct {
		Host       string `json:"host"`
		DataCenter string `json:"data_center"`
		Rack       string `json:"rack"`
	} `json:"endpoint_details"`
}

type gossipEndpoint struct {
	Endpoint   string `json:"endpoint"`
	Port       int    `json:"port"`
	Generation int64  `json:"generation"`
	Heartbeat  int64  `json:"heartbeat"`
	States     []struct {
		Name    string `json:"name"`
		Version int64  `json:"version"`
		Value   string `json:"value"`
	} `json:"states"`
}

type snapshot struct {
	Tag       string `json:"tag"`
	Keyspace  string `json:"keyspace"`
	Table     string `json:"table"`
	Bytes     int64  `json:"bytes"`
	TrueBytes int64  `json:"true_bytes"`
}

var commands map[string]func(c *client, args []string) error

func init() {
	commands = map[string]func(c *client, args []string) error{
		"status":                  (*client).status,
		"info":                    (*client).info,
		"ring":                    (*client).ring,
		"describering":            (*client).describeRing,
		"gossipinfo":              (*client).gossipInfo,
		"getendpoints":            (*client).getEndpoints,
		"flush":                   func(c *client, a []string) error { return c.tablesAction("/flush", a) },
		"compact":                 func(c *client, a []string) error { return c.tablesAction("/compact", a) },
		"cleanup":                 (*client).cleanup,
		"tablestats":              (*client).tableStats,
		"cfstats":                 (*client).tableStats,
		"compactionstats":         (*client).compactionStats,
		"getcompactionthroughput": (*client).getCompactionThroughput,
		"setcompactionthroughput": (*client).setCompactionThroughput,
		"snapshot":                (*client).snapshot,
		"listsnapshots":           (*client).listSnapshots,
		"clearsnapshot":           (*client).clearSnapshot,
		"drain":                   func(c *client, _ []string) error { return c.call("POST", "/drain", nil, nil) },
		"version":                 (*client).version,
		"describecluster":         (*client).describeCluster,
		"cms":                     (*client).cms,
		"listpendinghints":        (*client).listPendingHints,
		"truncatehints":           (*client).truncateHints,
		"statushandoff":           (*client).statusHandoff,
		"enablehandoff":           handoff("enable"),
		"disablehandoff":          handoff("disable"),
		"pausehandoff":            handoff("pause"),
		"resumehandoff":           handoff("resume"),
		"netstats":                (*client).netstats,
		"rebuild":                 (*client).rebuild,
		"decommission":            (*client).decommission,
		"removenode":              (*client).removenode,
		"repair":                  (*client).repair,
		"getstreamthroughput":     (*client).getStreamThroughput,
		"gossipkeys":              (*client).gossipKeys,
		"setstreamthroughput":     (*client).setStreamThroughput,
		"gettraceprobability":     (*client).getTraceProbability,
		"proxyhistograms":         (*client).proxyHistograms,
		"tpstats":                 (*client).tpStats,
		"getlogginglevels":        (*client).getLoggingLevels,
		"setlogginglevel":         (*client).setLoggingLevel,
		"statusbinary":            running("/statusbinary"),
		"statusgossip":            running("/statusgossip"),
		"enablebinary":            func(c *client, _ []string) error { return c.call("POST", "/enablebinary", nil, nil) },
		"disablebinary":           func(c *client, _ []string) error { return c.call("POST", "/disablebinary", nil, nil) },
		"enablegossip":            func(c *client, _ []string) error { return c.call("POST", "/enablegossip", nil, nil) },
		"disablegossip":           func(c *client, _ []string) error { return c.call("POST", "/disablegossip", nil, nil) },
		"tablehistograms":         (*client).tableHistograms,
		"cfhistograms":            (*client).tableHistograms,
		"settraceprobability":     (*client).setTraceProbability,
		"profileload":             (*client).profileLoad,
		"toppartitions":           (*client).profileLoad,
	}
}

// size prints bytes as nodetool does (FileUtils.stringifyFileSize): the
// largest of TiB, GiB, MiB and KiB that fits, else bytes, with at most two
// decimals.
func size(b int64) string {
	units := []struct {
		name string
		n    float64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}}
	for _, u := range units {
		if float64(b) >= u.n {
			return twoDecimals(float64(b)/u.n) + " " + u.name
		}
	}
	return strconv.FormatInt(b, 10) + " bytes"
}

func twoDecimals(f float64) string {
	s := strconv.FormatFloat(math.Round(f*100)/100, 'f', 2, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// table lays rows out as nodetool's TableBuilder: every column padded to
// its widest cell, cells joined by sep.
func table(rows [][]string, sep string) string {
	widths := map[int]int{}
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], len(c))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		for i, c := range r {
			if i > 0 {
				b.WriteString(sep)
			}
			b.WriteString(c + strings.Repeat(" ", widths[i]-len(c)))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// nodes reads the ring's nodes for status and ring; known is false (and
// the message printed) when the keyspace argument names none.
func (c *client) nodes(args []string) (nodes []status, known bool, err error) {
	if len(args) > 0 && !c.keyspaceExists(args[0]) {
		fmt.Fprintf(c.out, "\nError: The keyspace %s, does not exist\n", args[0])
		return nil, false, nil
	}
	var query url.Values
	if len(args) > 0 {
		query = url.Values{"keyspace": {args[0]}}
	}
	if err := c.call("GET", "/status", query, &nodes); err != nil {
		return nil, false, err
	}
	return nodes, true, nil
}

func (c *client) status(args []string) error {
	nodes, known, err := c.nodes(args)
	if err != nil || !known {
		if err == nil {
			err = &exitError{code: exitBadUse} // status says so with exit 1, ring with 0
		}
		return err
	}
	byDC := map[string][]status{}
	for _, n := range nodes {
		byDC[n.DataCenter] = append(byDC[n.DataCenter], n)
	}
	dcs := slices.Sorted(func(yield func(string) bool) {
		for dc := range byDC {
			if !yield(dc) {
				return
			}
		}
	})
	rows := [][]string{}
	for _, dc := range dcs {
		rows = append(rows, []string{"--", "Address", "Load", "Tokens", "Owns (effective)", "Host ID", "Rack"})
		for _, n := range byDC[dc] {
			rows = append(rows, []string{n.Status[:1] + n.State[:1], n.Address, size(n.LoadBytes), strconv.Itoa(len(n.Tokens)),
				strconv.FormatFloat(n.Ownership*100, 'f', 1, 64) + "%", n.HostID, n.Rack})
		}
	}
	lines := strings.Split(strings.TrimSuffix(table(rows, "  "), "\n"), "\n")
	at := 0
	for _, dc := range dcs {
		title := "Datacenter: " + dc
		fmt.Fprintf(c.out, "%s\n%s\nStatus=Up/Down\n|/ State=Normal/Leaving/Joining/Moving\n", title, strings.Repeat("=", len(title)))
		for i := 0; i <= len(byDC[dc]); i++ {
			fmt.Fprintln(c.out, lines[at])
			at++
		}
		fmt.Fprintln(c.out)
	}
	var meta metadataState
	if err := c.call("GET", "/metadata", nil, &meta); err == nil && meta.Partitioned {
		fmt.Fprintf(c.out, "Note: this node has gone %.0fs without reaching a majority of the cluster metadata voters (partitioned); what it shows may be stale.\n",
			meta.SecondsWithoutLeader)
	}
	return nil
}

func (c *client) info(args []string) error {
	var in info
	if err := c.call("GET", "/info", nil, &in); err != nil {
		return err
	}
	line := func(label, value string) { fmt.Fprintf(c.out, "%-23s: %s\n", label, value) }
	line("ID", in.HostID)
	line("Gossip active", strconv.FormatBool(in.GossipActive))
	line("Native Transport active", strconv.FormatBool(in.NativeTransport))
	line("Load", size(in.LoadBytes))
	line("Generation No", strconv.FormatInt(in.Generation, 10))
	line("Uptime (seconds)", strconv.FormatInt(in.UptimeSeconds, 10))
	line("Heap Memory (MB)", fmt.Sprintf("%.2f / %.2f", in.HeapUsedMiB, in.HeapTotalMiB))
	line("Off Heap Memory (MB)", fmt.Sprintf("%.2f", in.OffHeapMiB))
	line("Data Center", in.DataCenter)
	line("Rack", in.Rack)
	line("Exceptions", "0")
	// Sibyl keeps no key, row or counter cache: they show as Cassandra
	// shows caches of no capacity. Its block cache is the chunk cache;
	// its misses are not timed.
	for _, name := range []string{"Key Cache", "Row Cache", "Counter Cache"} {
		line(name, "entries 0, size 0 bytes, capacity 0 bytes, 0 hits, 0 requests, NaN recent hit rate, 0 save period in seconds")
	}
	cc := in.ChunkCache
	rate := "NaN"
	if cc.RecentHitRate != nil {
		rate = strconv.FormatFloat(*cc.RecentHitRate, 'f', 3, 64)
	}
	line("Chunk Cache", fmt.Sprintf("entries %d, size %s, capacity %s, %d misses, %d requests, %s recent hit rate, NaN microseconds miss latency",
		cc.Entries, size(cc.SizeBytes), size(cc.CapacityBytes), cc.Misses, cc.Requests, rate))
	tokens := slices.Clone(in.Tokens)
	sortTokens(tokens)
	if len(tokens) == 1 || slices.Contains(args, "-T") || slices.Contains(args, "--tokens") {
		for _, t := range tokens {
			line("Token", t)
		}
	} else {
		line("Token", fmt.Sprintf("(invoke with -T/--tokens to see all %d tokens)", len(tokens)))
	}
	return nil
}

// sortTokens orders decimal tokens numerically.
func sortTokens(tokens []string) {
	slices.SortFunc(tokens, func(a, b string) int {
		x, _ := strconv.ParseFloat(a, 64)
		y, _ := strconv.ParseFloat(b, 64)
		if x != y {
			return map[bool]int{true: -1, false: 1}[x < y]
		}
		return strings.Compare(a, b)
	})
}

func (c *client) ring(args []string) error {
	nodes, known, err := c.nodes(args)
	if err != nil || !known {
		return err
	}
	width := 0
	for _, n := range nodes {
		width = max(width, len(n.Address)+len(":7000"))
	}
	format := "%-" + strconv.Itoa(width) + "s  %-12s%-7s%-8s%-16s%-20s%-44s\n"
	fmt.Fprintln(c.out)
	for _, n := range nodes {
		fmt.Fprintf(c.out, "Datacenter: %s\n==========\n", n.DataCenter)
		fmt.Fprintf(c.out, format, "Address", "Rack", "Status", "State", "Load", "Owns", "Token")
		tokens := slices.Clone(n.Tokens)
		sortTokens(tokens)
		if len(tokens) > 1 {
			fmt.Fprintf(c.out, format, "", "", "", "", "", "", tokens[len(tokens)-1])
		} else {
			fmt.Fprintln(c.out)
		}
		owns := strconv.FormatFloat(n.Ownership*100, 'f', 2, 64) + "%"
		for _, t := range tokens {
			fmt.Fprintf(c.out, format, n.Address, n.Rack, n.Status, n.State, size(n.LoadBytes), owns, t)
		}
		fmt.Fprintln(c.out)
		if len(tokens) > 1 {
			fmt.Fprint(c.out, "  Warning: \"nodetool ring\" is used to output all the tokens of a node.\n"+
				"  To view status related info of a node use \"nodetool status\" instead.\n\n")
		}
	}
	fmt.Fprint(c.out, "\n  ")
	return nil
}

func (c *client) describeRing(args []string) error {
	if len(args) != 1 {
		return usef("Required parameters are missing: keyspace")
	}
	fmt.Fprintf(c.out, "Schema Version:%s\nTokenRange: \n", c.schemaVersion())
	var ranges []tokenRange
	if err := c.call("GET", "/describering", url.Values{"keyspace": {args[0]}}, &ranges); err != nil {
		var use *useError
		if errors.As(err, &use) {
			return fmt.Errorf("No such keyspace: %s", args[0])
		}
		return err
	}
	for _, r := range ranges {
		var details []string
		for _, d := range r.Details {
			details = append(details, fmt.Sprintf("EndpointDetails(host:%s, datacenter:%s, rack:%s)", d.Host, d.DataCenter, d.Rack))
		}
		fmt.Fprintf(c.out, "\tTokenRange(start_token:%s, end_token:%s, endpoints:[%s], rpc_endpoints:[%s], endpoint_details:[%s])\n",
			r.Start, r.End, strings.Join(r.Endpoints, ", "), strings.Join(r.Endpoints, ", "), strings.Join(details, ", "))
	}
	return nil
}

// gossipInfo prints every node's gossiped state as nodetool 4.1 does:
// the endpoint with its messaging port, generation and heartbeat, then
// each state as NAME:version:value (tokens hidden).
func (c *client) gossipInfo([]string) error {
	var eps []gossipEndpoint
	if err := c.call("GET", "/gossipinfo", nil, &eps); err != nil {
		return err
	}
	for _, e := range eps {
		if e.Port == 0 {
			e.Port = 7000 // a node that does not say
		}
		fmt.Fprintf(c.out, "/%s:%d\n  generation:%d\n  heartbeat:%d\n", e.Endpoint, e.Port, e.Generation, e.Heartbeat)
		for _, s := range e.States {
			value := s.Value
			if s.Name == "TOKENS" {
				value = "<hidden>"
			}
			fmt.Fprintf(c.out, "  %s:%d:%s\n", s.Name, s.Version, value)
		}
	}
	return nil
}

// schemaVersion is the node's, for describering's header.
func (c *client) schemaVersion() string {
	var in struct {
		SchemaVersion string `json:"schema_version"`
	}
	_ = c.call("GET", "/info", nil, &in)
	return in.SchemaVersion
}

func (c *client) getEndpoints(args []string) error {
	if len(args) != 3 {
		return usef("getendpoints requires keyspace, table and partition key arguments")
	}
	var eps []string
	err := c.call("GET", "/endpoints", url.Values{"keyspace": {args[0]}, "table": {args[1]}, "key": {args[2]}}, &eps)
	if err != nil {
		return err
	}
	for _, e := range eps {
		fmt.Fprintln(c.out, e)
	}
	return nil
}

// tablesAction runs flush or compact on [keyspace [tables...]].
func (c *client) tablesAction(path string, args []string) error {
	q := url.Values{}
	if len(args) > 0 {
		q.Set("keyspace", args[0])
		for _, t := range args[1:] {
			q.Add("table", t)
		}
	}
	return c.call("POST", path, q, nil)
}

func (c *client) tableStats(args []string) error {
	var all []tableStats
	if err := c.call("GET", "/tablestats", nil, &all); err != nil {
		return err
	}
	// The filters: ks for all of ks, ks.t for t alone.
	wantKs := map[string]bool{}
	wantTable := map[string]map[string]bool{}
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			continue
		}
		ks, t, dotted := strings.Cut(a, ".")
		known := false
		for _, s := range all {
			known = known || s.Keyspace == ks
		}
		if !known {
			return usef("Unknown keyspace: %s", ks)
		}
		if !dotted {
			wantKs[ks] = true
			continue
		}
		found := false
		for _, s := range all {
			found = found || s.Keyspace == ks && s.Table == t
		}
		if !found {
			return usef("Unknown tables: [%s] in keyspace: %s", t, ks)
		}
		if wantTable[ks] == nil {
			wantTable[ks] = map[string]bool{}
		}
		wantTable[ks][t] = true
	}
	fmt.Fprintf(c.out, "Total number of tables: %d\n----------------\n", len(all))
	var keyspaces []string
	for _, s := range all {
		if !slices.Contains(keyspaces, s.Keyspace) {
			keyspaces = append(keyspaces, s.Keyspace)
		}
	}
	slices.Sort(keyspaces)
	for _, ks := range keyspaces {
		if len(args) > 0 && !wantKs[ks] && wantTable[ks] == nil {
			continue
		}
		var reads, writes int64
		var pending int
		var tables []tableStats
		for _, s := range all {
			if s.Keyspace == ks {
				reads, writes, pending = reads+s.Reads, writes+s.Writes, pending+s.PendingFlushes
				if wantKs[ks] || wantTable[ks] == nil || wantTable[ks][s.Table] {
					tables = append(tables, s)
				}
			}
		}
		fmt.Fprintf(c.out, "Keyspace : %s\n\tRead Count: %d\n\tWrite Count: %d\n\tPending Flushes: %d\n", ks, reads, writes, pending)
		slices.SortFunc(tables, func(a, b tableStats) int { return strings.Compare(a.Table, b.Table) })
		for _, t := range tables {
			for _, f := range [][2]string{
				{"Table", t.Table},
				{"SSTable count", strconv.Itoa(t.SSTables)},
				{"Space used (live)", strconv.FormatInt(t.LiveBytes, 10)},
				{"Space used (total)", strconv.FormatInt(t.LiveBytes, 10)},
				{"Number of partitions (estimate)", strconv.FormatInt(t.Partitions, 10)},
				{"Memtable cell count", strconv.Itoa(t.MemtableEntries)},
				{"Memtable data size", strconv.FormatInt(t.MemtableBytes, 10)},
				{"Local read count", strconv.FormatInt(t.Reads, 10)},
				{"Local write count", strconv.FormatInt(t.Writes, 10)},
				{"Pending flushes", strconv.Itoa(t.PendingFlushes)},
				{"Average SSTables per read", strconv.FormatFloat(t.SSTablesPerRead, 'f', 3, 64)},
				{"Bloom filter space used", strconv.FormatInt(t.BloomFilterBytes, 10)},
			} {
				fmt.Fprintf(c.out, "\t\t%s: %s\n", f[0], f[1])
			}
			fmt.Fprintln(c.out)
		}
		fmt.Fprintln(c.out, "----------------")
	}
	return nil
}

// compactionStats is nodetool compactionstats [-H] [-V]: the pending
// compactions, by table, then those running (-V: in sstable_tasks'
// columns; -H: sizes human readable) and the time left at the throughput
// limit.
func (c *client) compactionStats(args []string) error {
	human, vtable := false, false
	for _, a := range args {
		switch a {
		case "-H", "--human-readable":
			human = true
		case "-V", "--vtable":
			vtable = true
		default:
			return usef("Found unexpected parameters: [%s]", strings.Join(args, ", "))
		}
	}
	var st struct {
		Pending        int `json:"pending_tasks"`
		PendingByTable []struct {
			Keyspace, Table string
			Pending         int
		} `json:"pending_by_table"`
		Active []struct {
			ID, Kind, Keyspace, Table, Unit string
			Completed, Total                int64
			SSTables                        int
		} `json:"active"`
		ThroughputMiB int64 `json:"throughput_mib_per_sec"`
	}
	if err := c.call("GET", "/compactionstats", nil, &st); err != nil {
		return err
	}
	fmt.Fprintf(c.out, "pending tasks: %d\n", st.Pending)
	for _, p := range st.PendingByTable {
		fmt.Fprintf(c.out, "- %s.%s: %d\n", p.Keyspace, p.Table, p.Pending)
	}
	fmt.Fprintln(c.out)
	if len(st.Active) == 0 {
		return nil
	}
	rows := [][]string{{"id", "compaction type", "keyspace", "table", "completed", "total", "unit", "progress"}}
	if vtable {
		rows = [][]string{{"keyspace", "table", "task id", "completion ratio", "kind", "progress", "sstables", "total", "unit"}}
	}
	var remaining int64
	for _, a := range st.Active {
		completed, total := strconv.FormatInt(a.Completed, 10), strconv.FormatInt(a.Total, 10)
		if human {
			completed, total = size(a.Completed), size(a.Total)
		}
		percent := "n/a"
		if a.Total != 0 {
			percent = strconv.FormatFloat(float64(a.Completed)/float64(a.Total)*100, 'f', 2, 64) + "%"
		}
		if vtable {
			rows = append(rows, []string{a.Keyspace, a.Table, a.ID, percent, a.Kind, completed, strconv.Itoa(a.SSTables), total, a.Unit})
		} else {
			rows = append(rows, []string{a.ID, a.Kind, a.Keyspace, a.Table, completed, total, a.Unit, percent})
		}
		remaining += max(a.Total-a.Completed, 0)
	}
	fmt.Fprint(c.out, table(rows, " "))
	left := "n/a"
	if st.ThroughputMiB > 0 {
		secs := remaining / (st.ThroughputMiB << 20)
		left = fmt.Sprintf("%dh%02dm%02ds", secs/3600, secs%3600/60, secs%60)
	}
	fmt.Fprintf(c.out, "%25s%10s\n", "Active compaction remaining time : ", left)
	return nil
}

func (c *client) getCompactionThroughput(args []string) error {
	var tp map[string]int
	if err := c.call("GET", "/compactionthroughput", nil, &tp); err != nil {
		return err
	}
	if slices.Contains(args, "-d") {
		fmt.Fprintf(c.out, "Current compaction throughput: %d.0 MiB/s\n", tp["mib_per_sec"])
	} else {
		fmt.Fprintf(c.out, "Current compaction throughput: %d MB/s\n", tp["mib_per_sec"])
	}
	return nil
}

func (c *client) setCompactionThroughput(args []string) error {
	if len(args) != 1 {
		return usef("Required parameters are missing: compaction_throughput")
	}
	if _, err := strconv.Atoi(args[0]); err != nil {
		return usef("compaction_throughput: can not convert %q to a Integer", args[0])
	}
	return c.call("POST", "/compactionthroughput", url.Values{"value": {args[0]}}, nil)
}

func (c *client) getLoggingLevels([]string) error {
	var levels []struct{ Logger, Level string }
	if err := c.call("GET", "/logginglevels", nil, &levels); err != nil {
		return err
	}
	fmt.Fprintln(c.out)
	fmt.Fprintf(c.out, "%-50s%10s\n", "Logger Name", "Log Level")
	for _, l := range levels {
		fmt.Fprintf(c.out, "%-50s%10s\n", l.Logger, l.Level)
	}
	return nil
}

// setLoggingLevel is nodetool setlogginglevel [<logger> <level>]: with no
// arguments the level goes back to the node's first.
func (c *client) setLoggingLevel(args []string) error {
	q := url.Values{}
	if len(args) > 0 {
		q.Set("logger", args[0])
	}
	if len(args) == 2 {
		q.Set("level", args[1])
	}
	return c.call("POST", "/logginglevel", q, nil)
}

// running is a status command: running or not running, as nodetool
// statusbinary and statusgossip print it.
func running(path string) func(c *client, _ []string) error {
	return func(c *client, _ []string) error {
		var st struct{ Running bool }
		if err := c.call("GET", path, nil, &st); err != nil {
			return err
		}
		if st.Running {
			fmt.Fprintln(c.out, "running")
		} else {
			fmt.Fprintln(c.out, "not running")
		}
		return nil
	}
}

func (c *client) getTraceProbability([]string) error {
	var tp map[string]float64
	if err := c.call("GET", "/traceprobability", nil, &tp); err != nil {
		return err
	}
	fmt.Fprintf(c.out, "Current trace probability: %s\n", javaDouble(tp["probability"]))
	return nil
}

func (c *client) setTraceProbability(args []string) error {
	if len(args) != 1 {
		return usef("settraceprobability requires sampling_probability")
	}
	p, err := strconv.ParseFloat(args[0], 64)
	if err != nil {
		return usef("sampling_probability: can not convert %q to a Double", args[0])
	}
	if p < 0 || p > 1 {
		return usef("Trace probability must be between 0 and 1")
	}
	return c.call("POST", "/traceprobability", url.Values{"value": {args[0]}}, nil)
}

// javaDouble writes a double as Java's Double.toString does, as nodetool
// prints them: the shortest digits that read back, at least one after the
// point, and scientific notation (1.0E-4) below 10^-3 or from 10^7.
func javaDouble(v float64) string {
	if a := math.Abs(v); a != 0 && (a < 1e-3 || a >= 1e7) {
		mantissa, exponent, _ := strings.Cut(strconv.FormatFloat(v, 'e', -1, 64), "e")
		if !strings.Contains(mantissa, ".") {
			mantissa += ".0"
		}
		exp, _ := strconv.Atoi(exponent)
		return mantissa + "E" + strconv.Itoa(exp)
	}
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

func (c *client) snapshot(args []string) error {
	tag := strconv.FormatInt(time.Now().UnixMilli(), 10)
	var table string
	var keyspaces []string
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-t", "--tag":
			if i+1 < len(args) {
				tag, i = args[i+1], i+1
			}
		case "-cf", "--column-family", "--table":
			if i+1 < len(args) {
				table, i = args[i+1], i+1
			}
		default:
			keyspaces = append(keyspaces, args[i])
		}
	}
	target := "all keyspaces"
	if len(keyspaces) > 0 {
		target = strings.Join(keyspaces, ", ")
	}
	fmt.Fprintf(c.out, "Requested creating snapshot(s) for [%s] with snapshot name [%s] and options {skipFlush=false}\n", target, tag)
	if strings.Contains(tag, "/") {
		return errors.New("Snapshot name cannot contain /")
	}
	if table != "" && len(keyspaces) != 1 {
		return errors.New("When specifying the table for a snapshot, you must specify one and only one keyspace")
	}
	if len(keyspaces) == 0 {
		keyspaces = []string{""}
	}
	for _, ks := range keyspaces {
		q := url.Values{"tag": {tag}}
		if ks != "" {
			q.Set("keyspace", ks)
			if err := c.call("POST", "/flush", url.Values{"keyspace": {ks}}, nil); err != nil {
				var use *useError
				if errors.As(err, &use) {
					return usef("Keyspace %s does not exist", ks)
				}
				return err
			}
		}
		if table != "" {
			q.Set("table", table)
		}
		if err := c.call("POST", "/snapshot", q, nil); err != nil {
			var use *useError
			switch {
			case errors.As(err, &use) && strings.HasPrefix(use.msg, "Snapshot "):
				return errors.New(use.msg)
			case errors.As(err, &use) && strings.HasPrefix(use.msg, "Keyspace ["):
				return usef("Keyspace %s does not exist", ks)
			}
			return err
		}
	}
	fmt.Fprintf(c.out, "Snapshot directory: %s\n", tag)
	return nil
}

func (c *client) listSnapshots([]string) error {
	var snaps []snapshot
	if err := c.call("GET", "/snapshots", nil, &snaps); err != nil {
		return err
	}
	fmt.Fprintln(c.out, "Snapshot Details: ")
	if len(snaps) == 0 {
		fmt.Fprintln(c.out, "There are no snapshots")
		return nil
	}
	rows := [][]string{{"Snapshot name", "Keyspace name", "Column family name", "True size", "Size on disk"}}
	var total int64
	for _, s := range snaps {
		rows = append(rows, []string{s.Tag, s.Keyspace, s.Table, size(s.TrueBytes), size(s.Bytes)})
		total += s.TrueBytes
	}
	fmt.Fprint(c.out, table(rows, " "))
	fmt.Fprintf(c.out, "\nTotal TrueDiskSpaceUsed: %s\n\n", size(total))
	return nil
}

func (c *client) clearSnapshot(args []string) error {
	var tag string
	all := false
	var keyspaces []string
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-t", "--tag":
			if i+1 < len(args) {
				tag, i = args[i+1], i+1
			}
		case "--all":
			all = true
		default:
			keyspaces = append(keyspaces, args[i])
		}
	}
	switch {
	case tag == "" && !all:
		return errors.New("Specify snapshot name or --all")
	case tag != "" && all:
		return errors.New("Specify only one of snapshot name or --all")
	}
	target := "all keyspaces"
	if len(keyspaces) > 0 {
		target = strings.Join(keyspaces, ", ")
	}
	what := "snapshot name [" + tag + "]"
	if all {
		what = "[all snapshots]"
	}
	fmt.Fprintf(c.out, "Requested clearing snapshot(s) for [%s] with %s\n", target, what)
	if len(keyspaces) == 0 {
		keyspaces = []string{""}
	}
	for _, ks := range keyspaces {
		q := url.Values{"tag": {tag}}
		if all {
			q.Set("all", "true")
		}
		if ks != "" {
			q.Set("keyspace", ks)
		}
		if err := c.call("POST", "/clearsnapshot", q, nil); err != nil {
			var use *useError
			if !errors.As(err, &use) { // an unknown keyspace clears nothing, quietly
				return err
			}
		}
	}
	return nil
}

// gossipKeys lists the fingerprints of the node's gossip keys (the
// sealing one first), or installs, uses or removes one: gossipkeys
// [install|use|remove KEY].
func (c *client) gossipKeys(args []string) error {
	var keys []string
	switch {
	case len(args) == 0 || len(args) == 1 && args[0] == "list":
		if err := c.call("GET", "/gossipkeys", nil, &keys); err != nil {
			return err
		}
	case len(args) == 2 && (args[0] == "install" || args[0] == "use" || args[0] == "remove"):
		if err := c.postForm("/gossipkeys", url.Values{"action": {args[0]}, "key": {args[1]}}, &keys); err != nil {
			return err
		}
	default:
		return usef("gossipkeys takes list, or install, use or remove and a base64 key")
	}
	for i, k := range keys {
		mark := ""
		if i == 0 {
			mark = " (seals)"
		}
		fmt.Fprintf(c.out, "%s%s\n", k, mark)
	}
	return nil
}

func (c *client) version([]string) error {
	var v map[string]string
	if err := c.call("GET", "/version", nil, &v); err != nil {
		return err
	}
	fmt.Fprintf(c.out, "ReleaseVersion: %s\n", v["release_version"])
	return nil
}
