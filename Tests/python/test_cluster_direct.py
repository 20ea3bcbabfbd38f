"""Game connections straight to the nodes (docs/OPERATIONS.md, "Game connections straight to the
node"): two real nodes on one PostgreSQL database, each serving TLS itself and saying its own
`--game-url`, with Debian's nginx in front running Deploy/nginx/retrorapid-cluster-direct.conf
(Tests/python/cluster.py, `direct=True`). A page's first game connection goes through nginx;
the node it reaches names its own game URL in `welcome`, and the client goes there, so no frame
of the game passes through nginx. A refusal that names the other node carries that node's URL.
A client that cannot reach a node straight plays through nginx as before."""

import asyncio
import json
import re
import time
from dataclasses import dataclass, field

import pytest

from cluster import CLUSTER_SITE, DIRECT_SITE, start_cluster
from conftest import free_port
from test_client_support import new_browser, open_page, wait_for
from test_cluster import ROOMY, cluster_database_url, directives  # noqa: F401
from ws_client import GameClient, create_player, nearest_safe_move, run


@pytest.fixture
def direct(cluster_database_url, tmp_path):  # noqa: F811
    cluster = start_cluster(tmp_path / "direct", ["--database-url", cluster_database_url], extra_args=ROOMY, direct=True)
    yield cluster
    cluster.stop()


@dataclass
class GameAddress:
    """Where a refusal sends a client: what ws_client.GameClient.open needs."""

    ws_url: str
    connect_options: dict = field(default_factory=dict)


def game_url(node):
    return f"wss://127.0.0.1:{node.port}/ws"


def front_game_connections(cluster):
    """The game connections nginx has relayed (its access log's /ws lines)."""
    log = (cluster.proxy.folder / "access.log").read_text()
    return [line for line in log.splitlines() if re.search(r'"GET /ws(\?\S*)? HTTP', line)]


def test_the_front_names_the_node_and_a_straight_connection_plays_there_with_nothing_through_nginx(direct):
    token = create_player(direct.proxy, "Straight")

    async def scenario():
        front = await GameClient.signed_in(direct.proxy, token)
        landed = front.welcome["node"]
        node = direct.nodes[landed]
        assert front.welcome["gameUrl"] == game_url(node), front.welcome
        await front.close()

        straight = await GameClient.signed_in(node, token)
        assert straight.welcome["node"] == landed and straight.welcome["gameUrl"] == game_url(node)
        started = await straight.start("cruise")
        steps = 0
        while steps < 6:
            message = await straight.recv(timeout=10)
            if message["type"] == "step":
                steps += 1
                direction = nearest_safe_move(message)
                if direction:
                    await straight.send(type="move", direction=direction, step=message["step"])
        await straight.send(type="quit")
        over = await straight.expect("gameOver")
        await straight.close()
        return landed, started["game"]["gameId"], over

    landed, game_id, over = run(scenario())
    assert over["gameId"] == game_id
    # The game ran on the node reached straight; nginx relayed one game connection, the first.
    assert direct.rows(f"SELECT end_reason FROM games WHERE public_id = '{game_id}'") == [["abandoned"]]  # quit: stored abandoned
    assert len(front_game_connections(direct)) == 1, front_game_connections(direct)
    # Both nodes know each other's address from the database.
    urls = dict(direct.rows("SELECT node_id, game_url FROM cluster_nodes ORDER BY node_id"))
    assert urls == {node_id: game_url(node) for node_id, node in direct.nodes.items()}, (urls, landed)


def test_a_refusal_naming_the_other_node_carries_that_nodes_game_url(direct):
    host_token, guest_token = create_player(direct.proxy, "Host"), create_player(direct.proxy, "Guest")
    a, b = direct.nodes["a"], direct.nodes["b"]

    async def scenario():
        host = await GameClient.signed_in(b, host_token)
        await host.send(type="openRoom", level="cruise", seats=2, practice=True)
        code = (await host.expect("room"))["room"]["code"]
        guest = await GameClient.signed_in(a, guest_token)
        # Node a learns b's address with its heartbeat (every 2 s): until then the refusal names
        # b alone, and the client goes through the front, which is still right.
        deadline = time.monotonic() + 10
        while True:
            await guest.send(type="joinRoom", code=code)
            refusal = await guest.expect("error")
            assert refusal["code"] == "room_elsewhere" and refusal["node"] == "b", refusal
            if "gameUrl" in refusal or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.5)
        assert refusal.get("gameUrl") == game_url(b), refusal
        # Followed: the guest joins on b, reached straight.
        moved = await GameClient.signed_in(GameAddress(refusal["gameUrl"], b.connect_options), guest_token)
        assert moved.welcome["node"] == "b"
        await moved.send(type="joinRoom", code=code)
        room = (await moved.expect("room"))["room"]
        assert len(room["racers"]) == 2, room
        for client in (host, guest, moved):
            await client.close()

    run(scenario())


def test_the_pages_a_node_serves_may_open_sockets_to_every_node(direct):
    for node in direct.nodes.values():
        policy = node.request("GET", "/").headers["Content-Security-Policy"]
        connect = next(part.split()[1:] for part in policy.split(";") if part.split()[:1] == ["connect-src"])
        # The site (--allowed-origins), its own game URL's origin, then the others'
        # (--game-url-sources), each once.
        others = [f"wss://127.0.0.1:{other.port}" for other in direct.nodes.values() if other is not node]
        site = f"wss://127.0.0.1:{direct.proxy.https_port}"
        assert connect == ["'self'", site, f"wss://127.0.0.1:{node.port}", *others], policy


def test_the_direct_site_differs_from_the_cluster_site_only_in_speaking_tls_to_the_nodes():
    cluster, direct = directives(CLUSTER_SITE), directives(DIRECT_SITE)
    ssl = [line for line in direct if line.startswith("proxy_ssl_")]
    assert [line.split()[0] for line in ssl] == [
        "proxy_ssl_verify", "proxy_ssl_verify_depth", "proxy_ssl_trusted_certificate", "proxy_ssl_name",
        "proxy_ssl_server_name", "proxy_ssl_protocols", "proxy_ssl_session_reuse"]
    assert "proxy_ssl_verify on;" in ssl
    rest = [line for line in direct if not line.startswith("proxy_ssl_")]
    assert len(rest) == len(cluster)
    differing = [(old, new) for old, new in zip(cluster, rest) if old != new]
    assert differing and all(old.startswith("proxy_pass http://") and new == old.replace("http://", "https://", 1)
                             for old, new in differing), differing
    assert not any(line.startswith("proxy_pass http://") for line in direct)


# Runs before the page's scripts: notes each game connection's URL, and with `instead` set
# stands in for what keeps a browser from a node: a socket to a node's own address goes to
# `instead` (a port nobody listens on, which the page's policy also leaves out, or a path of
# the node that is no game socket, which refuses the upgrade), and fails as it would.
SOCKETS = """
(() => {
  const state = { urls: [], instead: %s };
  window.__sockets = state;
  const Real = window.WebSocket;
  window.WebSocket = function (url, ...rest) {
    state.urls.push(String(url));
    const front = new URL(String(url)).port === location.port;
    if (front || state.instead === null) return new Real(url, ...rest);
    return new Real(state.instead === "refused" ? String(url).replace(/\\/ws$/, "/no-socket-here") : state.instead, ...rest);
  };
  window.WebSocket.prototype = Real.prototype;
  Object.assign(window.WebSocket, { CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3 });
})();
"""


def play_page(cluster, instead=None):
    driver = new_browser()
    driver.execute_cdp_cmd("Security.setIgnoreCertificateErrors", {"ignore": True})  # the test's self-signed certificate
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": SOCKETS % json.dumps(instead)})
    open_page(driver, cluster.proxy.base_url, "/")
    try:
        wait_for(driver, "!document.getElementById('start').disabled", timeout=20)
    except Exception as error:
        seen = driver.execute_script("return window.__sockets.urls")
        raise AssertionError(f"the page never got a game connection: sockets {seen}, console {driver.get_log('browser')}") from error
    return driver


def test_the_play_page_moves_its_game_connection_to_the_node_and_plays_there(direct):
    driver = play_page(direct)
    try:
        urls = driver.execute_script("return window.__sockets.urls")
        front = f"wss://127.0.0.1:{direct.proxy.https_port}/ws"
        assert len(urls) == 2 and urls[0] == front and urls[1] in {game_url(node) for node in direct.nodes.values()}, urls
        driver.find_element("id", "start").click()
        wait_for(driver, "window.__rr.socketIn.filter((m) => m.type === 'step').length >= 3", timeout=20)
        node_id = next(node_id for node_id, node in direct.nodes.items() if game_url(node) == urls[1])
        assert direct.rows("SELECT node_id FROM game_holders") == [[node_id]]
        # The pages heard one welcome (the straight connection's); the front's was the socket's.
        welcomes = driver.execute_script("return window.__rr.socketIn.filter((m) => m.type === 'welcome').length")
        assert welcomes == 2
        assert len(front_game_connections(direct)) == 1
        assert driver.execute_script("return window.__sockets.urls.length") == 2
    finally:
        driver.quit()


@pytest.mark.parametrize("blocked", ["by the page's policy", "refused"])
def test_a_page_that_cannot_reach_the_node_straight_plays_through_the_front(direct, blocked):
    # Chrome reports a socket the page's policy blocks with `error` alone; a refused one closes.
    instead = "refused" if blocked == "refused" else f"wss://127.0.0.1:{free_port()}/ws"
    driver = play_page(direct, instead)
    try:
        driver.find_element("id", "start").click()
        wait_for(driver, "window.__rr.socketIn.filter((m) => m.type === 'step').length >= 3", timeout=20)
        urls = driver.execute_script("return window.__sockets.urls")
        front = f"wss://127.0.0.1:{direct.proxy.https_port}/ws"
        # Front, the node straight (failed), then the front again, where it stays.
        assert urls[0] == front and urls[1].startswith("wss://127.0.0.1:") and urls[1] != front, urls
        assert all(url.startswith(front) for url in urls[2:]) and len(urls) == 3, urls
        assert direct.rows("SELECT count(*) FROM game_holders") == [["1"]]
    finally:
        driver.quit()
