"""The Python driver's query tracing (what cqlsh's TRACING ON uses) against
a local three-node cluster: a traced QUORUM write and read, sent as plain
QUERY messages as cqlsh sends them, come back with a trace id whose
session the driver reads from system_traces, with events from the
coordinator and from every replica the request reached.

Usage: tracing.py HOST PORT
"""
import sys
import warnings

from cassandra import ConsistencyLevel
from cassandra.cluster import Cluster
from cassandra.policies import WhiteListRoundRobinPolicy
from cassandra.query import SimpleStatement

warnings.simplefilter("ignore", DeprecationWarning)
host, port = sys.argv[1], int(sys.argv[2])


def fail(msg):
    print("tracing compat: " + msg)
    sys.exit(1)


# Every request through one coordinator, as cqlsh's session is.
cluster = Cluster([host], port=port, load_balancing_policy=WhiteListRoundRobinPolicy([host]))
session = cluster.connect()
session.execute("CREATE KEYSPACE IF NOT EXISTS tr WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}")
session.execute("CREATE TABLE IF NOT EXISTS tr.t (k int PRIMARY KEY, v text)")
cluster.control_connection.wait_for_schema_agreement()


def traced(query):
    stmt = SimpleStatement(query, consistency_level=ConsistencyLevel.QUORUM)
    result = session.execute(stmt, trace=True)
    trace = result.get_query_trace(max_wait_sec=10)
    if trace.duration is None or trace.started_at is None:
        fail("%s: the session never got its duration" % query)
    if trace.request_type != "Execute CQL3 query" or trace.coordinator != host:
        fail("%s: session %r from %r" % (query, trace.request_type, trace.coordinator))
    if trace.parameters.get("consistency_level") != "QUORUM" or trace.parameters.get("query") != query:
        fail("%s: parameters %r" % (query, trace.parameters))
    return result, trace


def sources_with(trace, prefix):
    return {str(e.source) for e in trace.events if e.description.startswith(prefix)}


_, write = traced("INSERT INTO tr.t (k, v) VALUES (1, 'one')")
# The driver may read the session before the replicas' events are in:
# read it again until they are.
for attempt in range(100):
    if sources_with(write, "Adding to t memtable") == {"127.0.0.1", "127.0.0.2", "127.0.0.3"}:
        break
    write.populate(max_wait=10)
else:
    fail("write: memtable events only from %r: %r" % (sources_with(write, "Adding to t memtable"),
                                                       [(e.source, e.description) for e in write.events]))
if sources_with(write, "MUTATION_REQ message received from") != {"127.0.0.2", "127.0.0.3"}:
    fail("write: replicas that got the mutation: %r" % sources_with(write, "MUTATION_REQ message received from"))
if not all(e.source_elapsed is not None and e.thread_name for e in write.events):
    fail("write: events without elapsed time or thread: %r" % write.events)

rows, read = traced("SELECT v FROM tr.t WHERE k = 1")
if rows.one().v != "one":
    fail("read: %r" % rows.one())
for attempt in range(100):
    if len(sources_with(read, "Read 1 live rows")) == 2:
        break
    read.populate(max_wait=10)
else:
    fail("read: rows read at %r: %r" % (sources_with(read, "Read 1 live rows"), [(e.source, e.description) for e in read.events]))
if sources_with(read, "Parsing SELECT v FROM tr.t WHERE k = 1") != {host}:
    fail("read: no parsing event")
cluster.shutdown()
