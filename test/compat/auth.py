"""Logs in to a Sibyl node running PasswordAuthenticator and
CassandraAuthorizer with the DataStax Python driver's PlainTextAuthProvider,
as an application would: the default superuser, roles made and granted,
each refusal with the driver's exception and Cassandra's message. Usage:
auth.py HOST PORT. Exits 1 with the failures listed."""

import sys
import time

from cassandra import AuthenticationFailed, Unauthorized
from cassandra.auth import PlainTextAuthProvider
from cassandra.cluster import Cluster, NoHostAvailable
from cassandra.policies import RoundRobinPolicy

failures = []


def check(what, got, want):
    if got != want:
        failures.append("%s: got %r, want %r" % (what, got, want))


host, port = sys.argv[1], int(sys.argv[2])


def connect(user, password):
    cluster = Cluster([host], port=port, load_balancing_policy=RoundRobinPolicy(), connect_timeout=10,
                      auth_provider=PlainTextAuthProvider(username=user, password=password))
    return cluster, cluster.connect()


def refused_login(user, password):
    """The message of a refused login, or None if it got in."""
    try:
        cluster, _ = connect(user, password)
    except NoHostAvailable as e:
        errors = list(e.errors.values())
        if len(errors) == 1 and isinstance(errors[0], AuthenticationFailed):
            return str(errors[0])
        return "not an AuthenticationFailed: %r" % (errors,)
    cluster.shutdown()
    return None


# The default superuser is set up as the node starts.
deadline = time.time() + 30
while True:
    try:
        admin_cluster, admin = connect("cassandra", "cassandra")
        break
    except NoHostAvailable:
        if time.time() > deadline:
            raise
        time.sleep(0.2)

admin.execute("CREATE ROLE app WITH PASSWORD = 'app-pw' AND LOGIN = true")
admin.execute("CREATE ROLE readers")
admin.execute("CREATE KEYSPACE authks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
admin.execute("CREATE TABLE authks.t (k int PRIMARY KEY, v text)")
admin.execute("INSERT INTO authks.t (k, v) VALUES (1, 'one')")
admin.execute("GRANT SELECT ON KEYSPACE authks TO readers")
admin.execute("GRANT readers TO app")
check("LIST ROLES", [(r.role, r.super, r.login) for r in admin.execute("LIST ROLES")],
      [("app", False, True), ("cassandra", True, True), ("readers", False, False)])
check("LIST PERMISSIONS OF app", [(r.role, r.resource, r.permission) for r in admin.execute("LIST ALL PERMISSIONS OF app")],
      [("readers", "<keyspace authks>", "SELECT")])

for user, password, want in [
        ("app", "wrong", 'Failed to authenticate to %s:%d: Error from server: code=0100 [Bad credentials] '
                         'message="Provided username app and/or password are incorrect"' % (host, port)),
        ("nobody", "x", 'Failed to authenticate to %s:%d: Error from server: code=0100 [Bad credentials] '
                        'message="Provided username nobody and/or password are incorrect"' % (host, port))]:
    check("login %s/%s" % (user, password), refused_login(user, password), want)
msg = refused_login("readers", "x")
check("a role without a password logs in", msg is not None and "Provided username readers and/or password are incorrect" in msg, True)

app_cluster, app = connect("app", "app-pw")
check("SELECT through a granted role", app.execute("SELECT v FROM authks.t WHERE k = 1").one().v, "one")
try:
    app.execute("INSERT INTO authks.t (k, v) VALUES (2, 'two')")
    failures.append("INSERT without MODIFY was taken")
except Unauthorized as e:
    check("INSERT without MODIFY", str(e),
          'Error from server: code=2100 [Unauthorized] message="User app has no MODIFY permission on <table authks.t> or any of its parents"')
try:
    app.execute("CREATE ROLE sneaky WITH SUPERUSER = true")
    failures.append("a role without CREATE on roles created a superuser")
except Unauthorized:
    pass
admin.execute("REVOKE readers FROM app")
try:
    app.execute("SELECT v FROM authks.t WHERE k = 1")
    failures.append("SELECT still taken once the role granting it was revoked")
except Unauthorized:
    pass
app_cluster.shutdown()
admin.execute("DROP KEYSPACE authks")
admin_cluster.shutdown()

if failures:
    print("auth.py: %d failures" % len(failures))
    for f in failures:
        print("  " + f)
    sys.exit(1)
print("auth.py: ok")
