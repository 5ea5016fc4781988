package nodetool

import (
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// pendingHints is the admin API's /hints: one replica's hints.
type pendingHints struct {
	HostID     string `json:"host_id"`
	Address    string `json:"address"`
	Rack       string `json:"rack"`
	DataCenter string `json:"data_center"`
	Status     string `json:"status"`
	Files      int    `json:"total_files"`
	Newest     int64  `json:"newest"`
	Oldest     int64  `json:"oldest"`
}

// listPendingHints prints nodetool listpendinghints: a line per replica
// this node keeps hints for, its files' times in UTC.
func (c *client) listPendingHints(args []string) error {
	if len(args) > 0 {
		return usef("Found unexpected parameters: %v", args)
	}
	var in []pendingHints
	if err := c.call("GET", "/hints", nil, &in); err != nil {
		return err
	}
	if len(in) == 0 {
		fmt.Fprintln(c.out, "This node does not have any pending hints")
		return nil
	}
	stamp := func(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05,000") }
	rows := [][]string{{"Host ID", "Address", "Rack", "DC", "Status", "Total files", "Newest", "Oldest"}}
	for _, p := range in {
		rows = append(rows, []string{p.HostID, p.Address, p.Rack, p.DataCenter, p.Status, strconv.Itoa(p.Files), stamp(p.Newest), stamp(p.Oldest)})
	}
	fmt.Fprint(c.out, table(rows, " "))
	return nil
}

// truncateHints is nodetool truncatehints [endpoint].
func (c *client) truncateHints(args []string) error {
	switch len(args) {
	case 0:
		return c.call("POST", "/hints/truncate", nil, nil)
	case 1:
		return c.call("POST", "/hints/truncate", url.Values{"endpoint": {args[0]}}, nil)
	}
	return usef("Too many arguments for command 'truncatehints'.")
}

// statusHandoff is nodetool statushandoff.
func (c *client) statusHandoff([]string) error {
	var in struct {
		Enabled bool `json:"enabled"`
	}
	if err := c.call("GET", "/handoff", nil, &in); err != nil {
		return err
	}
	state := "not running"
	if in.Enabled {
		state = "running"
	}
	fmt.Fprintf(c.out, "Hinted handoff is %s\n", state)
	return nil
}

// handoff runs enablehandoff, disablehandoff, pausehandoff and
// resumehandoff.
func handoff(action string) func(c *client, args []string) error {
	return func(c *client, _ []string) error {
		return c.call("POST", "/handoff", url.Values{"action": {action}}, nil)
	}
}
