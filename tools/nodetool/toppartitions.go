package nodetool

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// The samplers of profileload, in Cassandra's order.
var samplers = []string{"READS", "WRITES", "LOCAL_READ_TIME", "WRITE_SIZE", "CAS_CONTENTIONS"}

// profileLoad is nodetool profileload (and toppartitions, its other
// name): [keyspace table duration] or [duration] or nothing (10 s of
// every table), with -s (summary capacity), -k (how many to list) and
// -a (the samplers); it samples the node's local reads and writes for
// the duration and prints each sampler's top in Cassandra's layout.
func (c *client) profileLoad(args []string) error {
	capacity, top, chosen := 256, 10, strings.Join(samplers, ",")
	var positional []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; a {
		case "-s", "-k", "-a":
			if i+1 >= len(args) {
				return usef("Required values for option '%s' not provided", a)
			}
			i++
			if a == "-a" {
				chosen = args[i]
				continue
			}
			v, err := strconv.Atoi(args[i])
			if err != nil {
				return usef("%s: can not convert \"%s\" to a int", a, args[i])
			}
			if a == "-s" {
				capacity = v
			} else {
				top = v
			}
		default:
			positional = append(positional, a)
		}
	}
	if n := len(positional); n != 0 && n != 1 && n != 3 {
		return usef("Invalid arguments, either [keyspace table duration] or [duration] or no args")
	}
	if top >= capacity {
		return usef("TopK count (-k) option must be smaller then the summary capacity (-s)")
	}
	query := url.Values{"capacity": {strconv.Itoa(capacity)}, "top": {strconv.Itoa(top)}, "duration": {"10000"}}
	duration := positional
	if len(positional) == 3 {
		query.Set("keyspace", positional[0])
		query.Set("table", positional[1])
		duration = positional[2:]
	}
	if len(duration) == 1 {
		if _, err := strconv.Atoi(duration[0]); err != nil {
			return usef("For input string: \"%s\"", duration[0])
		}
		query.Set("duration", duration[0])
	}
	var targets []string
	for _, s := range strings.Split(chosen, ",") {
		name := strings.ToUpper(strings.TrimSpace(s))
		if !slices.Contains(samplers, name) {
			return usef("'%s' sampler is not available from: [%s]", s, strings.Join(samplers, ", "))
		}
		targets = append(targets, name)
	}
	query.Set("samplers", strings.Join(targets, ","))
	type sample struct {
		Table, Value string
		Count, Error int64
	}
	var results map[string][]sample
	if err := c.call("POST", "/toppartitions", query, &results); err != nil {
		return err
	}
	first := true
	section := func(sampler, title string, header []string, row func(sample) []string) {
		if !slices.Contains(targets, sampler) {
			return
		}
		if !first {
			fmt.Fprintln(c.out)
		}
		first = false
		fmt.Fprintln(c.out, title+":")
		list := results[sampler]
		if len(list) == 0 {
			fmt.Fprintln(c.out, "   Nothing recorded during sampling period...")
			return
		}
		rows := [][]string{append([]string{"  "}, header...)}
		for _, s := range list {
			rows = append(rows, append([]string{"  "}, row(s)...))
		}
		fmt.Fprint(c.out, table(rows, " "))
	}
	for _, sampler := range []string{"READS", "WRITES", "CAS_CONTENTIONS"} {
		section(sampler, "Frequency of "+strings.ReplaceAll(strings.ToLower(sampler), "_", " ")+" by partition",
			[]string{"Table", "Partition", "Count", "+/-"}, func(s sample) []string {
				return []string{s.Table, s.Value, strconv.FormatInt(s.Count, 10), strconv.FormatInt(s.Error, 10)}
			})
	}
	section("WRITE_SIZE", "Max mutation size by partition", []string{"Table", "Partition", "Bytes"}, func(s sample) []string {
		return []string{s.Table, s.Value, strconv.FormatInt(s.Count, 10)}
	})
	section("LOCAL_READ_TIME", "Longest read query times", []string{"Query", "Microseconds"}, func(s sample) []string {
		return []string{s.Value, strconv.FormatInt(s.Count, 10)}
	})
	return nil
}
