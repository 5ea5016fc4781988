// Drives a running Sibyl node with the DataStax Node.js driver
// (cassandra-driver from the npm registry, installed by run.sh) in the
// driver's own conventions: arrays with repeated elements bound to sets,
// objects with UDT fields left out, maps whose keys come in no order, and
// the statements Cassandra refuses (bad options, keys over its limits,
// names too long), counters and their batches, lightweight transactions.
// Usage: integrity.js HOST PORT write|check. "write"
// writes and checks; "check", run against the same node after a restart,
// checks that everything written is there as written. Exits 1 with the
// failures listed if anything differs from what Cassandra gives.
'use strict';

const cassandra = require('cassandra-driver');

const [host, port, phase] = process.argv.slice(2);
const failures = [];

function check(what, got, want) {
  const g = JSON.stringify(got);
  const w = JSON.stringify(want);
  if (g !== w) {
    failures.push(`${what}: got ${g}, want ${w}`);
  }
}

async function refused(client, what, query, params, code, message) {
  try {
    await client.execute(query, params, { prepare: params.length > 0 });
    failures.push(`${what}: accepted, want error ${code.toString(16)} ${message}`);
  } catch (err) {
    if (err.code !== code || err.message !== message) {
      failures.push(`${what}: error ${err.code && err.code.toString(16)} ${JSON.stringify(err.message)}, want ${code.toString(16)} ${JSON.stringify(message)}`);
    }
  }
}

// plain turns the driver's values into JSON-comparable ones.
function plain(v) {
  if (v === null || v === undefined) {
    return null;
  }
  if (Array.isArray(v)) {
    return v.map(plain);
  }
  if (v instanceof Map) {
    return Array.from(v.entries()).map(([k, x]) => [plain(k), plain(x)]);
  }
  if (typeof v === 'object' && v.constructor === Object) {
    const out = {};
    for (const k of Object.keys(v)) {
      out[k] = plain(v[k]);
    }
    return out;
  }
  return v;
}

async function verify(client, when) {
  let rs = await client.execute('SELECT k, s, fs FROM nodecompat.sets', [], { prepare: true });
  const sets = {};
  for (const row of rs.rows) {
    sets[row.k] = [plain(row.s), plain(row.fs)];
  }
  check(`${when}: sets bound from arrays with repeats`, sets, { 1: [[1, 3], [1, 3]], 2: [[2, 5], null], 3: [[5], null] });
  rs = await client.execute('SELECT k FROM nodecompat.setkeyed WHERE p = ? AND ck = ?', [1, [1, 3]], { prepare: true });
  check(`${when}: a row by a frozen set key bound in another order`, rs.rows.map((r) => r.k), [7]);
  rs = await client.execute('SELECT k FROM nodecompat.mapkeyed WHERE p = ? AND ck = ?', [2, { a: 1, b: 2 }], { prepare: true });
  check(`${when}: a row by a frozen map key bound in another order`, rs.rows.map((r) => r.k), [8]);
  rs = await client.execute('SELECT fa, a, fm FROM nodecompat.udts WHERE k = 1', [], { prepare: true });
  const row = rs.first();
  check(`${when}: a frozen UDT bound with fields left out`, plain(row.fa), { street: 'Main', zip: null, tags: [1, 2] });
  check(`${when}: a UDT bound with fields left out`, plain(row.a), { street: null, zip: 12345, tags: null });
  check(`${when}: a frozen map bound from an object in another order`, Object.keys(row.fm), ['a', 'b', 'c']);
  rs = await client.execute("SELECT views, likes FROM nodecompat.hits WHERE page = 'home'");
  check(`${when}: counters`, [rs.first().views.toNumber(), rs.first().likes.toNumber()], [10, 1]);
  rs = await client.execute("SELECT email FROM nodecompat.users WHERE name = 'ada'");
  check(`${when}: the claimed name`, rs.first().email, 'ada@example.com');
  rs = await client.execute("SELECT table_name FROM system_schema.tables WHERE keyspace_name = 'nodecompat'");
  check(`${when}: the tables, none of the refused ones`, rs.rows.map((r) => r.table_name).sort(),
    ['hits', 'mapkeyed', 'setkeyed', 'sets', 'udts', 'users']);
}

async function write(client) {
  for (const q of [
    "CREATE KEYSPACE nodecompat WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
    'CREATE TYPE nodecompat.addr (street text, zip int, tags frozen<set<int>>)',
    'CREATE TABLE nodecompat.sets (k int PRIMARY KEY, s set<int>, fs frozen<set<int>>)',
    'CREATE TABLE nodecompat.setkeyed (p int, ck frozen<set<int>>, k int, PRIMARY KEY (p, ck))',
    'CREATE TABLE nodecompat.mapkeyed (p int, ck frozen<map<text, int>>, k int, PRIMARY KEY (p, ck))',
    'CREATE TABLE nodecompat.udts (k int PRIMARY KEY, fa frozen<addr>, a addr, fm frozen<map<text, int>>)',
    'CREATE TABLE nodecompat.hits (page text PRIMARY KEY, views counter, likes counter)',
    'CREATE TABLE nodecompat.users (name text PRIMARY KEY, email text)',
  ]) {
    await client.execute(q);
  }
  const insert = 'INSERT INTO nodecompat.sets (k, s, fs) VALUES (?, ?, ?)';
  await client.execute(insert, [1, [3, 1, 3], [3, 1, 3]], { prepare: true });
  await client.execute(insert, [2, [2], null], { prepare: true });
  await client.execute('UPDATE nodecompat.sets SET s = s + ? WHERE k = ?', [[5, 5], 2], { prepare: true });
  await client.execute('UPDATE nodecompat.sets SET s = s + {5, 5} WHERE k = 3');
  await client.execute('INSERT INTO nodecompat.setkeyed (p, ck, k) VALUES (?, ?, ?)', [1, [3, 1, 3], 7], { prepare: true });
  // An object's keys go on the wire in insertion order: b before a.
  await client.execute('INSERT INTO nodecompat.mapkeyed (p, ck, k) VALUES (?, ?, ?)', [2, { b: 2, a: 1 }, 8], { prepare: true });
  await client.execute(
    'INSERT INTO nodecompat.udts (k, fa, a, fm) VALUES (?, ?, ?, ?)',
    [1, { street: 'Main', tags: [2, 1, 2] }, { zip: 12345 }, { c: 3, a: 1, b: 2 }],
    { prepare: true },
  );
  // Counters: prepared increments and a counter batch.
  const bump = 'UPDATE nodecompat.hits SET views = views + ? WHERE page = ?';
  for (let i = 0; i < 4; i++) {
    await client.execute(bump, [cassandra.types.Long.fromNumber(3), 'home'], { prepare: true });
  }
  await client.batch([
    { query: bump, params: [cassandra.types.Long.fromNumber(-2), 'home'] },
    { query: 'UPDATE nodecompat.hits SET likes = likes + ? WHERE page = ?', params: [cassandra.types.Long.fromNumber(1), 'home'] },
  ], { prepare: true, counter: true });
  // Lightweight transactions: the first claim applies, the second is
  // told who holds it.
  const claim = 'INSERT INTO nodecompat.users (name, email) VALUES (?, ?) IF NOT EXISTS';
  let rs = await client.execute(claim, ['ada', 'ada@example.com'], { prepare: true });
  check('the first claim applied', rs.wasApplied(), true);
  rs = await client.execute(claim, ['ada', 'other@example.com'], { prepare: true });
  check('the second claim', [rs.wasApplied(), rs.first().email], [false, 'ada@example.com']);
  rs = await client.execute("SELECT email FROM nodecompat.users WHERE name = 'ada'", [],
    { consistency: cassandra.types.consistencies.serial });
  check('a SERIAL read', rs.first().email, 'ada@example.com');
  const long = 't'.repeat(240);
  const ks = 'k'.repeat(250);
  await refused(client, 'a compaction option that does not parse',
    "CREATE TABLE nodecompat.bad (k int PRIMARY KEY) WITH compaction = {'class': 'SizeTieredCompactionStrategy', 'min_threshold': 'abc'}", [],
    0x2300, "Invalid value abc for 'min_threshold' compaction sub-option - must be an integer");
  await refused(client, 'a 240-character table name', `CREATE TABLE nodecompat.${long} (k int PRIMARY KEY)`, [], 0x2300,
    `nodecompat.${long}: Table name must not be empty, more than 48 characters long, or contain non-alphanumeric-underscore characters (got "${long}")`);
  await refused(client, 'a 250-character keyspace name',
    `CREATE KEYSPACE ${ks} WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`, [], 0x2200,
    `Keyspace name must not be empty, more than 48 characters long, or contain non-alphanumeric-underscore characters (got '${ks}')`);
  await refused(client, 'a set of 16,384 elements as a clustering key', 'INSERT INTO nodecompat.setkeyed (p, ck, k) VALUES (?, ?, 1)',
    [1, Array.from({ length: 16384 }, (_, i) => i)], 0x2200, 'Key length of 131076 is longer than maximum of 65535');
}

async function main() {
  const client = new cassandra.Client({
    contactPoints: [`${host}:${port}`],
    localDataCenter: 'datacenter1',
    socketOptions: { connectTimeout: 10000, readTimeout: 10000 },
  });
  await client.connect();
  try {
    if (phase === 'write') {
      await write(client);
    }
    await verify(client, phase === 'write' ? 'as written' : 'after a restart');
  } finally {
    await client.shutdown();
  }
}

main().then(() => {
  if (failures.length > 0) {
    console.log(`integrity.js (${phase}): ${failures.length} failures:\n  ${failures.join('\n  ')}`);
    process.exit(1);
  }
  console.log(`integrity.js (${phase}): ok`);
}, (err) => {
  console.log(`integrity.js (${phase}): ${err.stack || err}`);
  process.exit(1);
});
