"""Drives a running Sibyl node with the DataStax Python driver (Debian's
python3-cassandra), as an application would: protocol negotiation, DDL,
every type through simple and prepared statements, paging, batches, errors,
lightweight transactions, counters and the driver's schema metadata. Usage:
compat.py HOST PORT. Exits 1 with the failures listed if anything differs
from what Cassandra would give."""

import datetime
import decimal
import ipaddress
import sys
import uuid

from cassandra import AlreadyExists, ConsistencyLevel, InvalidRequest
from cassandra.cluster import Cluster
from cassandra.policies import RoundRobinPolicy
from cassandra.query import BatchStatement, BatchType, SimpleStatement
from cassandra.util import Date, Duration, OrderedMapSerializedKey, SortedSet, Time

failures = []


def check(what, got, want):
    if got != want:
        failures.append("%s: got %r, want %r" % (what, got, want))


host, port = sys.argv[1], int(sys.argv[2])

# Without compression, and with the driver's choice (LZ4 when python3-lz4
# is installed, which for protocol 5 compresses the segments).
plain = Cluster([host], port=port, load_balancing_policy=RoundRobinPolicy(), connect_timeout=10, compression=False)
check("uncompressed connection", plain.connect().execute("SELECT key FROM system.local").one().key, "local")
plain.shutdown()
cluster = Cluster([host], port=port, load_balancing_policy=RoundRobinPolicy(), connect_timeout=10)
session = cluster.connect()
check("negotiated protocol version", cluster.protocol_version, 5)
try:
    import lz4  # noqa: F401
    check("compression", session.get_pool_state and cluster.compression, True)
except ImportError:
    pass

row = session.execute("SELECT cluster_name, release_version, partitioner FROM system.local WHERE key = 'local'").one()
check("release_version", row.release_version, "4.1.6")
check("partitioner", row.partitioner, "org.apache.cassandra.dht.Murmur3Partitioner")

session.execute("CREATE KEYSPACE compat WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
session.set_keyspace("compat")
session.execute("CREATE TYPE address (street text, zip int)")
columns = [
    ("k", "int"), ("c", "text"), ("a", "ascii"), ("bi", "bigint"), ("bl", "blob"), ("bo", "boolean"),
    ("d", "date"), ("de", "decimal"), ("do", "double"), ("du", "duration"), ("f", "float"), ("i", "inet"),
    ("s", "smallint"), ("ti", "time"), ("ts", "timestamp"), ("tu", "timeuuid"), ("ty", "tinyint"),
    ("u", "uuid"), ("vi", "varint"), ("l", "list<int>"), ("st", "set<text>"), ("m", "map<text, int>"),
    ("fl", "frozen<list<bigint>>"), ("tup", "frozen<tuple<int, text>>"), ("ad", "frozen<address>"),
]
session.execute("CREATE TABLE alltypes (%s, PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (c DESC)"
                % ", ".join("%s %s" % col for col in columns))

values = {
    "a": "ascii", "bi": -(1 << 40), "bl": b"\x00\x01\x02", "bo": True, "d": Date(datetime.date(2024, 2, 29)),
    "de": decimal.Decimal("3.1415"), "do": 2.5, "du": Duration(1, 2, 3000), "f": 1.5,
    "i": "192.168.1.2", "s": -300, "ti": Time(datetime.time(13, 14, 15)),
    "ts": datetime.datetime(2024, 5, 6, 7, 8, 9, 123000), "tu": uuid.uuid1(), "ty": -7, "u": uuid.uuid4(),
    "vi": 1 << 70, "l": [3, 1, 2], "st": {"b", "a"}, "m": {"x": 1, "y": 2}, "fl": [9, 8], "tup": (7, "seven"),
}
names = list(values)
# A simple statement: the driver renders the values into the query text
# (a Python tuple as a list, for IN: the tuple column takes a literal).
simple = [n for n in names if n != "tup"]
session.execute("INSERT INTO alltypes (k, c, %s, tup, ad) VALUES (1, 'simple', %s, (7, 'seven'), {street: 'Main', zip: 12345})"
                % (", ".join(simple), ", ".join(["%s"] * len(simple))), [values[n] for n in simple])
# A prepared statement: the values are bound.
insert = session.prepare("INSERT INTO alltypes (k, c, %s) VALUES (?, ?, %s)"
                         % (", ".join(names), ", ".join(["?"] * len(names))))
check("prepared INSERT routing key indexes", insert.routing_key_indexes, [0])
session.execute(insert, [1, "prepared"] + [values[n] for n in names])

select = session.prepare("SELECT * FROM alltypes WHERE k = ? AND c = ?")
for c in ("simple", "prepared"):
    row = session.execute(select, [1, c]).one()
    if row is None:
        failures.append("row %s: not found" % c)
        continue
    for n in names:
        got, want = getattr(row, n), values[n]
        if n == "i":
            got = str(got)
        elif n in ("st",):
            got = set(got)
        elif n == "m":
            got = dict(got)
        elif n == "fl":
            got = list(got)
        check("%s %s" % (c, n), got, want)
    if c == "simple":
        check("simple ad", (row.ad.street, row.ad.zip), ("Main", 12345))

# Clustering order and a range.
rows = list(session.execute("SELECT c FROM alltypes WHERE k = 1"))
check("clustering order (DESC)", [r.c for r in rows], ["simple", "prepared"])

# Paging: 2,500 rows in pages of 100.
session.execute("CREATE TABLE paged (k int, c int, v text, PRIMARY KEY (k, c))")
put = session.prepare("INSERT INTO paged (k, c, v) VALUES (?, ?, ?)")
batch = BatchStatement(batch_type=BatchType.UNLOGGED)
for i in range(2500):
    batch.add(put, (i % 3, i, str(i)))
    if len(batch) == 250:
        session.execute(batch)
        batch = BatchStatement(batch_type=BatchType.UNLOGGED)
result = session.execute(SimpleStatement("SELECT c, v FROM paged", fetch_size=100))
seen = set()
pages = 0
while True:
    pages += 1
    for r in result.current_rows:
        check("paged row %d" % r.c, r.v, str(r.c))
        seen.add(r.c)
    if not result.has_more_pages:
        break
    result.fetch_next_page()
check("paged rows", len(seen), 2500)
check("pages", pages, 25)
count = session.execute("SELECT count(*) FROM paged WHERE k = 1").one()[0]
check("count(*)", count, len([i for i in range(2500) if i % 3 == 1]))
# The server's warnings reach the driver: the partition key is named here,
# not in the next.
check("warnings of count(*) by key", session.execute("SELECT count(*) FROM paged WHERE k = 1").response_future.warnings, None)
check("warnings of count(*) over the table", session.execute("SELECT count(*) FROM paged").response_future.warnings,
      ["Aggregation query used without partition key"])

# A logged batch of simple and prepared statements.
batch = BatchStatement()
batch.add(SimpleStatement("INSERT INTO paged (k, c, v) VALUES (%s, %s, %s)"), (9, 1, "one"))
batch.add(put, (9, 2, "two"))
batch.add(SimpleStatement("DELETE FROM paged WHERE k = 9 AND c = 1"))
session.execute(batch)
check("batch", [(r.c, r.v) for r in session.execute("SELECT c, v FROM paged WHERE k = 9")], [(2, "two")])

# Lightweight transactions: was_applied, the current values of a
# condition that failed, SERIAL reads.
session.execute("CREATE TABLE users (name text PRIMARY KEY, email text, logins int)")
claim = session.prepare("INSERT INTO users (name, email, logins) VALUES (?, ?, 0) IF NOT EXISTS")
check("first claim applied", session.execute(claim, ("ada", "ada@example.com")).was_applied, True)
lost = session.execute(claim, ("ada", "other@example.com"))
check("second claim", (lost.was_applied, lost.one().email), (False, "ada@example.com"))
cas = session.prepare("UPDATE users SET logins = ? WHERE name = ? IF logins = ?")
check("compare-and-set applied", session.execute(cas, (1, "ada", 0)).was_applied, True)
stale = session.execute(cas, (1, "ada", 0))
check("compare-and-set lost", (stale.was_applied, stale.one().logins), (False, 1))
serial = SimpleStatement("SELECT logins FROM users WHERE name = 'ada'", consistency_level=ConsistencyLevel.SERIAL)
check("SERIAL read", session.execute(serial).one().logins, 1)
check("DELETE IF EXISTS of nothing", session.execute("DELETE FROM users WHERE name = 'nobody' IF EXISTS").was_applied, False)

# Counters: increments, decrements, a counter batch, reads.
session.execute("CREATE TABLE hits (page text PRIMARY KEY, views counter, likes counter)")
bump = session.prepare("UPDATE hits SET views = views + ? WHERE page = ?")
for _ in range(5):
    session.execute(bump, (2, "home"))
counters = BatchStatement(batch_type=BatchType.COUNTER)
counters.add(bump, (-3, "home"))
counters.add(SimpleStatement("UPDATE hits SET likes = likes + 1 WHERE page = 'home'"))
session.execute(counters)
row = session.execute("SELECT views, likes FROM hits WHERE page = 'home'").one()
check("counters", (row.views, row.likes), (7, 1))
try:
    session.execute("INSERT INTO hits (page, views) VALUES ('x', 1)")
    failures.append("INSERT into a counter table: no error")
except InvalidRequest as e:
    check("INSERT into a counter table", "INSERT statements are not allowed on counter tables, use UPDATE instead" in str(e), True)

# Errors.
try:
    session.execute("SELECT * FROM nope")
    failures.append("SELECT from a missing table: no error")
except InvalidRequest as e:
    check("missing table message", "table nope does not exist" in str(e), True)
try:
    session.execute("CREATE TABLE paged (k int PRIMARY KEY)")
    failures.append("CREATE of an existing table: no error")
except AlreadyExists as e:
    check("AlreadyExists", (e.keyspace, e.table), ("compat", "paged"))

# The driver's schema metadata matches the tables created.
cluster.refresh_schema_metadata()
meta = cluster.metadata.keyspaces["compat"]
table = meta.tables["alltypes"]
check("columns", [(c.name, c.cql_type) for c in table.columns.values()],
      [("k", "int"), ("c", "text")] + sorted(columns[2:]))
check("partition key", [c.name for c in table.partition_key], ["k"])
check("clustering key", [c.name for c in table.clustering_key], ["c"])
check("clustering order", table.clustering_key[0].is_reversed, True)
check("user type", (meta.user_types["address"].field_names, meta.user_types["address"].field_types),
      (["street", "zip"], ["text", "int"]))
check("replication", meta.replication_strategy.replication_factor, 1)
check("system keyspaces in metadata", "system" in cluster.metadata.keyspaces and "system_schema" in cluster.metadata.keyspaces, True)

cluster.shutdown()
if failures:
    print("compat: %d failures" % len(failures))
    for f in failures:
        print("  " + f)
    sys.exit(1)
print("compat: the Python driver %s works against %s:%d" % (__import__("cassandra").__version__, host, port))
