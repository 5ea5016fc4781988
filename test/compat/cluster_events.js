// What the DataStax Node.js driver sees of a running three-node Sibyl
// cluster (sibyl cluster up, run by run.sh): every node among its hosts
// the moment it connects, and a keyspace and a table created through
// another node than the one its control connection is on in its metadata
// within a second, from the SCHEMA_CHANGE events alone (no refresh asked).
// Usage: cluster_events.js PORT. Exits 1 with the failures listed.
'use strict';

const cassandra = require('cassandra-driver');

const port = Number(process.argv[2]);
const failures = [];

// A client whose control connection, and every request, is on one node.
function clientOn(host) {
  return new cassandra.Client({
    contactPoints: [host],
    protocolOptions: { port },
    localDataCenter: 'datacenter1',
    policies: {
      loadBalancing: new cassandra.policies.loadBalancing.AllowListPolicy(
        new cassandra.policies.loadBalancing.DCAwareRoundRobinPolicy('datacenter1'), [`${host}:${port}`]),
    },
  });
}

async function within(ms, what, cond) {
  const deadline = Date.now() + ms;
  for (;;) {
    if (cond()) {
      return;
    }
    if (Date.now() > deadline) {
      failures.push(`${what}: not within ${ms} ms`);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function main() {
  const watcher = clientOn('127.0.0.1');
  const ddl = clientOn('127.0.0.2');
  await watcher.connect();
  await ddl.connect();
  const hosts = watcher.hosts.keys().sort();
  const want = ['127.0.0.1', '127.0.0.2', '127.0.0.3'].map((h) => `${h}:${port}`);
  if (JSON.stringify(hosts) !== JSON.stringify(want)) {
    failures.push(`hosts right after connecting: ${JSON.stringify(hosts)}, want ${JSON.stringify(want)}`);
  }
  await ddl.execute("CREATE KEYSPACE evks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}");
  await within(1000, 'the keyspace made through 127.0.0.2 in the metadata of a client on 127.0.0.1',
    () => watcher.metadata.keyspaces.evks !== undefined);
  await ddl.execute('CREATE TABLE evks.t (k int PRIMARY KEY, v text)');
  let table = null;
  const started = Date.now();
  while (table === null && Date.now() - started < 1000) {
    table = await watcher.metadata.getTable('evks', 't');
    if (table === null) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  if (table === null || table.columns.map((c) => c.name).sort().join(',') !== 'k,v') {
    failures.push(`the table made through 127.0.0.2, as a client on 127.0.0.1 sees it: ${table && table.columns.map((c) => c.name)}`);
  }
  await ddl.execute('DROP KEYSPACE evks');
  await within(1000, 'the keyspace dropped through 127.0.0.2 gone from the metadata of a client on 127.0.0.1',
    () => watcher.metadata.keyspaces.evks === undefined);
  await watcher.shutdown();
  await ddl.shutdown();
}

main().then(() => {
  if (failures.length > 0) {
    console.log(`cluster_events.js: ${failures.length} failures:\n  ${failures.join('\n  ')}`);
    process.exit(1);
  }
  console.log('cluster_events.js: the Node.js driver sees every peer, and schema changes made through another node');
}, (err) => {
  console.log(`cluster_events.js: ${err.stack}`);
  process.exit(1);
});
