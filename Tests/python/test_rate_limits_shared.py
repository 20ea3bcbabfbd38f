"""The limits on guessing and on new players are counted in the database (docs/STORAGE.md,
"Rate limits"), not in each process's memory: two nodes on one PostgreSQL database allow
together exactly what one node allows, guesses sent to both at once included, and a server
started again on its database keeps counting where it left off."""

from concurrent.futures import ThreadPoolExecutor
from itertools import cycle

import pytest

from cluster import start_cluster
from conftest import start_server
from ws_client import create_player


def redeem(node, token, code):
    return node.request("POST", "/api/v1/codes/redeem", {"code": code}, token=token)


def new_player(node):
    return node.request("POST", "/api/v1/players", {})


def assert_rate_limited(reply):
    assert reply.status == 429, (reply.status, reply.body)
    assert 1 <= int(reply.headers["Retry-After"]) <= 600
    assert reply.json()["error"]["code"] == "rate_limited"


@pytest.fixture
def two_nodes(postgres_database_url, tmp_path):
    """Nodes a and b on one fresh PostgreSQL database, reached directly (both see the client as
    127.0.0.1, one address); the default of 5 failed codes per player, 3 new players per address."""
    cluster = start_cluster(tmp_path / "cluster", ["--database-url", postgres_database_url], with_nginx=False,
                            extra_args=("--new-players-per-address", "3/600"))
    yield cluster.nodes["a"], cluster.nodes["b"]
    cluster.stop()


def test_wrong_codes_sent_to_two_nodes_in_turn_get_one_nodes_limit(two_nodes):
    a, b = two_nodes
    token = create_player(a)
    statuses = [redeem(node, token, f"WRONG{index:04d}X").status for index, node in zip(range(12), cycle([a, b]))]
    assert statuses == [404] * 5 + [429] * 7
    assert_rate_limited(redeem(b, token, "WRONG9999X"))
    assert_rate_limited(redeem(a, token, "WRONG9998X"))


def test_wrong_codes_sent_to_two_nodes_at_once_get_one_nodes_limit(two_nodes):
    a, b = two_nodes
    token = create_player(a)

    def guess(index):
        return redeem((a, b)[index % 2], token, f"GUESS{index:05d}").status

    with ThreadPoolExecutor(max_workers=20) as pool:
        statuses = list(pool.map(guess, range(60)))
    assert statuses.count(404) == 5
    assert statuses.count(429) == 55


def test_new_players_from_one_address_on_two_nodes_get_one_nodes_limit(two_nodes):
    a, b = two_nodes
    statuses = [new_player(node).status for _, node in zip(range(6), cycle([a, b]))]
    assert statuses == [201, 201, 201, 429, 429, 429]
    assert "Too many new players from your address" in new_player(b).json()["error"]["message"]


def test_a_server_started_again_on_its_database_keeps_counting(tmp_path):
    folder = tmp_path / "server"
    flags = ("--failed-codes-per-player", "3/600", "--new-players-per-address", "2/600")
    first = start_server(folder, *flags)
    try:
        token = create_player(first)
        for guess in ("WRONG0001X", "WRONG0002X"):
            assert redeem(first, token, guess).status == 404
    finally:
        first.stop()
    second = start_server(folder, *flags)
    try:
        assert redeem(second, token, "WRONG0003X").status == 404
        assert_rate_limited(redeem(second, token, "WRONG0004X"))
        assert new_player(second).status == 201
        assert_rate_limited(new_player(second))
    finally:
        second.stop()
