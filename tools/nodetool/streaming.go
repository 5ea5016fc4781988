package nodetool

import (
	"fmt"
	"net/http"
	"net/url"
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
	long := *c
	long.http = &http.Client{}
	return long.call("POST", "/rebuild", q, nil)
}
