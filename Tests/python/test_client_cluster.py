"""The browser client behind a cluster: two real nodes on PostgreSQL with the real nginx in
front (Tests/python/cluster.py), headless Chromium on the play page through nginx over TLS.
A refusal that names the node holding what was asked for (an `error` with `node`) is followed
by Web/js/net/socket.js: it connects again to /ws?node=<node>, which nginx sends to that node,
and sends the refused message there, once; the page never shows the refusal
(docs/OPERATIONS.md, "Scale out"; docs/PROTOCOL.md, "Cluster").

The play page's own socket is shown following a refusal of `start` that is stood in for in
the page (no node refuses a start with a node): the socket's `start` on the node it reached is
held back and answered with an error naming the other node. Everything after it is real: the
new connection through nginx, the node it reaches (its own welcome says which), the `start`
sent again and the game that node holds. The last two need no stand-in: a real
`watch_elsewhere` and a real `room_elsewhere` from the node a GameSocket reached, followed to
the node of the game or the room."""

import asyncio

import pytest

from test_client_support import new_browser, open_page, wait_for
from test_cluster import ROOMY, cluster_database_url, cluster_factory  # noqa: F401
from ws_client import GameClient, create_player, nearest_safe_move, run

# Runs before the page's scripts: notes each game connection's URL and the node its welcome
# names, and stands in for node X refusing the first `refuse` starts with "go to the other".
STAND_IN = """
(() => {
  const state = { urls: [], welcomes: [], refused: [], refuse: %d };
  window.__cluster = state;
  window.__clusterSockets = [];
  const Real = window.WebSocket;
  window.WebSocket = function (url, ...rest) {
    const ws = new Real(url, ...rest);
    state.urls.push(String(url));
    window.__clusterSockets.push(ws);
    let node = null;
    ws.addEventListener("message", (event) => {
      try {
        const message = JSON.parse(event.data);
        if (message.type === "welcome") { node = message.node; state.welcomes.push(message.node); }
      } catch {}
    });
    const realSend = ws.send.bind(ws);
    ws.send = (data) => {
      const message = JSON.parse(data);
      if (message.type === "start" && node && state.refused.length < state.refuse) {
        const other = node === "a" ? "b" : "a";
        state.refused.push(node);
        const error = { type: "error", code: "stand_in_elsewhere", inReplyTo: "start", node: other,
                        message: `Stand-in refusal on node ${node}: this is held by node ${other}.` };
        setTimeout(() => ws.dispatchEvent(new MessageEvent("message", { data: JSON.stringify(error) })), 0);
        return;
      }
      return realSend(data);
    };
    return ws;
  };
  window.WebSocket.prototype = Real.prototype;
  Object.assign(window.WebSocket, { CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3 });
})();
"""


@pytest.fixture
def cluster(cluster_factory):  # noqa: F811
    return cluster_factory()


def browser_through(cluster, refuse):
    driver = new_browser()
    driver.execute_cdp_cmd("Security.setIgnoreCertificateErrors", {"ignore": True})  # nginx's self-signed test certificate
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": STAND_IN % refuse})
    open_page(driver, cluster.proxy.base_url, "/")
    wait_for(driver, "window.__cluster.welcomes.length === 1 && !document.getElementById('start').disabled")
    return driver


def module_socket(driver):
    """A GameSocket of the page's own module (Web/js/net/socket.js) on a connection of its own,
    as `window.__watcher`, its messages noted as its listeners get them; returns the node its
    welcome names."""
    driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        import("/js/net/socket.js").then(({ GameSocket }) => {
          const socket = new GameSocket();
          window.__watcher = { socket, messages: [] };
          socket.on("message", (m) => window.__watcher.messages.push(m));
          socket.connect();
          done();
        });
    """)
    wait_for(driver, "window.__watcher.socket.connected")
    return driver.execute_script("return window.__watcher.socket.welcome.node")


def state(driver):
    return driver.execute_script("return window.__cluster")


def test_a_start_refused_with_a_node_is_sent_again_on_that_node_and_the_game_runs_there(cluster):
    driver = browser_through(cluster, refuse=1)
    try:
        first = state(driver)["welcomes"][0]
        other = "b" if first == "a" else "a"
        driver.find_element("id", "start").click()
        wait_for(driver, "window.__rr.socketIn.some((m) => m.type === 'started')", timeout=20)
        seen = state(driver)
        assert seen["refused"] == [first]
        # One new connection, through nginx to the node named, whose welcome says so.
        assert len(seen["urls"]) == 2 and seen["urls"][1].endswith(f"/ws?node={other}"), seen["urls"]
        assert seen["welcomes"] == [first, other]
        # What reached a server (the held-back start never did): hello on each, then the
        # start again on the named node's connection.
        sent = driver.execute_script("return window.__rr.socketOut.map((m) => m.type).filter((t) => t !== 'ping')")
        assert sent == ["hello", "hello", "start"], sent
        # The game is the named node's, and the page shows it running, with no refusal.
        assert cluster.rows("SELECT node_id FROM game_holders") == [[other]]
        wait_for(driver, "document.getElementById('setup').hidden")
        assert driver.find_element("id", "start-message").text == ""
        announced = driver.execute_script("return window.__rr.announcements.join(' | ')")
        assert "Stand-in refusal" not in announced, announced
    finally:
        driver.quit()


def test_a_refusal_on_the_named_node_too_is_shown_and_not_followed_again(cluster):
    driver = browser_through(cluster, refuse=2)
    try:
        first = state(driver)["welcomes"][0]
        other = "b" if first == "a" else "a"
        driver.find_element("id", "start").click()
        wait_for(driver, "document.getElementById('start-message').textContent.includes('Stand-in refusal')", timeout=20)
        seen = state(driver)
        assert seen["refused"] == [first, other]
        assert seen["welcomes"] == [first, other] and len(seen["urls"]) == 2, seen
        assert f"held by node {first}" in driver.find_element("id", "start-message").text
        assert cluster.rows("SELECT count(*) FROM game_holders") == [["0"]]
        # The socket stays on that node and works: a new Start is the player's own choice.
        driver.find_element("id", "start").click()
        wait_for(driver, "window.__rr.socketIn.some((m) => m.type === 'started')", timeout=20)
        assert cluster.rows("SELECT node_id FROM game_holders") == [[other]]
        assert len(state(driver)["urls"]) == 2
    finally:
        driver.quit()


def test_a_reconnect_after_following_asks_for_the_same_node(cluster):
    driver = browser_through(cluster, refuse=1)
    try:
        first = state(driver)["welcomes"][0]
        other = "b" if first == "a" else "a"
        driver.find_element("id", "start").click()
        wait_for(driver, "window.__rr.socketIn.some((m) => m.type === 'started')", timeout=20)
        # The connection drops: the socket comes back to the node that holds its game, which
        # offers it back (welcome's `resumable`).
        driver.execute_script("window.__clusterSockets.at(-1).close(3000)")
        wait_for(driver, "window.__cluster.welcomes.length === 3", timeout=30)
        seen = state(driver)
        assert len(seen["urls"]) == 3 and seen["urls"][2].endswith(f"/ws?node={other}"), seen["urls"]
        assert seen["welcomes"][2] == other
        welcome = driver.execute_script("return window.__rr.socketIn.filter((m) => m.type === 'welcome').at(-1)")
        assert welcome["resumable"] is not None, welcome
    finally:
        driver.quit()


def test_a_real_watch_elsewhere_is_followed_to_the_game_and_its_frames_come(cluster):
    """No stand-in: the page's own GameSocket module (Web/js/net/socket.js) on a connection of its
    own, refused by the node it reached because the game it asks to watch runs on the other."""
    driver = browser_through(cluster, refuse=0)
    try:
        landed = module_socket(driver)
        other = "b" if landed == "a" else "a"
        token = create_player(cluster.proxy, "Watched")

        async def scenario():
            player = await GameClient.signed_in(cluster.proxy, token, query=f"?node={other}")
            assert player.welcome["node"] == other
            game_id = (await player.start("cruise"))["game"]["gameId"]
            driver.execute_script("window.__watcher.socket.send({ type: 'watch', gameId: arguments[0] })", game_id)
            steps = 0
            while steps < 4:
                message = await player.recv(timeout=10)
                if message["type"] == "step":
                    steps += 1
                    direction = nearest_safe_move(message)
                    if direction:
                        await player.send(type="move", direction=direction, step=message["step"])
            await asyncio.to_thread(wait_for, driver,
                                    "window.__watcher.messages.filter((m) => m.type === 'step').length >= 2")
            await player.send(type="quit")
            await player.expect("gameOver")
            await player.close()
            return game_id

        game_id = run(scenario())
        wait_for(driver, "window.__watcher.messages.some((m) => m.type === 'watchEnded')")
        types = driver.execute_script("return window.__watcher.messages.map((m) => m.type)")
        # The refusal never reached the listeners; two welcomes, the second from the game's node.
        assert "error" not in types, types
        welcomes = driver.execute_script("return window.__watcher.messages.filter((m) => m.type === 'welcome').map((m) => m.node)")
        assert welcomes == [landed, other], welcomes
        watching = driver.execute_script("return window.__watcher.messages.find((m) => m.type === 'watching')")
        assert watching["gameId"] == game_id
        urls = state(driver)["urls"]
        assert urls[-1].endswith(f"/ws?node={other}"), urls
    finally:
        driver.quit()


def test_a_real_room_elsewhere_is_followed_and_the_racer_joins_the_room_on_its_node(cluster):
    """The page's own GameSocket joins by code a room opened on the other node: refused
    room_elsewhere where it landed, it joins there, and the room's opener sees it come in."""
    driver = browser_through(cluster, refuse=0)
    try:
        landed = module_socket(driver)
        other = "b" if landed == "a" else "a"
        token = create_player(cluster.proxy, "Host")

        async def scenario():
            host = await GameClient.signed_in(cluster.proxy, token, query=f"?node={other}")
            assert host.welcome["node"] == other
            await host.send(type="openRoom", level="cruise", seats=2, practice=True)
            code = (await host.expect("room"))["room"]["code"]
            driver.execute_script("window.__watcher.socket.send({ type: 'joinRoom', code: arguments[0] })", code)
            joined = (await host.expect("room"))["room"]
            assert len(joined["racers"]) == 2, joined
            await host.close()
            return code

        code = run(scenario())
        wait_for(driver, "window.__watcher.messages.some((m) => m.type === 'room')")
        types = driver.execute_script("return window.__watcher.messages.map((m) => m.type)")
        assert "error" not in types, types
        room = driver.execute_script("return window.__watcher.messages.find((m) => m.type === 'room').room")
        assert room["code"] == code and room["you"] == 1, room
        welcomes = driver.execute_script("return window.__watcher.messages.filter((m) => m.type === 'welcome').map((m) => m.node)")
        assert welcomes == [landed, other], welcomes
        assert state(driver)["urls"][-1].endswith(f"/ws?node={other}")
    finally:
        driver.quit()
