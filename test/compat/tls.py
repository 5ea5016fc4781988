"""Connects the DataStax Python driver (ssl_context) to a Sibyl node whose
native port takes TLS alone and requires client certificates, with gocql's
testdata/pki certificates. Usage: tls.py HOST PORT PKI_DIR. Exits 1 with
the failures listed."""

import ssl
import sys

from cassandra.cluster import Cluster, NoHostAvailable
from cassandra.policies import RoundRobinPolicy

failures = []
host, port, pki = sys.argv[1], int(sys.argv[2]), sys.argv[3]


def context(with_cert):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(pki + "/ca.crt")
    ctx.check_hostname = False  # gocql's certificates name no host
    if with_cert:
        ctx.load_cert_chain(certfile=pki + "/gocql.crt", keyfile=pki + "/gocql.key")
    return ctx


def connect(ctx):
    cluster = Cluster([host], port=port, load_balancing_policy=RoundRobinPolicy(), connect_timeout=5, ssl_context=ctx)
    return cluster, cluster.connect()


cluster, session = connect(context(True))
row = session.execute("SELECT release_version FROM system.local").one()
if row.release_version != "4.1.6":
    failures.append("release_version over TLS: %r" % (row.release_version,))
session.execute("CREATE KEYSPACE IF NOT EXISTS tlsks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
session.execute("CREATE TABLE IF NOT EXISTS tlsks.t (k int PRIMARY KEY, v text)")
session.execute("INSERT INTO tlsks.t (k, v) VALUES (%s, %s)", (1, "over tls"))
got = session.execute(session.prepare("SELECT v FROM tlsks.t WHERE k = ?"), (1,)).one().v
if got != "over tls":
    failures.append("a prepared read over TLS: %r" % (got,))
cluster.shutdown()

for name, ctx in [("plaintext", None), ("no client certificate", context(False))]:
    try:
        c, _ = connect(ctx)
        c.shutdown()
        failures.append("%s got in" % name)
    except NoHostAvailable:
        pass

if failures:
    print("tls.py: %d failures" % len(failures))
    for f in failures:
        print("  " + f)
    sys.exit(1)
print("tls.py: ok")
