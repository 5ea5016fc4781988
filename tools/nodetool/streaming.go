package nodetool

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/sibyldb/sibyl/cqltype"
)

// netstatsSession is one of the admin API's /netstats sessions.
type netstatsSession struct {
	Operation string `json:"operation"`
	Session   string `json:"session"`
	Peer      string `json:"peer"`
	Receiving bool   `json:"receiving"`
	Sections  int    `json:"sections"`
	Done      int    `json:"sections_done"`
	Bytes     int64  `json:"bytes"`
	BytesDone int64  `json:"bytes_done"`
}

// percent is part of whole in per cent, 100 for an empty whole.
func percent(part, whole int64) float64 {
	if whole <= 0 {
		return 100
	}
	return 100 * float64(part) / float64(whole)
}

// netstats prints nodetool netstats: the node's mode, its streaming
// sessions (a section of an SSTable counts as a file) and its read repairs.
func (c *client) netstats(args []string) error {
	human := false
	for _, a := range args {
		if a != "-H" && a != "--human-readable" {
			return usef("Found unexpected parameters: %v", args)
		}
		human = true
	}
	var in struct {
		Mode                string            `json:"mode"`
		Sessions            []netstatsSession `json:"sessions"`
		ReadRepairAttempted int64             `json:"read_repair_attempted"`
	}
	if err := c.call("GET", "/netstats", nil, &in); err != nil {
		return err
	}
	bytes := func(b int64) string {
		if human {
			return size(b)
		}
		return fmt.Sprintf("%d bytes", b)
	}
	fmt.Fprintf(c.out, "Mode: %s\n", in.Mode)
	if len(in.Sessions) == 0 {
		fmt.Fprintln(c.out, "Not sending any streams.")
	}
	for _, s := range in.Sessions {
		fmt.Fprintf(c.out, "%s %s\n    /%s\n", s.Operation, s.Session, s.Peer)
		total := max(s.Bytes, s.BytesDone)
		verb, done := "Sending", "sent"
		if s.Receiving {
			verb, done = "Receiving", "received"
		}
		fmt.Fprintf(c.out, "        %s %d files, %s total. Already %s %d files (%.2f%%), %s total (%.2f%%)\n", verb, s.Sections, bytes(total), done,
			s.Done, percent(int64(s.Done), int64(s.Sections)), bytes(s.BytesDone), percent(s.BytesDone, total))
	}
	fmt.Fprintf(c.out, "Read Repair Statistics:\nAttempted: %d\nMismatch (Blocking): %d\nMismatch (Background): 0\n", in.ReadRepairAttempted, in.ReadRepairAttempted)
	return nil
}

// rebuild is nodetool rebuild [-ks keyspace] [src-dc-name]: it returns
// once the node has streamed its ranges, however long that takes.
func (c *client) rebuild(args []string) error {
	q := url.Values{}
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-ks" || a == "--keyspace":
			if i+1 == len(args) {
				return usef("Required values for option 'specific_keyspace' not provided")
			}
			q.Set("keyspace", args[i+1])
			i++
		case q.Has("dc"):
			return usef("Found unexpected parameters: %v", args[i:])
		default:
			q.Set("dc", a)
		}
	}
	return c.untimed().call("POST", "/rebuild", q, nil)
}

// untimed is c without a timeout, for a command that returns once the
// node has done it, however long that takes (rebuild, cleanup, ...).
func (c *client) untimed() *client {
	long := *c
	long.http = &http.Client{}
	return &long
}

// decommission is nodetool decommission [-f|--force]: it returns once
// the node has streamed its ranges away and left the ring.
func (c *client) decommission(args []string) error {
	q := url.Values{}
	for _, a := range args {
		if a != "-f" && a != "--force" {
			return usef("Found unexpected parameters: %v", args)
		}
		q.Set("force", "true")
	}
	return c.untimed().call("POST", "/decommission", q, nil)
}

// removenode is nodetool removenode <status>|<force>|<ID>: the removal
// of a dead node, by its host id, returns once its ranges have streamed.
func (c *client) removenode(args []string) error {
	if len(args) != 1 {
		return usef("Missing required parameter: removenode takes status, force or a host id")
	}
	if args[0] == "status" || args[0] == "force" {
		// force prints the status first, as Cassandra's does.
		var in struct {
			Status string `json:"status"`
		}
		if err := c.call("GET", "/removenode", nil, &in); err != nil {
			return err
		}
		fmt.Fprintln(c.out, in.Status)
		if args[0] == "status" {
			return nil
		}
		return c.call("POST", "/removenode", url.Values{"force": {"true"}}, nil)
	}
	return c.untimed().call("POST", "/removenode", url.Values{"host_id": {args[0]}}, nil)
}

// repair is nodetool repair [-pr] [-full] [-st token -et token]
// [-dc dc ...] [keyspace [tables...]]: it returns once every range has
// been compared and its differences streamed, and prints the report.
// Every repair is a full one: -full is taken, and so is its absence.
func (c *client) repair(args []string) error {
	q := url.Values{}
	var dcs, rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		value := func(name string) (string, error) {
			if i+1 == len(args) {
				return "", usef("Required values for option '%s' not provided", name)
			}
			i++
			return args[i], nil
		}
		var err error
		var v string
		switch a {
		case "-pr", "--partitioner-range":
			q.Set("pr", "true")
		case "-full", "--full", "-seq", "--sequential":
		case "-j", "--job-threads":
			_, err = value("job_threads")
		case "-st", "--start-token":
			if v, err = value("start_token"); err == nil {
				q.Set("st", v)
			}
		case "-et", "--end-token":
			if v, err = value("end_token"); err == nil {
				q.Set("et", v)
			}
		case "-dc", "--in-dc":
			if v, err = value("specific_dc"); err == nil {
				dcs = append(dcs, v)
			}
		default:
			if len(a) > 1 && a[0] == '-' {
				return usef("Unknown option: %s", a)
			}
			rest = append(rest, a)
		}
		if err != nil {
			return err
		}
	}
	if q.Has("st") != q.Has("et") {
		return usef("-st and -et go together")
	}
	if len(dcs) > 0 {
		q.Set("dc", strings.Join(dcs, ","))
	}
	if len(rest) > 0 {
		q.Set("keyspace", rest[0])
		if len(rest) > 1 {
			q.Set("tables", strings.Join(rest[1:], ","))
		}
	}
	var out struct {
		Lines []string `json:"lines"`
	}
	if err := c.untimed().call("POST", "/repair", q, &out); err != nil {
		return err
	}
	for _, l := range out.Lines {
		fmt.Fprintf(c.out, "[%s] %s\n", time.Now().Format("2006-01-02 15:04:05,000"), l)
	}
	return nil
}

// Cassandra's nodetool counts stream throughput in megabits (10^6 bits)
// a second unless told MiB.
const (
	bytesPerMegabit = 125_000
	bytesPerMiB     = 1 << 20
	// maxMegabits is the most megabits a second Cassandra takes.
	maxMegabits = math.MaxInt32 - 1
)

type streamThroughput struct {
	BytesPerSecond              int64 `json:"bytes_per_second"`
	EntireSSTableBytesPerSecond int64 `json:"entire_sstable_bytes_per_second"`
}

// getStreamThroughput is nodetool getstreamthroughput [-e | -m | -d]: the
// bound in whole megabits a second, refusing one that is not whole as
// Cassandra does; -d gives it exactly, -m in MiB, -e the entire SSTable
// bound in MiB.
func (c *client) getStreamThroughput(args []string) error {
	entire, mib, precise, values := streamThroughputFlags(args)
	if len(values) > 0 {
		return usef("Found unexpected parameters: %v", values)
	}
	if (entire && (mib || precise)) || (mib && precise) {
		return usef("You cannot use more than one flag with this command")
	}
	var tp streamThroughput
	if err := c.call("GET", "/streamthroughput", nil, &tp); err != nil {
		return err
	}
	label, bps := "Current stream throughput", tp.BytesPerSecond
	if entire {
		label, bps = "Current entire SSTable stream throughput", tp.EntireSSTableBytesPerSecond
	}
	megabits := float64(bps) / bytesPerMegabit
	switch {
	case bps <= 0:
		fmt.Fprintf(c.out, "%s: unlimited\n", label)
	case entire || mib:
		fmt.Fprintf(c.out, "%s: %s MiB/s\n", label, cqltype.JavaFloatText(float64(bps)/bytesPerMiB, 64))
	case precise:
		fmt.Fprintf(c.out, "%s: %s Mb/s\n", label, cqltype.JavaFloatText(megabits, 64))
	case megabits != math.Trunc(megabits):
		return errors.New("Use the -d flag to quiet this error and get the exact throughput in megabits/s")
	default:
		fmt.Fprintf(c.out, "%s: %d Mb/s\n", label, int64(megabits))
	}
	return nil
}

// streamThroughputFlags sorts get- and setstreamthroughput's arguments.
func streamThroughputFlags(args []string) (entire, mib, precise bool, values []string) {
	for _, a := range args {
		switch a {
		case "-e", "--entire-sstable-throughput":
			entire = true
		case "-m", "--mib":
			mib = true
		case "-d", "--precise-mbit":
			precise = true
		default:
			values = append(values, a)
		}
	}
	return entire, mib, precise, values
}

// setStreamThroughput is nodetool setstreamthroughput [-m | -e] value:
// megabits a second, or MiB with -m, or the entire SSTable bound in MiB
// with -e; 0 lifts the bound.
func (c *client) setStreamThroughput(args []string) error {
	entire, mib, precise, values := streamThroughputFlags(args)
	if precise {
		return usef("Found unexpected parameters: [-d]")
	}
	switch {
	case entire && mib:
		return usef("You cannot use -e and -m at the same time")
	case len(values) == 0:
		return usef("Required parameters are missing: stream_throughput")
	case len(values) > 1:
		return usef("Found unexpected parameters: %v", values[1:])
	}
	v, err := strconv.ParseInt(values[0], 10, 32)
	if err != nil {
		return usef("stream_throughput: can not convert %q to a int", values[0])
	}
	q := url.Values{}
	var bps int64
	if entire || mib {
		key := "stream_throughput_outbound"
		if entire {
			key = "entire_sstable_stream_throughput_outbound"
			q.Set("entire_sstable", "true")
		}
		if v < 0 {
			return usef("%s: %d MiB/s is negative", key, v)
		}
		if float64(v)*bytesPerMiB/bytesPerMegabit > maxMegabits {
			return usef("%s: %d is too large; it should be less than %d in megabits/s", key, v, math.MaxInt32)
		}
		bps = v * bytesPerMiB
	} else {
		if v < 0 || v > maxMegabits {
			return usef("Invalid data rate: %d megabits per second; stream_throughput_outbound and inter_dc_stream_throughput_outbound should be between 0 and %d in megabits per second", v, maxMegabits)
		}
		bps = v * bytesPerMegabit
	}
	q.Set("bytes_per_second", strconv.FormatInt(bps, 10))
	return c.call("POST", "/streamthroughput", q, nil)
}

// cleanup is nodetool cleanup [-j jobs] [keyspace [tables]]: it returns
// once the tables dropped what the node no longer replicates. The node
// cleans one SSTable at a time, so -j is taken and has no effect.
func (c *client) cleanup(args []string) error {
	var rest []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; a {
		case "-j", "--jobs":
			if i+1 == len(args) {
				return usef("Required values for option 'jobs' not provided")
			}
			if _, err := strconv.Atoi(args[i+1]); err != nil {
				return usef("jobs: can not convert %q to a int", args[i+1])
			}
			i++
		default:
			rest = append(rest, a)
		}
	}
	return c.untimed().tablesAction("/cleanup", rest)
}
