package node

import (
	"fmt"
	"strings"

	"github.com/sibyldb/sibyl/cqltype"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/mutation/request"
	"github.com/sibyldb/sibyl/schema"
)

// describeRead renders a partition read as Cassandra's read commands show
// themselves in the tombstone messages: SELECT * FROM ks.t WHERE k = v,
// the row limit, ALLOW FILTERING. The clustering slice is not shown.
func (n *Node) describeRead(id mutation.TableID, key []byte, q request.Slice) string {
	t, parts := n.splitKey(id, key)
	if t == nil {
		return fmt.Sprintf("SELECT * FROM %x WHERE key = 0x%x ALLOW FILTERING", id, key)
	}
	var b strings.Builder
	b.WriteString("SELECT * FROM " + cqltype.QuoteIdent(t.Keyspace) + "." + cqltype.QuoteIdent(t.Name) + " WHERE ")
	for i, c := range t.PartitionKey {
		if i > 0 {
			b.WriteString(" AND ")
		}
		b.WriteString(cqltype.QuoteIdent(c.Name) + " = " + c.Type.Format(parts[i]))
	}
	if q.Limit > 0 {
		fmt.Fprintf(&b, " LIMIT %d", q.Limit)
	}
	b.WriteString(" ALLOW FILTERING")
	return b.String()
}

// describeKey renders a partition key's values, comma separated.
func (n *Node) describeKey(id mutation.TableID, key []byte) string {
	t, parts := n.splitKey(id, key)
	if t == nil {
		return fmt.Sprintf("0x%x", key)
	}
	values := make([]string, len(parts))
	for i, c := range t.PartitionKey {
		values[i] = c.Type.Format(parts[i])
	}
	return strings.Join(values, ", ")
}

// splitKey finds a table and its partition key's values; nil when the
// table is gone or the key does not split.
func (n *Node) splitKey(id mutation.TableID, key []byte) (*schema.Table, [][]byte) {
	if n == nil { // the engine opened before the node was
		return nil, nil
	}
	s := n.Schema()
	if s == nil {
		return nil, nil
	}
	t := s.TableByID(id)
	if t == nil {
		return nil, nil
	}
	parts, err := t.SplitPartitionKey(key)
	if err != nil || len(parts) != len(t.PartitionKey) {
		return nil, nil
	}
	return t, parts
}
