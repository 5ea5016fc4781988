package bench

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

// BenchmarkClusterDDL times CREATE TABLE through gocql against the
// cluster SIBYL_BENCH_DDL_HOSTS names (addresses, commas between; native
// port SIBYL_BENCH_DDL_PORT, default 9042): the statement and the schema
// agreement wait gocql makes after it (system.peers and system.local
// polled every 200 ms until one schema version shows). It reports the
// median and the 90th percentile. bench/ddl-side-by-side.sh runs it
// against two builds' clusters; without the variable there is no cluster
// to time, and it says so.
func BenchmarkClusterDDL(b *testing.B) {
	hosts := os.Getenv("SIBYL_BENCH_DDL_HOSTS")
	if hosts == "" {
		b.Skip("SIBYL_BENCH_DDL_HOSTS names no cluster (bench/ddl-side-by-side.sh sets it)")
	}
	c := gocql.NewCluster(strings.Split(hosts, ",")...)
	if p := os.Getenv("SIBYL_BENCH_DDL_PORT"); p != "" {
		fmt.Sscan(p, &c.Port)
	}
	c.Timeout = 20 * time.Second
	c.MaxWaitSchemaAgreement = 30 * time.Second
	s, err := c.CreateSession()
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ks := fmt.Sprintf("ddl%d", time.Now().UnixNano())
	if err := s.Query("CREATE KEYSPACE " + ks + " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}").Exec(); err != nil {
		b.Fatal(err)
	}
	const tables = 30
	var took []time.Duration
	b.ResetTimer()
	for range b.N {
		for i := range tables {
			start := time.Now()
			if err := s.Query(fmt.Sprintf("CREATE TABLE %s.t%d_%d (k int PRIMARY KEY, v text)", ks, len(took), i)).Exec(); err != nil {
				b.Fatal(err)
			}
			took = append(took, time.Since(start))
		}
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(took[len(took)*9/10].Microseconds())/1000, "p90-ms")
}
