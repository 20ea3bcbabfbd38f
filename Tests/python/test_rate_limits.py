"""Guessing bounded against the real binary (docs/API.md "Limits", docs/PROTOCOL.md): promo
codes per player and per address, link-code claims and device tokens per address (over HTTP
and in the WebSocket hello, one budget), 429 with Retry-After and the JSON error, the refusals
counted in /metrics, and honest use never held up. The limits are set small by flag."""

import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

from ws_client import GameClient, create_player, link_second_device, metric, run

UNKNOWN_TOKEN = "A" * 43  # a well-formed token that matches no device


def create_code(server, *arguments):
    args = server.process.args
    created = subprocess.run(
        [args[0], "codes", "create", *arguments, *server.database_args,
         "--migrations", args[args.index("--migrations-path") + 1]],
        capture_output=True, text=True, timeout=30)
    assert created.returncode == 0, created.stderr
    return created


def redeem(server, token, code):
    return server.request("POST", "/api/v1/codes/redeem", {"code": code}, token=token)


def assert_rate_limited(reply, *, at_most):
    """429, a Retry-After of whole seconds within the window, the API's JSON error."""
    assert reply.status == 429, (reply.status, reply.body)
    retry_after = int(reply.headers["Retry-After"])
    assert 1 <= retry_after <= at_most
    error = reply.json()["error"]
    assert error["code"] == "rate_limited"
    assert f"Try again in {retry_after} s" in error["message"]
    return error


def refused(server, action, scope):
    return metric(server, "retrorapid_rate_limited_total", action=action, scope=scope)


def test_wrong_codes_are_limited_per_player_and_a_valid_code_is_never_held_up(server_factory):
    server = server_factory("--failed-codes-per-player", "3/600")
    create_code(server, "ARCTICCONF", "--force", "--discount", "0.99", "--currency", "GBP")
    honest = create_player(server, "Honest")
    guesser = create_player(server, "Guesser")
    assert refused(server, "code_redeem", "player") == 0

    # A player who redeems one valid code, again and again, never spends a try.
    for _ in range(10):
        assert redeem(server, honest, "arctic-conf").status == 200

    for guess in ("ARCTICCON1", "ARCTICCON2", "ARCTICCON3"):
        assert redeem(server, guesser, guess).status == 404
    error = assert_rate_limited(redeem(server, guesser, "ARCTICCONF"), at_most=600)
    assert "You entered too many codes that did not work: at most 3 in any 10 minutes" in error["message"]
    assert refused(server, "code_redeem", "player") == 1
    # The honest player at the same address still redeems.
    assert redeem(server, honest, "ARCTICCONF").status == 200
    assert server.request("GET", "/api/v1/price", token=guesser).json()["amount"]["minorUnits"] == 299


def test_three_hundred_guesses_at_once_get_no_more_answers_than_the_default_limit(server):
    """The issue's attack, against the defaults: one token, 300 wrong codes as fast as it can."""
    token = create_player(server)

    def guess(index):
        return redeem(server, token, f"GUESS{index:05d}").status

    with ThreadPoolExecutor(max_workers=30) as pool:
        statuses = list(pool.map(guess, range(300)))
    assert statuses.count(404) == 5
    assert statuses.count(429) == 295
    assert refused(server, "code_redeem", "player") == 295


def test_wrong_codes_are_limited_per_address_across_players(server_factory):
    server = server_factory("--failed-codes-per-address", "4/600")
    for index in range(4):
        assert redeem(server, create_player(server), f"WRONG{index}XYZ").status == 404
    error = assert_rate_limited(redeem(server, create_player(server), "WRONG9XYZ"), at_most=600)
    assert "from your address" in error["message"]
    assert refused(server, "code_redeem", "address") == 1
    assert refused(server, "code_redeem", "player") == 0


def test_a_player_may_try_again_once_the_window_has_passed(server_factory):
    server = server_factory("--failed-codes-per-player", "1/2")
    create_code(server, "--random", "--unlock")
    token = create_player(server)
    assert redeem(server, token, "NOT-A-CODE-1").status == 404
    reply = redeem(server, token, "NOT-A-CODE-2")
    assert_rate_limited(reply, at_most=2)
    time.sleep(int(reply.headers["Retry-After"]) + 0.2)
    assert redeem(server, token, "NOT-A-CODE-2").status == 404


def test_unknown_tokens_are_limited_per_address_and_then_no_token_is_looked_up(server_factory):
    server = server_factory("--failed-sign-ins-per-address", "3/600")
    token = create_player(server)
    for _ in range(10):
        assert server.request("GET", "/api/v1/me", token=token).status == 200  # valid tokens cost nothing
    for guess in (UNKNOWN_TOKEN, "malformed", UNKNOWN_TOKEN):
        assert server.request("GET", "/api/v1/me", token=guess).status == 401
    error = assert_rate_limited(server.request("GET", "/api/v1/me", token=UNKNOWN_TOKEN), at_most=600)
    assert "signed nobody in" in error["message"]
    # From this address now, every token is refused unread, a valid one too.
    assert_rate_limited(server.request("GET", "/api/v1/quota", token=token), at_most=600)
    assert_rate_limited(redeem(server, token, "ANYTHING1"), at_most=600)
    # Asking without a token is no guess: still told to send one.
    assert server.request("GET", "/api/v1/me").status == 401
    assert refused(server, "sign_in", "address") == 3

    async def hello_refused():
        client = await GameClient.open(server)
        await client.send(type="hello", token=token)
        error = await client.expect_error("too_many_failed_sign_ins")
        assert error["inReplyTo"] == "hello"
        assert isinstance(error["retryAfter"], int) and 1 <= error["retryAfter"] <= 600
        assert f"Try again in {error['retryAfter']} s" in error["message"]
        code, reason = await client.closed()
        assert code == 4429 and "too many failed sign-ins" in reason
        assert [message["type"] for message in client.received] == ["error"]

    run(hello_refused())
    assert refused(server, "sign_in", "address") == 4


def test_failed_hellos_and_failed_http_sign_ins_share_one_budget(server_factory):
    server = server_factory("--failed-sign-ins-per-address", "3/600")
    token = create_player(server)

    async def bad_hello():
        client = await GameClient.open(server)
        await client.send(type="hello", token=UNKNOWN_TOKEN)
        await client.expect_error("unauthorized")
        code, _ = await client.closed()
        assert code == 4401

    async def good_hello_refused():
        client = await GameClient.open(server)
        await client.send(type="hello", token=token)
        await client.expect_error("too_many_failed_sign_ins")
        assert (await client.closed())[0] == 4429

    async def good_hello():
        client = await GameClient.signed_in(server, token)
        await client.close()

    for _ in range(5):
        run(good_hello())  # honest hellos cost nothing
    run(bad_hello())
    run(bad_hello())
    assert server.request("GET", "/api/v1/me", token=UNKNOWN_TOKEN).status == 401  # the third
    run(good_hello_refused())
    assert server.request("GET", "/api/v1/me", token=token).status == 429


def test_only_link_code_claims_that_fail_count(server_factory):
    server = server_factory("--failed-link-claims-per-address", "2/600")
    owner = create_player(server)
    for _ in range(3):
        link_second_device(server, owner)  # claims that join a device cost nothing
    for guess in ("ZZZZ-ZZZZ", "ZZZZ-ZZZY"):
        assert server.request("POST", "/api/v1/link-codes/claim", {"code": guess}).status == 404
    code = server.request("POST", "/api/v1/link-codes", token=owner).json()["code"]
    assert_rate_limited(server.request("POST", "/api/v1/link-codes/claim", {"code": code}), at_most=600)
    assert refused(server, "link_code_claim", "address") == 1


def test_new_players_are_limited_per_address_every_one_counted(server_factory):
    server = server_factory("--new-players-per-address", "3/600")
    for _ in range(3):
        create_player(server)
    error = assert_rate_limited(server.request("POST", "/api/v1/players", {}), at_most=600)
    assert "at most 3 in any 10 minutes" in error["message"]
    assert refused(server, "player_create", "address") == 1


def test_a_shared_address_gets_many_new_players_and_the_server_bounds_them_all(server_factory):
    # Behind a trusted proxy each request names its client, so one test speaks for many addresses.
    server = server_factory("--new-players-per-address", "4/600", "--new-players-per-server", "6/600",
                            "--trusted-proxies", "127.0.0.1")

    def new_player(address):
        return server.request("POST", "/api/v1/players", {}, headers={"X-Forwarded-For": address})

    for _ in range(4):  # a classroom behind one address
        assert new_player("192.0.2.1").status == 201
    assert_rate_limited(new_player("192.0.2.1"), at_most=600)
    for address in ("192.0.2.2", "192.0.2.3"):  # a script spread over addresses
        assert new_player(address).status == 201
    error = assert_rate_limited(new_player("192.0.2.4"), at_most=600)
    assert "joined this server" in error["message"] and "at most 6 in any 10 minutes" in error["message"]
    assert refused(server, "player_create", "server") == 1
    assert refused(server, "player_create", "address") == 1


def test_a_malformed_limit_stops_the_server_with_a_clear_message(tmp_path):
    from conftest import REPO
    import os
    binary = os.environ.get("RETRORAPID_BINARY", str(REPO / ".build/debug/retrorapid"))
    result = subprocess.run([binary, "serve", "--failed-codes-per-player", "5"], capture_output=True, text=True,
                            timeout=30, cwd=tmp_path)
    assert result.returncode != 0
    assert "--failed-codes-per-player expects COUNT/SECONDS" in result.stderr
