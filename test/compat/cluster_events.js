// What the DataStax Node.js driver sees of a running three-node Sibyl
// cluster (sibyl cluster up, run by run.sh): every node among its hosts
// the moment it connects, and a keyspace and a table created through
// another node than the one its control connection is on in its metadata
// within a second, from the SCHEMA_CHANGE events alone (no refresh asked).
// With "add", it runs `sibyl cluster add` instead and wants the
// TOPOLOGY_CHANGE within a second of the new node's serving CQL, the node
// among the hosts within three (the driver's own delays) and up within ten
// (see addedNode).
// Usage: cluster_events.js PORT [add SIBYL CLUSTER_DIR]. Exits 1 with the
// failures listed.
'use strict';

const { spawn } = require('child_process');
const cassandra = require('cassandra-driver');

const port = Number(process.argv[2]);
const [mode, sibyl, clusterDir] = process.argv.slice(3);
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

// addNode runs `sibyl cluster add` and resolves, once it has succeeded,
// with the time the new node began serving CQL (add prints "nodeN up on"
// then) and its address.
function addNode() {
  return new Promise((resolve, reject) => {
    const add = spawn(sibyl, ['cluster', 'add', '--dir', clusterDir]);
    let out = '';
    let servedAt = null;
    let address = null;
    add.stdout.on('data', (chunk) => {
      out += chunk;
      const m = /node\d+ up on (\S+)/.exec(out);
      if (m && servedAt === null) {
        servedAt = Date.now();
        address = m[1];
      }
    });
    add.stderr.on('data', (chunk) => { out += chunk; });
    add.on('close', (code) => {
      if (code !== 0 || servedAt === null) {
        reject(new Error(`sibyl cluster add exited ${code}:\n${out}`));
      } else {
        resolve({ servedAt, address });
      }
    });
  });
}

async function main() {
  if (mode === 'add') {
    await addedNode();
    return;
  }
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

// addedNode: a client connected before a node is added hears of it (a
// TOPOLOGY_CHANGE) within a second of the node's serving CQL, and then has
// it among its hosts within two seconds more: the driver reads
// system.peers only a second after the event (its newNodeDelay), and then
// after its refresh debounce (refreshSchemaDelay, another second). The
// driver adds a host down and connects to it on its reconnection
// schedule, so it must be up, connected, within ten seconds.
async function addedNode() {
  const watcher = new cassandra.Client({ contactPoints: ['127.0.0.1'], protocolOptions: { port }, localDataCenter: 'datacenter1' });
  await watcher.connect();
  let heardAt = null;
  watcher.on('log', (level, className, message) => {
    if (className === 'ControlConnection' && message.startsWith('Received topology change') && heardAt === null) {
      heardAt = Date.now();
    }
  });
  const listedAt = new Map();
  watcher.on('hostAdd', (h) => { listedAt.set(h.address, Date.now()); });
  const { servedAt, address } = await addNode();
  const key = `${address}:${port}`;
  await within(Math.max(0, servedAt + 10000 - Date.now()), `the added node ${key} up on a client connected to 127.0.0.1`, () => {
    const h = watcher.hosts.get(key);
    return h !== undefined && h.isUp();
  });
  const upAt = Date.now();
  if (heardAt === null || heardAt > servedAt + 1000) {
    failures.push(`a TOPOLOGY_CHANGE for ${key}, on a client connected to 127.0.0.1: ${heardAt === null ? 'never' : heardAt - servedAt} ms after it served CQL`);
  }
  if (!listedAt.has(key) || listedAt.get(key) > servedAt + 3000) {
    failures.push(`${key} among the hosts of a client connected to 127.0.0.1: ${listedAt.has(key) ? listedAt.get(key) - servedAt : 'never'} ms after it served CQL`);
  }
  console.log(`cluster_events.js: from the added node's serving CQL: the event ${heardAt - servedAt} ms, listed ${listedAt.get(key) - servedAt} ms, up ${upAt - servedAt} ms`);
  await watcher.shutdown();
}

main().then(() => {
  if (failures.length > 0) {
    console.log(`cluster_events.js: ${failures.length} failures:\n  ${failures.join('\n  ')}`);
    process.exit(1);
  }
  console.log(mode === 'add' ? 'cluster_events.js: the Node.js driver sees a node added to the cluster'
    : 'cluster_events.js: the Node.js driver sees every peer, and schema changes made through another node');
}, (err) => {
  console.log(`cluster_events.js: ${err.stack}`);
  process.exit(1);
});
