package node

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sibyldb/sibyl/internal/topk"
	"github.com/sibyldb/sibyl/schema"
	"github.com/sibyldb/sibyl/storage"
)

// The samplers of nodetool toppartitions (profileload), Cassandra's names.
var samplerNames = []string{"READS", "WRITES", "LOCAL_READ_TIME", "WRITE_SIZE", "CAS_CONTENTIONS"}

// AdminSample is one partition (or, for LOCAL_READ_TIME, one query) of a
// sampler's top, as nodetool toppartitions prints it.
type AdminSample struct {
	Table string `json:"table"` // keyspace.table
	Value string `json:"value"` // the partition key, or the query
	Count int64  `json:"count"` // reads, writes or contentions; bytes; microseconds
	Error int64  `json:"error"` // how much Count may overcount
}

// maxSamplingDuration bounds a toppartitions run: the request waits for
// it.
const maxSamplingDuration = 10 * time.Minute

// adminTopPartitions samples the partitions the local reads and writes of
// the tables named (every table when none) touch for a duration, and
// returns each sampler's top, most first.
func (n *Node) adminTopPartitions(r *http.Request) (any, error) {
	q := r.URL.Query()
	duration, err := strconv.Atoi(q.Get("duration"))
	if err != nil || duration < 0 || time.Duration(duration)*time.Millisecond > maxSamplingDuration {
		return nil, badRequest("toppartitions: the duration %q is not a number of milliseconds up to %d", q.Get("duration"), maxSamplingDuration.Milliseconds())
	}
	capacity, err := strconv.Atoi(q.Get("capacity"))
	if err != nil || capacity < 1 || capacity > 1<<16 {
		return nil, badRequest("toppartitions: the capacity %q is not a number from 1 to 65536", q.Get("capacity"))
	}
	top, err := strconv.Atoi(q.Get("top"))
	if err != nil || top < 1 || top >= capacity {
		return nil, badRequest("TopK count (-k) option must be smaller then the summary capacity (-s)")
	}
	samplers := samplerNames
	if s := q.Get("samplers"); s != "" {
		samplers = nil
		for _, name := range strings.Split(s, ",") {
			name = strings.ToUpper(strings.TrimSpace(name))
			if !slices.Contains(samplerNames, name) {
				return nil, badRequest("'%s' sampler is not available from: [%s]", name, strings.Join(samplerNames, ", "))
			}
			samplers = append(samplers, name)
		}
	}
	tables, err := n.selectedTables(r)
	if err != nil {
		return nil, err
	}
	type sampled struct {
		t  *schema.Table
		st *storage.Table
		s  *storage.Sampling
	}
	var running []sampled
	stop := func() {
		for _, s := range running {
			s.st.StopSampling(s.s)
		}
	}
	for _, t := range tables {
		st, err := n.storageTable(t)
		if err != nil {
			stop()
			return nil, err
		}
		s, err := st.StartSampling(capacity)
		if err != nil {
			stop()
			return nil, badRequest("toppartitions: %v", err)
		}
		running = append(running, sampled{t, st, s})
	}
	select {
	case <-time.After(time.Duration(duration) * time.Millisecond):
	case <-r.Context().Done():
	case <-n.stopped:
	}
	stop()
	out := map[string][]AdminSample{}
	for _, name := range samplers {
		list := []AdminSample{}
		for _, s := range running {
			text := partitionKeyText
			if name == "LOCAL_READ_TIME" {
				text = readQueryText
			}
			for _, it := range samplerSummary(s.s, name).Top(top) {
				list = append(list, AdminSample{Table: s.t.Keyspace + "." + s.t.Name, Value: text(s.t, []byte(it.Item)),
					Count: it.Count, Error: it.Error})
			}
		}
		slices.SortStableFunc(list, func(a, b AdminSample) int { return cmp.Compare(b.Count, a.Count) })
		out[name] = list[:min(top, len(list))]
	}
	return out, nil
}

// samplerSummary is a sampling's summary of one of samplerNames.
func samplerSummary(s *storage.Sampling, name string) *topk.Summary {
	switch name {
	case "READS":
		return s.Reads
	case "WRITES":
		return s.Writes
	case "WRITE_SIZE":
		return s.WriteSize
	case "LOCAL_READ_TIME":
		return s.ReadTime
	}
	return s.CASContentions
}

// partitionKeyText is a partition key as Cassandra's samplers print it:
// its value, or for a composite key its components joined by ':' (a ':'
// within one escaped as '\:').
func partitionKeyText(t *schema.Table, key []byte) string {
	parts, err := t.SplitPartitionKey(key)
	switch {
	case err != nil:
		return fmt.Sprintf("0x%x", key)
	case len(parts) == 1:
		return t.PartitionKey[0].Type.Display(key)
	}
	texts := make([]string, len(parts))
	for i, p := range parts {
		texts[i] = strings.ReplaceAll(t.PartitionKey[i].Type.Display(p), ":", `\:`)
	}
	return strings.Join(texts, ":")
}

// readQueryText is the query of a local read of one partition, as
// Cassandra prints its slowest reads: the whole partition read by key.
func readQueryText(t *schema.Table, key []byte) string {
	var where []string
	values, _ := t.SplitPartitionKey(key) // a key the table wrote splits
	for i, v := range values {
		where = append(where, t.PartitionKey[i].Name+" = "+t.PartitionKey[i].Type.Format(v))
	}
	return "SELECT * FROM " + t.Keyspace + "." + t.Name + " WHERE " + strings.Join(where, " AND ")
}
