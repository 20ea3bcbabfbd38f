"""Two nodes on one PostgreSQL database behind nginx (Tests/python/cluster.py): what a player
does through one node reaches their devices on the other live (the LISTEN/NOTIFY bus), the
rules that count stay exact when both nodes race for them (the last free play, a code's cap),
the leaderboard is one, and the same holds through nginx running
Deploy/nginx/retrorapid-cluster.conf. docs/OPERATIONS.md, "Scale out"."""

import asyncio
import os
import re
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from cluster import CLUSTER_SITE, create_postgres_database, start_cluster
from conftest import REPO
from nginx_proxy import SITE
from ws_client import GameClient, create_player, link_second_device, play_to_score, run

# Room for the races below: 100 players from one address, 100 connections of one player.
ROOMY = ("--new-players-per-address", "1000/600", "--new-players-per-server", "1000/600",
         "--failed-codes-per-address", "1000/600", "--max-connections-per-ip", "200",
         "--max-http-connections-per-ip", "400")


@pytest.fixture
def cluster_database_url(request):
    """A fresh PostgreSQL database for this test: the suite's own fixture when it has one
    (scripts/with-test-postgres.sh's server), else one made here with psql."""
    try:
        return request.getfixturevalue("postgres_database_url")
    except pytest.FixtureLookupError:
        pass
    admin = os.environ.get("RETRORAPID_TEST_POSTGRES_URL")
    if not admin:
        if os.environ.get("RETRORAPID_REQUIRE_POSTGRES") == "1":
            pytest.fail("RETRORAPID_REQUIRE_POSTGRES=1 but RETRORAPID_TEST_POSTGRES_URL is not set")
        pytest.skip("the cluster needs PostgreSQL: set RETRORAPID_TEST_POSTGRES_URL (scripts/with-test-postgres.sh)")
    url, drop = create_postgres_database(admin)
    request.addfinalizer(drop)
    return url


@pytest.fixture
def cluster_factory(cluster_database_url, tmp_path):
    """Starts the cluster (nodes a and b, nginx) with extra flags on every node; stopped after."""
    started = []

    def start(*extra_args):
        cluster = start_cluster(tmp_path / f"cluster{len(started)}", ["--database-url", cluster_database_url],
                                extra_args=(*ROOMY, *extra_args))
        started.append(cluster)
        return cluster

    yield start
    for cluster in started:
        cluster.stop()


@pytest.fixture
def cluster(cluster_factory):
    return cluster_factory()


def other_device_id(node, token):
    devices = node.request("GET", "/api/v1/devices", token=token).json()["devices"]
    return next(device["id"] for device in devices if not device["current"])


def metric_value(node, name, **labels):
    wanted = ",".join(f'{key}="{value}"' for key, value in sorted(labels.items()))
    series = f"{name}{{{wanted}}}" if labels else name
    for line in node.request("GET", "/metrics").body.decode().splitlines():
        if line.startswith(series + " "):
            return float(line.split()[-1])
    return None


def eventually(read, wanted, seconds=10):
    """`read()` once it returns `wanted`, or its last value after `seconds` (a bound on a message
    that may still be on its way, not on speed)."""
    deadline = time.monotonic() + seconds
    value = read()
    while value != wanted and time.monotonic() < deadline:
        time.sleep(0.05)
        value = read()
    return value


def test_each_node_says_its_id_and_that_its_bus_listens(cluster):
    for node_id, node in cluster.nodes.items():
        assert re.search(rf"RetroRapid serving .*cluster\.bus=listening .*cluster\.node={node_id}\b", node.log()) or \
            re.search(rf"RetroRapid serving .*cluster\.node={node_id}\b.*cluster\.bus=listening", node.log()), node.log()
        assert metric_value(node, "retrorapid_cluster_bus_connected") == 1


def test_a_settings_change_through_node_a_reaches_the_players_device_on_node_b_live(cluster):
    a, b = cluster.nodes["a"], cluster.nodes["b"]
    first = create_player(a, "Ada")
    second = link_second_device(a, first)

    async def scenario():
        on_b = await GameClient.signed_in(b, second)
        written = a.request("PUT", "/api/v1/settings", {"cueVolume": 40, "theme": "dark"}, token=first,
                            headers={"If-Match": '"0"'})
        assert written.status == 200, written.body
        pushed = await on_b.expect("settings")
        assert pushed["document"]["version"] == 1
        assert pushed["document"]["settings"]["cueVolume"] == 40 and pushed["document"]["settings"]["theme"] == "dark"
        assert pushed["document"] == written.json()
        await on_b.close()

    run(scenario())
    assert metric_value(a, "retrorapid_cluster_messages_sent_total", kind="settings") == 1
    assert metric_value(b, "retrorapid_cluster_messages_received_total", kind="settings") == 1
    assert metric_value(b, "retrorapid_cluster_messages_sent_total", kind="settings") == 0


def test_a_device_revoked_through_node_a_loses_its_connection_on_node_b(cluster):
    a, b = cluster.nodes["a"], cluster.nodes["b"]
    first = create_player(a, "Owner")
    second = link_second_device(a, first)

    async def scenario():
        thief = await GameClient.signed_in(b, second)
        owner = await GameClient.signed_in(b, first)
        assert a.request("DELETE", f"/api/v1/devices/{other_device_id(a, first)}", token=first).status == 200
        error = await thief.expect_error("unauthorized")
        assert "signed out" in error["message"]
        code, reason = await thief.closed()
        assert code == 4401 and "signed out" in reason
        await owner.send(type="ping")
        await owner.expect("pong")  # the owner's own connection on b stays
        await owner.close()

    run(scenario())
    assert metric_value(b, "retrorapid_cluster_messages_received_total", kind="revoked") == 1


def entry_points(cluster, route):
    """Where the 100 racers go: alternately straight to a and b, or all through nginx (which
    takes turns between them)."""
    if route == "nginx":
        return [cluster.proxy] * 100
    return [cluster.nodes["a"], cluster.nodes["b"]] * 50


@pytest.mark.parametrize("route", ["nodes", "nginx"])
def test_one_play_left_and_100_starts_across_both_nodes_start_exactly_one_game(cluster_factory, route):
    cluster = cluster_factory("--daily-free-plays", "1")
    a = cluster.nodes["a"]
    token = create_player(a, "Racer")
    public_id = a.request("GET", "/api/v1/me", token=token).json()["player"]["id"]

    async def racer(entry):
        client = await GameClient.signed_in(entry, token)
        return client

    async def scenario():
        clients = await asyncio.gather(*(racer(entry) for entry in entry_points(cluster, route)))
        await asyncio.gather(*(client.send(type="start", level="cruise") for client in clients))

        async def answer(client):
            message, _ = await client.until(lambda m: m["type"] in ("started", "error"), timeout=20)
            return message

        answers = await asyncio.gather(*(answer(client) for client in clients))
        started = [client for client, message in zip(clients, answers) if message["type"] == "started"]
        refusals = sorted({message["code"] for message in answers if message["type"] == "error"})
        assert len(started) == 1, answers
        assert set(refusals) <= {"no_plays_left", "game_in_progress", "start_pending"}, refusals
        await started[0].send(type="quit")
        await started[0].expect("gameOver")
        for client in clients:
            await client.close()

    run(scenario())
    assert cluster.rows(f"SELECT count(*) FROM plays JOIN players ON players.id = plays.player_id "
                        f"WHERE players.public_id = '{public_id}'") == [["1"]]
    assert cluster.rows(f"SELECT count(*) FROM games JOIN players ON players.id = games.player_id "
                        f"WHERE players.public_id = '{public_id}'") == [["1"]]
    assert cluster.rows("SELECT count(*) FROM running_games") == [["0"]]
    for node in cluster.nodes.values():
        assert node.request("GET", "/api/v1/quota", token=token).json()["playsLeft"] == 0


def operator(cluster, *arguments):
    binary = str(Path(os.environ.get("RETRORAPID_BINARY", REPO / ".build/debug/retrorapid")).resolve())
    done = subprocess.run([binary, *arguments, "--database-url", cluster.database_url,
                           "--migrations-path", str(REPO / "Migrations")],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("route", ["nodes", "nginx"])
def test_a_code_capped_at_10_and_100_redeemers_across_both_nodes_unlock_exactly_10(cluster, route):
    operator(cluster, "codes", "create", "CLUSTER-CAP-10", "--force", "--unlock", "--max-redemptions", "10")
    entries = entry_points(cluster, route)
    tokens = [create_player(entry, f"Redeemer {index}") for index, entry in enumerate(entries)]

    def redeem(pair):
        entry, token = pair
        return entry.request("POST", "/api/v1/codes/redeem", {"code": "cluster-cap-10"}, token=token).status

    with ThreadPoolExecutor(max_workers=50) as pool:
        statuses = list(pool.map(redeem, zip(entries, tokens)))
    assert statuses.count(200) == 10, statuses
    assert statuses.count(410) == 90, statuses
    assert cluster.rows("SELECT redemption_count FROM promo_codes WHERE code = 'CLUSTERCAP10'") == [["10"]]
    assert cluster.rows("SELECT count(*) FROM code_redemptions") == [["10"]]
    assert cluster.rows("SELECT count(*) FROM unlimited_entitlements") == [["10"]]


def test_the_leaderboard_is_one_a_game_played_on_node_a_shows_on_node_b_and_through_nginx(cluster):
    a, b = cluster.nodes["a"], cluster.nodes["b"]
    token = create_player(a, "Ranked")
    over = play_to_score(a, token, "cruise", 3)
    assert over["score"] >= 3
    for entry in (b, a, cluster.proxy):
        board = entry.request("GET", "/api/v1/leaderboards/cruise/today").json()
        assert [(row["displayName"], row["score"]) for row in board["entries"]] == [("Ranked", over["score"])], board
    # And one played through nginx shows on both nodes.
    second = create_player(cluster.proxy, "Proxied")
    again = play_to_score(cluster.proxy, second, "cruise", 4)
    for entry in (a, b):
        scores = {row["displayName"]: row["score"] for row in entry.request("GET", "/api/v1/leaderboards/cruise/today").json()["entries"]}
        assert scores == {"Ranked": over["score"], "Proxied": again["score"]}, scores


def test_through_nginx_a_settings_change_reaches_the_other_device_whichever_node_each_landed_on(cluster):
    proxy = cluster.proxy
    first = create_player(proxy, "Proxied")
    second = link_second_device(proxy, first)

    async def scenario():
        device = await GameClient.signed_in(proxy, second)
        # nginx takes turns: of two writes in a row, one lands on each node, so one of them
        # reaches the device from the other node over the bus.
        for version, volume in ((0, 10), (1, 20)):
            written = proxy.request("PATCH", "/api/v1/settings", {"cueVolume": volume}, token=first,
                                    headers={"If-Match": f'"{version}"'})
            assert written.status == 200, written.body
            pushed = await device.expect("settings")
            assert (pushed["document"]["version"], pushed["document"]["settings"]["cueVolume"]) == (version + 1, volume)
        await device.close()

    run(scenario())
    sent = [metric_value(node, "retrorapid_cluster_messages_sent_total", kind="settings") for node in cluster.nodes.values()]
    assert sent == [1, 1], sent
    # The write that was local to the device's node reached the other node too, maybe just now.
    received = eventually(lambda: [metric_value(node, "retrorapid_cluster_messages_received_total", kind="settings")
                                   for node in cluster.nodes.values()], [1, 1])
    assert received == [1, 1], received


def test_a_node_that_stops_is_passed_over_and_its_players_go_on_on_the_other(cluster):
    proxy = cluster.proxy
    token = create_player(proxy, "Steady")
    a = cluster.nodes["a"]
    assert a.stop() == 0
    # Every request still answers: the first to try a goes on to b (proxy_next_upstream),
    # then nginx leaves a alone for a while (max_fails).
    for _ in range(10):
        assert proxy.request("GET", "/api/v1/me", token=token).status == 200
    over = play_to_score(proxy, token, "cruise", 2)
    assert over["score"] >= 2
    assert "connect() failed" in proxy.error_log()


def test_each_node_says_its_id_in_welcome(cluster):
    token = create_player(cluster.proxy, "Named")

    async def scenario():
        for node_id, node in cluster.nodes.items():
            client = await GameClient.signed_in(node, token)
            assert client.welcome["node"] == node_id, client.welcome
            await client.close()

    run(scenario())


def test_through_nginx_ws_node_x_lands_on_node_x_and_anything_else_on_any_node(cluster):
    """The game connection of a client told where its room or game is (`/ws?node=b`,
    docs/OPERATIONS.md "Scale out") reaches that node, whichever node nginx's turn would
    give; without a node, or with one no node has, connections take turns as before."""
    proxy = cluster.proxy
    token = create_player(proxy, "Routed")

    async def landed(query=""):
        client = await GameClient.signed_in(proxy, token, query=query)
        await client.close()
        return client.welcome["node"]

    async def scenario():
        # Twice each, in both orders, so taking turns alone could not land them all right.
        for node_id in ("a", "a", "b", "b", "a", "b"):
            assert await landed(f"?node={node_id}") == node_id
        assert await landed("?x=1&node=b") == "b"
        # (nginx compares map keys case-insensitively: `?node=A` would be node a.)
        for query in ("", "?node=", "?node=c", "?node=a%20", "?node=ab", "?other=b"):
            nodes = [await landed(query) for _ in range(4)]
            assert sorted(set(nodes)) == ["a", "b"], (query, nodes)

    run(scenario())


def test_a_client_asking_for_a_node_that_stopped_gets_another_whose_welcome_says_so(cluster):
    proxy = cluster.proxy
    token = create_player(proxy, "Rerouted")
    assert cluster.nodes["b"].stop() == 0

    async def scenario():
        for _ in range(3):
            client = await GameClient.signed_in(proxy, token, query="?node=b")
            assert client.welcome["node"] == "a"
            await client.close()

    run(scenario())


def test_the_rig_runs_two_nodes_behind_the_cluster_site_even_on_one_sqlite_file(tmp_path):
    """The rig itself and the nginx site, on what every checkout has: two nodes on one SQLite
    file (no bus: SQLite serves one node in production). nginx takes turns between them and
    passes over one that stopped."""
    shared = tmp_path / "shared.sqlite"
    cluster = start_cluster(tmp_path, ["--database-path", str(shared)], extra_args=ROOMY)
    try:
        a, b = cluster.nodes["a"], cluster.nodes["b"]
        assert re.search(r"cluster\.node=a\b", a.log()) and re.search(r"cluster\.node=b\b", b.log())
        token = create_player(cluster.proxy, "Shared")
        for _ in range(4):
            assert cluster.proxy.request("GET", "/api/v1/me", token=token).status == 200
        # Both nodes served some of them, each seeing the client behind nginx.
        for node in (a, b):
            assert re.search(r"request client\.address=127\.0\.0\.2 .*http\.path=/api/v1/me\b", node.log()), node.log()
        index = cluster.proxy.request("GET", "/")
        assert index.status == 200 and b"<html" in index.body
        assert b.stop() == 0
        for _ in range(6):
            assert cluster.proxy.request("GET", "/api/v1/me", token=token).status == 200
    finally:
        cluster.stop()


def directives(path):
    """The site's directives, one per line, without comments or blank lines."""
    lines = []
    for line in path.read_text().splitlines():
        text = line.split("#", 1)[0].strip()
        if text:
            lines.append(text)
    return lines


def test_the_cluster_site_differs_from_the_single_node_site_only_in_its_upstreams_retries_and_node_map():
    single, cluster = directives(SITE), directives(CLUSTER_SITE)

    def without_blocks(lines, openers):
        """The lines outside the blocks whose first line starts with one of `openers`."""
        kept, inside = [], False
        for line in lines:
            if line.startswith(openers):
                inside = True
            elif inside and line == "}":
                inside = False
            elif not inside:
                kept.append(line)
        return kept

    def common(lines):
        kept = without_blocks(lines, ("upstream retrorapid", "map $arg_node "))
        kept = [line for line in kept if not line.startswith("proxy_next_upstream")]
        # The game connection's proxy_pass is the one line of `location = /ws` that differs.
        ws = kept.index("location = /ws {")
        assert kept[ws + 1].startswith("proxy_pass "), kept[ws + 1]
        return kept[:ws + 1] + kept[ws + 2:], kept[ws + 1]

    (single_rest, single_ws), (cluster_rest, cluster_ws) = common(single), common(cluster)
    assert cluster_rest == single_rest
    assert (single_ws, cluster_ws) == ("proxy_pass http://retrorapid;", "proxy_pass http://$retrorapid_node;")

    def block(opener):
        start = cluster.index(opener)
        return cluster[start + 1:cluster.index("}", start)]

    upstream = block("upstream retrorapid {")
    nodes = [line for line in upstream if line.startswith("server ")]
    assert len(nodes) >= 2 and all("max_fails=" in line and "fail_timeout=" in line for line in nodes), nodes
    addresses = [line.split()[1] for line in nodes]
    # Each node of the map has an upstream of its own: that node first (with the same health
    # checks), then every other node as a backup, so a node that is down is passed over.
    routes = dict(line.rstrip(";").split() for line in block("map $arg_node $retrorapid_node {"))
    assert routes.pop("default") == "retrorapid"
    assert len(routes) == len(nodes), routes
    # (Which address is which node's, the routing test above proves by running it.)
    primaries = []
    for node_id, name in routes.items():
        servers = [line for line in block(f"upstream {name} {{") if line.startswith("server ")]
        primaries.append(servers[0])
        assert sorted(line.split()[1] for line in servers) == sorted(addresses), (node_id, servers)
        assert all(line.endswith(" backup;") for line in servers[1:]), servers
    assert sorted(primaries) == sorted(nodes), primaries
    assert "proxy_next_upstream error timeout http_502 http_504;" in cluster
    # nginx never repeats a POST or PATCH that reached a node unless told to: it must not be.
    assert not any("non_idempotent" in line for line in cluster)
