package nodetool

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/sibyldb/sibyl/internal/histogram"
)

// percentiles are a distribution's figures as the admin API sends them.
type percentiles struct {
	P50, P75, P95, P98, P99, Min, Max *float64
}

// rows are the figures in nodetool's row order (50%, 75%, 95%, 98%, 99%,
// Min, Max); NaN where there is none.
func (p percentiles) rows() [7]float64 {
	var out [7]float64
	for i, v := range []*float64{p.P50, p.P75, p.P95, p.P98, p.P99, p.Min, p.Max} {
		out[i] = nan
		if v != nil {
			out[i] = *v
		}
	}
	return out
}

var nan = math.NaN()

var rowLabels = [7]string{"50%", "75%", "95%", "98%", "99%", "Min", "Max"}

// proxyHistograms is nodetool proxyhistograms: the coordinator's recent
// latencies, as Cassandra 4.1 lays them out.
func (c *client) proxyHistograms([]string) error {
	var h struct {
		Read, Write, Range percentiles
		CASRead            percentiles `json:"cas_read"`
		CASWrite           percentiles `json:"cas_write"`
		ViewWrite          percentiles `json:"view_write"`
	}
	if err := c.call("GET", "/proxyhistograms", nil, &h); err != nil {
		return err
	}
	fmt.Fprintln(c.out, "proxy histograms")
	fmt.Fprintf(c.out, "%-10s%19s%19s%19s%19s%19s%19s\n", "Percentile", "Read Latency", "Write Latency", "Range Latency",
		"CAS Read Latency", "CAS Write Latency", "View Write Latency")
	fmt.Fprintf(c.out, "%-10s%19s%19s%19s%19s%19s%19s\n", "", "(micros)", "(micros)", "(micros)", "(micros)", "(micros)", "(micros)")
	cols := [6][7]float64{h.Read.rows(), h.Write.rows(), h.Range.rows(), h.CASRead.rows(), h.CASWrite.rows(), h.ViewWrite.rows()}
	for i, label := range rowLabels {
		fmt.Fprintf(c.out, "%-10s%19.2f%19.2f%19.2f%19.2f%19.2f%19.2f\n", label, cols[0][i], cols[1][i], cols[2][i], cols[3][i], cols[4][i], cols[5][i])
	}
	fmt.Fprintln(c.out)
	return nil
}

type tableHistograms struct {
	Keyspace       string
	Table          string
	ReadLatency    percentiles `json:"read_latency"`
	WriteLatency   percentiles `json:"write_latency"`
	SSTables       percentiles `json:"sstables_per_read"`
	SSTableCount   int         `json:"sstables"`
	PartitionSize  percentiles `json:"partition_size"`
	CellCount      percentiles `json:"cell_count"`
	SizesOverflown bool        `json:"partition_size_overflow"`
	CellsOverflown bool        `json:"cell_count_overflow"`
}

// tableHistograms is nodetool tablehistograms [<keyspace> <table> |
// <keyspace.table>]: a table's local latencies, SSTables per read, and its
// SSTables' partition sizes and cell counts; with no table, every table's
// (each once: Cassandra 4.1 prints a keyspace's tables as many times as it
// has tables, which 5.0 mended).
func (c *client) tableHistograms(args []string) error {
	var want []string
	switch len(args) {
	case 0:
	case 1:
		parts := strings.Split(args[0], ".")
		if len(parts) != 2 {
			return usef("tablehistograms requires keyspace and table name arguments")
		}
		want = parts
	case 2:
		want = args
	default:
		return usef("tablehistograms requires keyspace and table name arguments")
	}
	var all []tableHistograms
	if err := c.call("GET", "/tablehistograms", nil, &all); err != nil {
		return err
	}
	if want != nil {
		var found []tableHistograms
		for _, t := range all {
			if t.Keyspace == want[0] && t.Table == want[1] {
				found = append(found, t)
			}
		}
		if len(found) == 0 {
			return usef("Unknown table %s.%s", want[0], want[1])
		}
		all = found
	}
	for _, t := range all {
		c.printTableHistograms(t)
	}
	return nil
}

func (c *client) printTableHistograms(t tableHistograms) {
	sizes, cells := t.PartitionSize.rows(), t.CellCount.rows()
	if t.SSTableCount == 0 {
		fmt.Fprintln(c.out, "No SSTables exists, unable to calculate 'Partition Size' and 'Cell Count' percentiles")
	}
	if t.SizesOverflown {
		fmt.Fprintf(c.out, "Row sizes are larger than %d, unable to calculate percentiles\n", histogram.LastOffset(histogram.PartitionSizeBuckets))
	}
	if t.CellsOverflown {
		fmt.Fprintf(c.out, "Column counts are larger than %d, unable to calculate percentiles\n", histogram.LastOffset(histogram.CellCountBuckets))
	}
	read, write, sstables := t.ReadLatency.rows(), t.WriteLatency.rows(), t.SSTables.rows()
	fmt.Fprintf(c.out, "%s/%s histograms\n", t.Keyspace, t.Table)
	fmt.Fprintf(c.out, "%-10s%18s%18s%18s%18s%18s\n", "Percentile", "Read Latency", "Write Latency", "SSTables", "Partition Size", "Cell Count")
	fmt.Fprintf(c.out, "%-10s%18s%18s%18s%18s%18s\n", "", "(micros)", "(micros)", "", "(bytes)", "")
	for i, label := range rowLabels {
		fmt.Fprintf(c.out, "%-10s%18.2f%18.2f%18.2f%18.0f%18.0f\n", label, read[i], write[i], sstables[i], sizes[i], cells[i])
	}
	fmt.Fprintln(c.out)
}

// tpStats is nodetool tpstats: the node's stages, as Cassandra's thread
// pools, and how long each verb's messages waited for their handler.
func (c *client) tpStats(args []string) error {
	if len(args) > 0 {
		return usef("tpstats takes no arguments")
	}
	var st struct {
		Pools []struct {
			Name                       string
			Active, Pending, Completed int64
		}
		Messages []struct {
			Verb               string
			Dropped            int64
			P50, P95, P99, Max float64
		}
	}
	if err := c.call("GET", "/tpstats", nil, &st); err != nil {
		return err
	}
	pools := [][]string{{"Pool Name", "Active", "Pending", "Completed", "Blocked", "All time blocked"}}
	for _, p := range st.Pools {
		pools = append(pools, []string{p.Name, strconv.FormatInt(p.Active, 10), strconv.FormatInt(p.Pending, 10),
			strconv.FormatInt(p.Completed, 10), "0", "0"})
	}
	fmt.Fprint(c.out, table(pools, " "))
	fmt.Fprintln(c.out)
	fmt.Fprintln(c.out, "Latencies waiting in queue (micros) per dropped message types")
	messages := [][]string{{"Message type", "Dropped    ", "50%     ", "95%     ", "99%     ", "Max"}}
	for _, m := range st.Messages {
		messages = append(messages, []string{m.Verb, strconv.FormatInt(m.Dropped, 10), javaDouble(m.P50), javaDouble(m.P95),
			javaDouble(m.P99), javaDouble(m.Max)})
	}
	fmt.Fprint(c.out, table(messages, " "))
	return nil
}
