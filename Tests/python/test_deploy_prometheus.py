"""The Prometheus alert rules operators load (Deploy/prometheus/): promtool accepts them, its
unit tests show each alert firing on a node in trouble and none on a healthy one, and every
metric they name is one a real server exports (a renamed metric would silence an alert): a
single node on SQLite, and for the cluster's metrics a node on PostgreSQL."""

import re
import shutil
import subprocess
import time

from cluster import psql, start_node
from conftest import REPO

RULES = REPO / "Deploy/prometheus/retrorapid-alerts.yml"
RULE_TESTS = REPO / "Deploy/prometheus/retrorapid-alerts.test.yml"


def promtool():
    tool = shutil.which("promtool")
    assert tool, "promtool is not installed: `make test` installs Debian's prometheus (scripts/install-deps.sh)"
    return tool


def test_promtool_accepts_the_rules_and_their_unit_tests_pass():
    checked = subprocess.run([promtool(), "check", "rules", str(RULES)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "SUCCESS: 11 rules found" in checked.stdout
    tested = subprocess.run([promtool(), "test", "rules", str(RULE_TESTS)], capture_output=True, text=True,
                            cwd=RULE_TESTS.parent)
    assert tested.returncode == 0, tested.stdout + tested.stderr


def exported_metrics(server):
    exported = set()
    for line in server.request("GET", "/metrics").body.decode().splitlines():
        match = re.fullmatch(r"# TYPE (\S+) (counter|gauge|histogram)", line)
        if match:
            name, kind = match[1], match[2]
            exported |= {name + suffix for suffix in ("_bucket", "_sum", "_count")} if kind == "histogram" else {name}
    return exported


def test_every_metric_the_rules_name_is_exported_by_the_server(server, postgres_database_url, tmp_path):
    named = set(re.findall(r"\bretrorapid_[a-z_]+", RULES.read_text()))
    assert named, "no metric found in the rules"
    cluster_only = {name for name in named if name.startswith("retrorapid_cluster_")}
    assert cluster_only, "the rules name no cluster metric"
    assert named - cluster_only <= exported_metrics(server), sorted(named - cluster_only - exported_metrics(server))
    node = start_node(tmp_path / "node", "a", ["--database-url", postgres_database_url])
    try:
        assert cluster_only <= exported_metrics(node), sorted(cluster_only - exported_metrics(node))
    finally:
        node.process.terminate()
        node.process.wait(timeout=15)


def metric(node, name):
    for line in node.request("GET", "/metrics").body.decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    return None


def test_the_bus_alerts_read_what_a_node_says_when_its_bus_connection_is_cut(postgres_database_url, tmp_path):
    """The two bus alerts watch `retrorapid_cluster_bus_connected` and
    `retrorapid_cluster_bus_reconnects_total`: a real node whose bus connection PostgreSQL
    ends (as a database restart or a pooler would) counts the reconnect and is connected again."""
    node = start_node(tmp_path / "node", "a", ["--database-url", postgres_database_url])
    try:
        deadline = time.monotonic() + 10
        while metric(node, "retrorapid_cluster_bus_connected") != 1 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert metric(node, "retrorapid_cluster_bus_connected") == 1
        assert metric(node, "retrorapid_cluster_bus_reconnects_total") == 0
        ended = psql(postgres_database_url, "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                                            "WHERE datname = current_database() AND query LIKE 'LISTEN%'")
        assert ended.strip() == "1", ended
        deadline = time.monotonic() + 10
        while metric(node, "retrorapid_cluster_bus_reconnects_total") != 1 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert metric(node, "retrorapid_cluster_bus_reconnects_total") == 1
        assert metric(node, "retrorapid_cluster_bus_connected") == 1
    finally:
        node.process.terminate()
        node.process.wait(timeout=15)
