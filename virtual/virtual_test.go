package virtual

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/sibyldb/sibyl/commitlog"
	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/schema"
	"github.com/sibyldb/sibyl/storage"
)

// testTable is a virtual table of a composite partition key, two
// clustering columns (one descending) and a collection.
func testTable(t *testing.T) *schema.Table {
	t.Helper()
	col := func(name string, typ *cqltype.Type, kind schema.ColumnKind, pos int) *schema.Column {
		return &schema.Column{Name: name, Type: typ, Kind: kind, Position: pos}
	}
	desc := col("c2", cqltype.IntType, schema.Clustering, 1)
	desc.Descending = true
	def, err := schema.NewTable(schema.ViewsKeyspace, "model", schema.SystemTableID(schema.ViewsKeyspace, "model"), []*schema.Column{
		col("k1", cqltype.TextType, schema.PartitionKey, 0), col("k2", cqltype.IntType, schema.PartitionKey, 1),
		col("c1", cqltype.TextType, schema.Clustering, 0), desc,
		col("v", cqltype.BigintType, schema.Regular, -1),
		col("m", cqltype.MapOf(cqltype.TextType, cqltype.TextType, true), schema.Regular, -1),
	}, schema.DefaultTableParams())
	if err != nil {
		t.Fatal(err)
	}
	return def
}

// randomRows are rows of testTable, some of them sharing a primary key.
func randomRows(r *rand.Rand) []Row {
	var rows []Row
	for range r.IntN(60) {
		row := Row{"k1": Text(fmt.Sprint("p", r.IntN(6))), "k2": Int(r.IntN(2)),
			"c1": Text(fmt.Sprint("c", r.IntN(4))), "c2": Int(r.IntN(3))}
		if r.IntN(4) > 0 {
			row["v"] = Bigint(r.Int64())
		}
		if r.IntN(2) == 0 {
			row["m"] = schema.TextMap(map[string]string{"a": fmt.Sprint(r.IntN(9)), fmt.Sprint("b", r.IntN(3)): "x"})
		}
		rows = append(rows, row)
	}
	return rows
}

// storedModel holds rows in a real engine table, written in order with
// rising timestamps: what a virtual table's reads must return.
func storedModel(t *testing.T, def *schema.Table, rows []Row) *storage.Table {
	t.Helper()
	e, err := storage.Open(storage.Options{FS: vfs.NewMem(), DataDir: "data",
		CommitLog: commitlog.Options{Dir: "cl", SyncMode: commitlog.SyncBatch}, DisableAutoCompaction: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	st, err := e.OpenTable(storage.TableOptions{ID: def.ID, Keyspace: def.Keyspace, Name: def.Name})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Recover(); err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		m, err := def.InsertMutation(r, &schema.CellWriter{Timestamp: int64(i + 1)})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Apply(m); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// TestReadsMatchAStoredTable checks partition reads of a virtual table
// against the same rows in the engine: every slice, direction and limit
// returns the same partition.
func TestReadsMatchAStoredTable(t *testing.T) {
	def := testTable(t)
	for seed := range uint64(30) {
		r := rand.New(rand.NewPCG(seed, 7))
		rows := randomRows(r)
		v := New(partitioner.Murmur3(), Table{Def: def, Rows: func() ([]Row, error) { return rows, nil }})
		model := storedModel(t, def, rows)
		for range 40 {
			key, err := def.StatementKey([][]byte{Text(fmt.Sprint("p", r.IntN(7))), Int(r.IntN(2))})
			if err != nil {
				t.Fatal(err)
			}
			q := request.Slice{Limit: r.IntN(4), Reverse: r.IntN(2) == 0}
			if r.IntN(2) == 0 {
				prefix, err := def.ClusteringLayout().Encode(nil, [][]byte{Text(fmt.Sprint("c", r.IntN(4)))})
				if err != nil {
					t.Fatal(err)
				}
				q.Start = mutation.StartBound(prefix, r.IntN(2) == 0)
			}
			got, err := v.ReadPartition(def, request.PartitionRead{Key: key, Slice: q})
			if err != nil {
				t.Fatal(err)
			}
			want, err := model.ReadPartition(key, q)
			if err != nil {
				t.Fatal(err)
			}
			if want.IsEmpty() {
				want = nil
			}
			if render(got) != render(want) {
				t.Fatalf("seed %d: read %x %+v:\n got %s\nwant %s", seed, key, q, render(got), render(want))
			}
		}
	}
}

// TestScansMatchAStoredTable checks scans against the engine's: a whole
// scan returns the same partitions, ordered by key; pages resumed after the last
// partition, and token bounds, return exactly the rows of the whole scan
// they cover.
func TestScansMatchAStoredTable(t *testing.T) {
	def := testTable(t)
	p := partitioner.Murmur3()
	for seed := range uint64(30) {
		r := rand.New(rand.NewPCG(seed, 11))
		rows := randomRows(r)
		v := New(p, Table{Def: def, Rows: func() ([]Row, error) { return rows, nil }})
		want, err := storedModel(t, def, rows).Scan(storage.ScanQuery{})
		if err != nil {
			t.Fatal(err)
		}
		// The same partitions, in a virtual table's order: by key.
		slices.SortFunc(want, func(a, b *request.Partition) int { return schema.CompareVirtualKeys(def, a.Key, b.Key) })
		got, err := v.Scan(def, request.RangeRead{})
		if err != nil {
			t.Fatal(err)
		}
		if render(got...) != render(want...) {
			t.Fatalf("seed %d: whole scan:\n got %s\nwant %s", seed, render(got...), render(want...))
		}
		// Pages of whole partitions, each after the last one's key, with a
		// per-partition limit: the first rows of every partition.
		perPartition := 1 + r.IntN(3)
		var paged []*request.Partition
		var after []byte
		for pages := 0; ; pages++ {
			if pages > len(want)+1 {
				t.Fatalf("seed %d: %d pages for %d partitions: the pages do not move on", seed, pages, len(want))
			}
			page, err := v.Scan(def, request.RangeRead{Limit: 1 + r.IntN(5), PerPartitionLimit: perPartition, After: after})
			if err != nil {
				t.Fatal(err)
			}
			if len(page) == 0 {
				break
			}
			for _, part := range page {
				if len(part.Rows) > perPartition {
					t.Fatalf("seed %d: %d rows in a partition, limit %d", seed, len(part.Rows), perPartition)
				}
			}
			last := page[len(page)-1]
			if n := len(paged); n > 0 && slices.Equal(paged[n-1].Key, page[0].Key) {
				paged[n-1].Rows = append(paged[n-1].Rows, page[0].Rows...)
				page = page[1:]
			}
			paged = append(paged, page...)
			after = last.Key
		}
		if len(paged) != len(want) {
			t.Fatalf("seed %d: pages gave %d partitions, the scan %d", seed, len(paged), len(want))
		}
		for i, part := range paged {
			if !slices.Equal(part.Key, want[i].Key) {
				t.Fatalf("seed %d: partition %d is %x, want %x", seed, i, part.Key, want[i].Key)
			}
		}
		// Token bounds: From inclusive, To exclusive.
		if len(want) > 0 {
			from := p.Token(want[r.IntN(len(want))].Key)
			to := p.Token(want[r.IntN(len(want))].Key)
			bounded, err := v.Scan(def, request.RangeRead{From: &from, To: &to})
			if err != nil {
				t.Fatal(err)
			}
			var inside []*request.Partition
			for _, part := range want {
				tok := p.Token(part.Key)
				if partitioner.Compare(tok, from) >= 0 && partitioner.Compare(tok, to) < 0 {
					inside = append(inside, part)
				}
			}
			if render(bounded...) != render(inside...) {
				t.Fatalf("seed %d: scan of [%v, %v):\n got %s\nwant %s", seed, from, to, render(bounded...), render(inside...))
			}
		}
	}
}

// TestVirtualSchemaDescribesTheVirtualTables checks system_virtual_schema
// against the definitions: every virtual table, and every column with
// its type.
func TestVirtualSchemaDescribesTheVirtualTables(t *testing.T) {
	v := New(partitioner.Murmur3())
	parts, err := v.Scan(schema.VirtualColumnsTable, request.RangeRead{})
	if err != nil {
		t.Fatal(err)
	}
	columns := map[string]string{}
	for _, p := range parts {
		for _, r := range p.Rows {
			cells, err := schema.VirtualColumnsTable.RowCells(p.Key, r.Clustering, r.Row, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			name := string(p.Key) + "." + string(cells["table_name"].Value) + "." + string(cells["column_name"].Value)
			columns[name] = string(cells["type"].Value)
		}
	}
	want := map[string]string{
		"system_views.local_read_latency.p99th_ms":       "double",
		"system_views.clients.client_options":            "frozen<map<text, text>>",
		"system_views.sstable_tasks.task_id":             "timeuuid",
		"system_virtual_schema.columns.position":         "int",
		"system_views.max_partition_size.mebibytes":      "bigint",
		"system_views.thread_pools.active_tasks":         "int",
		"system_views.tombstones_per_read.p50th":         "double",
		"system_views.settings.value":                    "text",
		"system_views.caches.recent_hit_rate_per_second": "bigint",
	}
	for k, typ := range want {
		if columns[k] != typ {
			t.Errorf("column %s: type %q, want %q", k, columns[k], typ)
		}
	}
	total := 0
	for _, ks := range schema.VirtualKeyspaces() {
		for _, tbl := range ks.Tables {
			total += len(tbl.Columns)
		}
	}
	if len(columns) != total {
		t.Errorf("%d columns described, the definitions have %d", len(columns), total)
	}
}

// render is what a read returned, in a form two reads compare by: each
// partition's key, then each row's clustering, liveness and cells.
func render(parts ...*request.Partition) string {
	var b strings.Builder
	for _, p := range parts {
		if p == nil {
			b.WriteString("nil\n")
			continue
		}
		fmt.Fprintf(&b, "partition %x\n", p.Key)
		rows := p.Rows
		if p.Static != nil {
			rows = append([]request.Row{{Clustering: []byte("static"), Row: p.Static}}, rows...)
		}
		for _, r := range rows {
			fmt.Fprintf(&b, "  row %x marker %d\n", r.Clustering, r.Row.Liveness.Timestamp)
			for _, c := range r.Row.Cells {
				fmt.Fprintf(&b, "    %s %x = %x @%d\n", c.Column, c.Path, c.Value, c.Timestamp)
			}
		}
	}
	return b.String()
}
