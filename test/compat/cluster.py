"""The Python driver against a local three-node cluster (sibyl cluster up):
token-aware routing over the ring it reads from system.local and
system.peers, schema agreement after DDL, QUORUM writes read back through
every node, a scan, and with one node stopped QUORUM still working while
ALL is Unavailable with Cassandra's counts.

Usage: cluster.py HOST PORT all-up|one-down
"""
import sys
import time
import warnings

from cassandra import ConsistencyLevel, Unavailable
from cassandra.cluster import Cluster
from cassandra.policies import RoundRobinPolicy, TokenAwarePolicy
from cassandra.query import SimpleStatement

warnings.simplefilter("ignore", DeprecationWarning)
host, port, phase = sys.argv[1], int(sys.argv[2]), sys.argv[3]


def check(what, got, want):
    if got != want:
        print("cluster compat: %s: got %r, want %r" % (what, got, want))
        sys.exit(1)


cluster = Cluster([host], port=port, load_balancing_policy=TokenAwarePolicy(RoundRobinPolicy()))
session = cluster.connect()
# Once connected the driver knows every node, up.
deadline = time.time() + 30
while len([h for h in cluster.metadata.all_hosts() if h.is_up]) < (3 if phase == "all-up" else 2) and time.time() < deadline:
    time.sleep(0.2)
hosts = sorted((h.address, h.is_up) for h in cluster.metadata.all_hosts())
if phase == "all-up":
    check("hosts", hosts, [("127.0.0.1", True), ("127.0.0.2", True), ("127.0.0.3", True)])
    check("tokens in the driver's ring", len(cluster.metadata.token_map.ring), 48)
    session.execute("CREATE KEYSPACE cc WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}")
    session.execute("CREATE TABLE cc.kv (k int PRIMARY KEY, v text)")
    check("schema agreement after DDL", cluster.control_connection.wait_for_schema_agreement(), True)
    put = session.prepare("INSERT INTO cc.kv (k, v) VALUES (?, ?)")
    put.consistency_level = ConsistencyLevel.QUORUM
    for k in range(300):
        session.execute(put, (k, "v%d" % k))
    check("replicas of a key", len(cluster.metadata.get_replicas("cc", put.bind((7, "x")).routing_key)), 3)

get = session.prepare("SELECT v FROM cc.kv WHERE k = ?")
get.consistency_level = ConsistencyLevel.QUORUM
# Every node coordinates reads: the driver sends each to a replica, and
# with RF 3 every node is one, so all three serve.
for k in range(0, 300, 7):
    check("QUORUM read of k=%d" % k, session.execute(get, (k,)).one().v, "v%d" % k)
scan = SimpleStatement("SELECT k FROM cc.kv", consistency_level=ConsistencyLevel.QUORUM, fetch_size=40)
check("scan", len({r.k for r in session.execute(scan)}), 300)

if phase == "one-down":
    put = session.prepare("INSERT INTO cc.kv (k, v) VALUES (?, ?)")
    put.consistency_level = ConsistencyLevel.QUORUM
    session.execute(put, (1000, "q"))
    put.consistency_level = ConsistencyLevel.ALL
    try:
        session.execute(put, (1001, "a"))
        check("an ALL write with a node down", "succeeded", "Unavailable")
    except Unavailable as e:
        check("Unavailable's counts", (e.consistency, e.required_replicas, e.alive_replicas), (ConsistencyLevel.ALL, 3, 2))

cluster.shutdown()
print("compat: the Python driver works against a three-node cluster (%s)" % phase)
