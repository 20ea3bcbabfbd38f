"""A RetroRapid cluster on loopback for the end-to-end tests (docs/OPERATIONS.md, "Scale out"):
several real `retrorapid serve` nodes on one database, each with its own `--node-id` and port,
and Debian's nginx in front running Deploy/nginx/retrorapid-cluster.conf (only its `# site:`
lines changed, as Tests/python/nginx_proxy.py does for the single-node site).

The nodes share a PostgreSQL database (`--database-url`), made fresh per test: the harness's
`postgres_database_url` fixture when the suite has one, else `create_postgres_database` here,
with psql on the server RETRORAPID_TEST_POSTGRES_URL names. `start_cluster` takes the
database flags as given, so the rig itself also runs on a shared SQLite file
(`--database-path`), which has no bus."""

import os
import secrets
import shutil
import ssl
import subprocess
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from conftest import REPO, TEST_CLUSTER_SECRET, Server, free_port, wait_until_healthy
from nginx_proxy import NginxProxy, self_signed_certificate, start_nginx

CLUSTER_SITE = REPO / "Deploy/nginx/retrorapid-cluster.conf"
# The same cluster with game connections straight to the nodes, which serve TLS themselves.
DIRECT_SITE = REPO / "Deploy/nginx/retrorapid-cluster-direct.conf"
# nginx connects from 127.0.0.1; clients through it from 127.0.0.2, so the two differ.
PROXY_ADDRESS = "127.0.0.1"
CLIENT_ADDRESS = "127.0.0.2"


def psql_binary() -> str:
    found = shutil.which("psql") or "/usr/lib/postgresql/15/bin/psql"
    if not Path(found).exists():
        raise AssertionError("psql is not installed: the cluster tests need Debian's postgresql-client")
    return found


def psql(url: str, sql: str) -> str:
    """Runs `sql` on the database at `url` and returns psql's unaligned, tuples-only output."""
    done = subprocess.run([psql_binary(), "-X", "-v", "ON_ERROR_STOP=1", "-At", "-F", "\t", "-d", url, "-c", sql],
                          capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        raise AssertionError(f"psql failed ({done.returncode}): {done.stderr.strip()}\n{sql}")
    return done.stdout


def rows(url: str, sql: str) -> list[list[str]]:
    """The rows of a SELECT, each a list of its columns as text."""
    return [line.split("\t") for line in psql(url, sql).splitlines()]


def create_postgres_database(admin_url: str):
    """A new, empty database on the server `admin_url` names (as its superuser); returns its URL
    and a function that drops it, whoever is still connected."""
    name = "rr_cluster_" + secrets.token_hex(6)
    psql(admin_url, f"CREATE DATABASE {name}")
    url = urlsplit(admin_url)._replace(path="/" + name).geturl()

    def drop():
        psql(admin_url, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    return url, drop


def node_binary() -> str:
    binary = str(Path(os.environ.get("RETRORAPID_BINARY", REPO / ".build/debug/retrorapid")).resolve())
    if not Path(binary).exists():
        raise AssertionError(f"server binary {binary} not found: build it or set RETRORAPID_BINARY")
    return binary


def start_node(folder: Path, node_id: str, database_args, *extra_args: str,
               cluster_secret: str | None = TEST_CLUSTER_SECRET, port: int | None = None, tls=None) -> Server:
    """One `retrorapid serve` node on loopback, on a port of its own (`port`, or a free one),
    trusting nginx, signing its bus messages with `cluster_secret` (given as --cluster-secret;
    None gives none); serving TLS itself with `tls`, a (certificate, key) pair."""
    binary = node_binary()
    folder.mkdir(parents=True, exist_ok=True)
    port = port or free_port()
    log_path = folder / "server.log"
    command = [
        binary, "serve", "--host", "127.0.0.1", "--port", str(port),
        *database_args,
        "--node-id", node_id,
        "--web-root", str(REPO / "Web"),
        "--migrations-path", str(REPO / "Migrations"),
        "--trusted-proxies", PROXY_ADDRESS,
        *(["--cluster-secret", cluster_secret] if cluster_secret is not None else []),
        *(["--tls-certificate-path", str(tls[0]), "--tls-key-path", str(tls[1])] if tls else []),
        *extra_args,
    ]
    log = open(log_path, "wb")
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=folder)
    server = Server(port, folder / "unused.sqlite", process, log_path, list(extra_args),
                    tls=ssl.create_default_context(cafile=str(tls[0])) if tls else None)
    server.node_id = node_id
    return wait_until_healthy(server)


def direct_headers(path: Path, sources: str) -> Path:
    """Deploy/nginx/retrorapid-headers.conf with the nodes' game URLs in its `connect-src`, as an
    operator lays it out for game connections straight to the nodes."""
    shipped = (REPO / "Deploy/nginx/retrorapid-headers.conf").read_text()
    assert "connect-src 'self';" in shipped
    path.write_text(shipped.replace("connect-src 'self';", f"connect-src 'self' {sources};"))
    return path


@dataclass
class Cluster:
    """The nodes by id (`cluster.nodes["a"]`), nginx in front of them all, and the database URL
    when it is PostgreSQL."""

    nodes: dict
    proxy: NginxProxy | None
    database_url: str | None = None
    folder: Path | None = None

    def rows(self, sql: str) -> list[list[str]]:
        """A SELECT on the cluster's PostgreSQL database."""
        assert self.database_url, "this cluster runs on SQLite"
        return rows(self.database_url, sql)

    def stop(self):
        """nginx first, then every node gracefully (SIGTERM: games saved), killed if stuck."""
        if self.proxy is not None:
            self.proxy.stop()
        for node in self.nodes.values():
            if node.process.poll() is None:
                node.process.terminate()
        for node in self.nodes.values():
            try:
                node.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                node.process.kill()
                node.process.wait()


def start_cluster(folder: Path, database_args, node_ids=("a", "b"), extra_args=(), with_nginx=True,
                  cluster_secret: str | None = TEST_CLUSTER_SECRET, direct=False) -> Cluster:
    """Nodes `node_ids` on the database `database_args` names (`["--database-url", url]`),
    started one after another (the first migrates the database), all with `cluster_secret`, and
    nginx in front of them with Deploy/nginx/retrorapid-cluster.conf. Stop it with
    `Cluster.stop()`.

    `direct` lays the cluster out with game connections straight to the nodes
    (docs/OPERATIONS.md, "Game connections straight to the node"): each node serves TLS itself
    with the test certificate and says `--game-url wss://127.0.0.1:<its port>/ws`, allows the
    site's origin, and nginx's pages allow sockets to the nodes (their `connect-src`)."""
    # The cluster site names two nodes (its `# site:` upstream lines); more would need more lines.
    assert not with_nginx or len(node_ids) == 2, "Deploy/nginx/retrorapid-cluster.conf's upstream names two nodes"
    nodes = {}
    try:
        site_ports = (free_port(), free_port())
        ports = {node_id: free_port() for node_id in node_ids}
        tls, headers, per_node = None, None, {node_id: () for node_id in node_ids}
        if direct:
            (folder / "tls").mkdir(parents=True, exist_ok=True)
            tls = self_signed_certificate(folder / "tls")
            sources = ",".join(f"wss://127.0.0.1:{port}" for port in ports.values())
            per_node = {node_id: ("--game-url", f"wss://127.0.0.1:{port}/ws", "--game-url-sources", sources,
                                  "--allowed-origins", f"https://127.0.0.1:{site_ports[1]}")
                        for node_id, port in ports.items()}
            headers = direct_headers(folder / "nginx-headers.conf", sources.replace(",", " "))
        for node_id in node_ids:
            nodes[node_id] = start_node(folder / f"node-{node_id}", node_id, database_args, *extra_args, *per_node[node_id],
                                        cluster_secret=cluster_secret, port=ports[node_id], tls=tls)
        proxy = None
        if with_nginx:
            # The site's nodes a and b, in the order given (its /ws?node= map names a and b).
            proxy = start_nginx(folder / "nginx", [node.port for node in nodes.values()],
                                source_address=CLIENT_ADDRESS, site=DIRECT_SITE if direct else CLUSTER_SITE,
                                ports=site_ports, headers=headers, certificate=tls)
    except BaseException:
        Cluster(nodes, None).stop()
        raise
    url = None
    if list(database_args[:1]) == ["--database-url"] and str(database_args[1]).startswith("postgres"):
        url = database_args[1]
    return Cluster(nodes, proxy, url, folder)
