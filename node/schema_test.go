package node

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sibyldb/sibyl/cql/exec"
	"github.com/sibyldb/sibyl/schema"
)

// TestStoredOptionItCannotUse writes into system_schema, as an older build
// would have, a table whose compaction sub-option does not read: the node
// starts, logs the table and the option, and runs the table with the
// default compaction.
func TestStoredOptionItCannotUse(t *testing.T) {
	dir := t.TempDir()
	n, err := Open(Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.NewSession(n).Run(`CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
		CREATE TABLE ks.t (k int PRIMARY KEY, v text);
		INSERT INTO ks.t (k, v) VALUES (1, 'one')`); err != nil {
		t.Fatal(err)
	}
	tbl, err := n.Schema().Table("ks", "t")
	if err != nil {
		t.Fatal(err)
	}
	bad := *tbl
	bad.Options.Compaction = map[string]string{"class": schema.SizeTieredClass, "min_threshold": "abc", "max_threshold": "32"}
	bad.Options.SpeculativeRetry = "sometimes"
	ms, err := schema.TableMutations(&bad, &schema.CellWriter{Timestamp: time.Now().UnixMicro() + 1, Now: time.Now().Unix()})
	if err != nil {
		t.Fatal(err)
	}
	n.schemaMu.Lock()
	for _, m := range ms {
		if err := n.engine.Apply(m); err != nil {
			t.Fatal(err)
		}
	}
	n.schemaMu.Unlock()
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	logger := zerolog.New(&log)
	n, err = Open(Config{DataDir: dir, Logger: &logger})
	if err != nil {
		t.Fatalf("a stored option the node cannot use keeps it from starting: %v", err)
	}
	defer n.Close()
	for _, want := range []string{`"definition":"ks.t","option":"compaction"`, "Invalid value abc for 'min_threshold'",
		`"definition":"ks.t","option":"speculative_retry"`, "Invalid value sometimes for option 'speculative_retry'"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, log.String())
		}
	}
	got, err := n.Schema().Table("ks", "t")
	if err != nil {
		t.Fatal(err)
	}
	if got.Compaction.MinThreshold != 4 || got.Options.Compaction["min_threshold"] != "4" || got.Options.SpeculativeRetry != "99p" {
		t.Fatalf("the table runs with %+v, options %v %q", got.Compaction, got.Options.Compaction, got.Options.SpeculativeRetry)
	}
	res, err := exec.NewSession(n).Run("SELECT v FROM ks.t WHERE k = 1")
	if err != nil || len(res[0].Rows) != 1 {
		t.Fatalf("the table's row: %v, %v", res, err)
	}
}

// TestCreateTableWhoseFilesCannotBeMadeIsUndone creates a table where its
// directory cannot be made (a file stands where the keyspace's directory
// goes): the statement fails, the table is not in the schema, and once the
// way is clear the same statement works and survives a restart.
func TestCreateTableWhoseFilesCannotBeMadeIsUndone(t *testing.T) {
	dir := t.TempDir()
	n, err := Open(Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	s := exec.NewSession(n)
	if _, err := s.Run("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"); err != nil {
		t.Fatal(err)
	}
	blocker := filepath.Join(dir, "data", "ks")
	if err := os.WriteFile(blocker, []byte("in the way"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run("CREATE TABLE ks.t (k int PRIMARY KEY, v text)"); err == nil {
		t.Fatal("CREATE TABLE succeeded although its directory cannot be made")
	}
	if _, err := n.Schema().Table("ks", "t"); err == nil {
		t.Fatal("the failed table is in the schema")
	}
	if err := os.Remove(blocker); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run("CREATE TABLE ks.t (k int PRIMARY KEY, v text); INSERT INTO ks.t (k, v) VALUES (1, 'one')"); err != nil {
		t.Fatalf("the same table once the way is clear: %v", err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if n, err = Open(Config{DataDir: dir}); err != nil {
		t.Fatalf("restart: %v", err)
	}
	defer n.Close()
	res, err := exec.NewSession(n).Run("SELECT v FROM ks.t WHERE k = 1")
	if err != nil || len(res[0].Rows) != 1 {
		t.Fatalf("after a restart: %v, %v", res, err)
	}
}
