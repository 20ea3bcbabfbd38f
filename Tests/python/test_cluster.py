"""Two nodes on one PostgreSQL database behind nginx (Tests/python/cluster.py): what a player
does through one node reaches their devices on the other live (the LISTEN/NOTIFY bus), the
rules that count stay exact when both nodes race for them (the last free play, a code's cap),
the leaderboard is one, and the same holds through nginx running
Deploy/nginx/retrorapid-cluster.conf. The bus is signed with the cluster secret: a database
role without it (and without any grant) cannot make a node act, a copy of a genuine message
is refused, a rotation drops nothing, and a node refuses to start without the secret.
docs/OPERATIONS.md, "Scale out" and "Signing the cluster bus"."""

import asyncio
import os
import re
import secrets
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from cluster import CLUSTER_SITE, create_postgres_database, node_binary, psql, psql_binary, start_cluster, start_node
from conftest import REPO, TEST_CLUSTER_SECRET, free_port
from nginx_proxy import SITE
from ws_client import GameClient, create_player, link_second_device, nearest_safe_move, play_to_score, run

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


# MARK: The bus is signed: a database role without the secret cannot make a node act


@pytest.fixture
def forger_url(cluster):
    """The cluster's database as a role made with `CREATE ROLE ... LOGIN` and nothing else (no
    grant of any kind), over the loopback server: any login on the same PostgreSQL server."""
    role = "forger_" + secrets.token_hex(4)
    psql(cluster.database_url, f"CREATE ROLE {role} LOGIN")
    parts = urlsplit(cluster.database_url)
    yield parts._replace(netloc=f"{role}@{parts.hostname}:{parts.port}").geturl()
    psql(cluster.database_url, f"DROP ROLE IF EXISTS {role}")


def psql_as(url, *commands):
    """psql as whoever `url` names, each of `commands` its own transaction; never raises."""
    arguments = [argument for command in commands for argument in ("-c", command)]
    return subprocess.run([psql_binary(), "-X", "-At", "-d", url, *arguments], capture_output=True, text=True, timeout=30)


async def play_on(client, seconds):
    """Plays `client`'s running game by the safe-lane cue for `seconds`; returns the types of
    the messages that came meanwhile."""
    seen = set()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            message = await client.recv(timeout=max(0.05, deadline - time.monotonic()))
        except asyncio.TimeoutError:
            break
        seen.add(message["type"])
        if message["type"] == "step":
            direction = nearest_safe_move(message)
            if direction:
                await client.send(type="move", direction=direction, step=message["step"])
    return seen


def test_a_role_without_grants_cannot_forge_a_revoke_a_release_or_settings(cluster, forger_url):
    a, b = cluster.nodes["a"], cluster.nodes["b"]
    owner = create_player(a, "Victim")
    second = link_second_device(a, owner)
    public_id = a.request("GET", "/api/v1/me", token=owner).json()["player"]["id"]
    [[player_id]] = cluster.rows(f"SELECT id FROM players WHERE public_id = '{public_id}'")
    [[first_device], [second_device]] = cluster.rows(f"SELECT id FROM devices WHERE player_id = {player_id} ORDER BY id")
    # The role can read nothing here...
    denied = psql_as(forger_url, "SELECT count(*) FROM devices")
    assert denied.returncode != 0 and "permission denied" in denied.stderr, denied

    async def scenario():
        victim = await GameClient.signed_in(b, owner)
        listener = await GameClient.signed_in(b, second)
        started = await victim.start("cruise")
        game_id = started["game"]["gameId"]
        # ...yet it may NOTIFY on the bus's channel, by function or by command.
        forged = [f"a|revoked|{player_id}|{first_device}", f"a|release|{game_id}|{player_id}|b",
                  f"a|settings|{player_id}|{second_device}|1"]
        sent = psql_as(forger_url, *(f"SELECT pg_notify('retrorapid_cluster', '{payload}')" for payload in forged),
                       f"NOTIFY retrorapid_cluster, 'a|revoked|{player_id}|{second_device}'")
        assert sent.returncode == 0, sent.stderr
        assert eventually(lambda: metric_value(b, "retrorapid_cluster_bus_rejected_total", reason="unsigned"), 4) == 4
        # The victim's game runs on and its connection stays; the other device is pushed nothing.
        seen = await play_on(victim, 2)
        assert "step" in seen and not seen & {"error", "detached", "gameOver"}, seen
        await victim.send(type="ping")
        await victim.expect("pong")
        await listener.send(type="ping")
        assert (await listener.recv())["type"] == "pong"
        await victim.send(type="quit")
        await victim.expect("gameOver")
        await victim.close()
        await listener.close()

    run(scenario())
    for kind in ("revoked", "release", "settings"):
        assert metric_value(b, "retrorapid_cluster_messages_received_total", kind=kind) == 0, kind
    assert metric_value(a, "retrorapid_cluster_bus_rejected_total", reason="unsigned") == 4
    for reason in ("bad_signature", "stale", "replayed", "malformed"):
        assert metric_value(b, "retrorapid_cluster_bus_rejected_total", reason=reason) == 0, reason
    assert "cluster bus dropped a notification: it is not signed" in b.log()
    assert cluster.rows("SELECT count(*) FROM devices WHERE revoked_at IS NOT NULL") == [["0"]]


def test_a_genuine_message_copied_by_a_listening_role_is_refused_as_a_replay(cluster, forger_url):
    a, b = cluster.nodes["a"], cluster.nodes["b"]
    owner = create_player(a, "Replayed")
    second = link_second_device(a, owner)
    # The role listens on the channel while a settings change through a goes out signed...
    listening = subprocess.Popen([psql_binary(), "-X", "-At", "-d", forger_url, "-c", "LISTEN retrorapid_cluster",
                                  "-c", "SELECT pg_sleep(3)"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1)
    written = a.request("PUT", "/api/v1/settings", {"cueVolume": 40}, token=owner, headers={"If-Match": '"0"'})
    assert written.status == 200, written.body
    out, err = listening.communicate(timeout=30)
    captured = re.findall(r'Asynchronous notification "retrorapid_cluster" with payload "([^"]*)"', out + err)
    assert len(captured) == 1 and captured[0].startswith("s1|"), (out, err)
    assert eventually(lambda: metric_value(b, "retrorapid_cluster_messages_received_total", kind="settings"), 1) == 1

    async def scenario():
        on_b = await GameClient.signed_in(b, second)
        # ...and sends it again: b took it already, so it is dropped, not pushed again.
        assert psql_as(forger_url, f"SELECT pg_notify('retrorapid_cluster', '{captured[0]}')").returncode == 0
        assert eventually(lambda: metric_value(b, "retrorapid_cluster_bus_rejected_total", reason="replayed"), 1) == 1
        await on_b.send(type="ping")
        assert (await on_b.recv())["type"] == "pong"
        await on_b.close()

    run(scenario())
    assert metric_value(b, "retrorapid_cluster_messages_received_total", kind="settings") == 1


def test_every_rejection_reason_shows_from_the_start_and_the_secret_is_never_logged(cluster):
    for node in cluster.nodes.values():
        for reason in ("unsigned", "bad_signature", "stale", "replayed", "malformed"):
            assert metric_value(node, "retrorapid_cluster_bus_rejected_total", reason=reason) == 0, reason
        assert metric_value(node, "retrorapid_cluster_bus_previous_secret_total") == 0
        assert TEST_CLUSTER_SECRET not in node.log()


def serve_refused(database_url, folder, **environment):
    """`retrorapid serve` on `database_url` that must exit by itself, its secret named only by
    `environment`."""
    folder.mkdir(parents=True, exist_ok=True)
    env = {name: value for name, value in os.environ.items() if not name.startswith("RETRORAPID_")}
    env.update(environment)
    return subprocess.run([node_binary(), "serve", "--host", "127.0.0.1", "--port", str(free_port()),
                           "--database-url", database_url, "--node-id", "c", "--web-root", str(REPO / "Web"),
                           "--migrations-path", str(REPO / "Migrations")],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=60)


def test_a_node_without_a_cluster_secret_or_with_a_short_one_refuses_to_start(cluster_database_url, tmp_path):
    missing = serve_refused(cluster_database_url, tmp_path / "missing")
    assert missing.returncode == 64, missing
    assert "cluster-secret is not set" in missing.stderr and "RETRORAPID_CLUSTER_SECRET" in missing.stderr
    assert "openssl rand -base64 48" in missing.stderr
    short = "only-twenty-nine-characters.."
    too_short = serve_refused(cluster_database_url, tmp_path / "short", RETRORAPID_CLUSTER_SECRET=short)
    assert too_short.returncode == 64, too_short
    assert "RETRORAPID_CLUSTER_SECRET expects a cluster secret of at least 32 characters, got 29" in too_short.stderr
    assert short not in too_short.stdout + too_short.stderr
    # Refused before the database is touched: nothing was migrated.
    assert psql(cluster_database_url, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").strip() == "0"


def test_a_rotation_step_by_step_drops_no_message(cluster_database_url, tmp_path):
    """Old secret O, new secret N, one node restarted at a time as docs/OPERATIONS.md says:
    both accept N, then sign with N keeping O, then forget O. At every step a device revoked
    through a loses its connection on b."""
    old, new = "old-cluster-secret-" + secrets.token_hex(16), "new-cluster-secret-" + secrets.token_hex(16)
    steps = [((old, new), (old, None)),
             ((old, new), (old, new)),
             ((new, old), (old, new)),
             ((new, old), (new, old)),
             ((new, None), (new, old))]
    for index, pair in enumerate(steps):
        clusters = []
        try:
            for node_id, (current, previous) in zip(("a", "b"), pair):
                extra = ("--cluster-secret-previous", previous) if previous else ()
                clusters.append(start_cluster(tmp_path / f"step{index}", ["--database-url", cluster_database_url],
                                              node_ids=(node_id,), extra_args=extra, with_nginx=False,
                                              cluster_secret=current))
            a, b = clusters[0].nodes["a"], clusters[1].nodes["b"]
            owner = create_player(a, f"Rotating {index}")
            second = link_second_device(a, owner)

            async def scenario():
                thief = await GameClient.signed_in(b, second)
                assert a.request("DELETE", f"/api/v1/devices/{other_device_id(a, owner)}", token=owner).status == 200
                code, _ = await thief.closed()
                assert code == 4401, index

            run(scenario())
            assert metric_value(b, "retrorapid_cluster_bus_rejected_total", reason="bad_signature") == 0, index
        finally:
            for started in clusters:
                started.stop()


def test_a_device_revoked_from_the_console_on_node_a_loses_its_connection_on_node_b(cluster_factory):
    from test_console import Console
    cluster = cluster_factory("--console-port", "0", "--console-root", str(REPO / "Console"))
    a, b = cluster.nodes["a"], cluster.nodes["b"]
    console_port = int(re.search(r"Operator console on http://127\.0\.0\.1:(\d+)", a.log())[1])
    added = subprocess.run([node_binary(), "operators", "add", "ada", "--role", "admin", "--database-url", cluster.database_url],
                           capture_output=True, text=True, timeout=60)
    assert added.returncode == 0, added.stderr
    console = Console(console_port)
    assert console.sign_in("ada", added.stdout.strip().splitlines()[-1].strip())[0] == 200
    token = create_player(a, "Stolen Phone")
    player = a.request("GET", "/api/v1/me", token=token).json()["player"]["id"]

    async def scenario():
        thief = await GameClient.signed_in(b, token)
        device = (await asyncio.to_thread(console.json, "GET", f"/api/players/{player}"))[1]["devices"][0]["id"]
        status, answer = await asyncio.to_thread(console.json, "POST", f"/api/players/{player}/devices/{device}/revoke")
        assert status == 200 and answer["changed"] is True, answer
        error = await thief.expect_error("unauthorized")
        assert "signed out" in error["message"]
        code, _ = await thief.closed()
        assert code == 4401

    run(scenario())
    assert metric_value(b, "retrorapid_cluster_messages_received_total", kind="revoked") == 1
    # The overview of either node lists both, with their heartbeats.
    status, overview = console.json("GET", "/api/overview")
    assert status == 200 and [node["id"] for node in overview["cluster"]] == ["a", "b"], overview


def test_a_node_with_another_lease_than_a_live_node_is_refused_at_start_and_joins_nothing(cluster, tmp_path):
    refused = serve_refused(cluster.database_url, tmp_path / "longer", RETRORAPID_CLUSTER_SECRET=TEST_CLUSTER_SECRET,
                            RETRORAPID_CLUSTER_HEARTBEAT_SECONDS="3", RETRORAPID_CLUSTER_LEASE_SECONDS="9")
    assert refused.returncode != 0, refused
    assert "runs with a lease of 6 s and this one with 9 s" in refused.stderr, refused.stderr
    assert "--cluster-lease-seconds" in refused.stderr
    assert cluster.rows("SELECT node_id, lease_seconds FROM cluster_nodes ORDER BY node_id") == [["a", "6"], ["b", "6"]]
    # The same lease as the live nodes joins.
    same = start_node(tmp_path / "same", "c", ["--database-url", cluster.database_url])
    try:
        assert cluster.rows("SELECT count(*) FROM cluster_nodes") == [["3"]]
    finally:
        same.process.terminate()
        same.process.wait(timeout=15)
