package cql_test

import (
	"fmt"

	"github.com/sibyldb/sibyl/cql"
)

func ExampleParse() {
	st, err := cql.Parse("select v, TTL(v) from KS.t where k = ? and c > 3 limit 10;")
	if err != nil {
		fmt.Println(err)
		return
	}
	sel := st.(*cql.Select)
	fmt.Println(sel.Table.Keyspace, sel.Table.Name, len(sel.Where))
	fmt.Println(sel)

	_, err = cql.Parse("SELECT * FRO t")
	fmt.Println(err)
	// Output:
	// ks t 2
	// SELECT v, TTL(v) FROM ks.t WHERE k = ? AND c > 3 LIMIT 10
	// line 1:9 mismatched input 'FRO' expecting K_FROM (SELECT * [FRO]...)
}

func ExampleParseAll() {
	sts, err := cql.ParseAll(`
		USE ks;
		-- counters
		UPDATE hits SET n = n + 1 WHERE page = 'home';`)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, st := range sts {
		fmt.Printf("%T %s\n", st, st)
	}
	// Output:
	// *cql.Use USE ks
	// *cql.Update UPDATE hits SET n = n + 1 WHERE page = 'home'
}
