"""The operator console against the real binary (docs/OPERATIONS.md, "The console"): it answers
only on its own listener, signs in with an operator's password into an HttpOnly SameSite=Strict
session, refuses a change without the session's CSRF token, from another origin or by a viewer,
rate-limits sign-in, ends a disabled operator's session, and every change goes through the same
rules as the CLI into the same audit log. A device revoked from the console loses its open game
connection."""

import asyncio
import json
import os
import pwd
import re
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from conftest import REPO, free_port, start_server
from ws_client import GameClient, run

BINARY = str(Path(os.environ.get("RETRORAPID_BINARY", REPO / ".build/debug/retrorapid")).resolve())


class Console:
    """A browser's view of the console: its address, and the cookie jar of one session."""

    def __init__(self, port: int):
        self.base = f"http://127.0.0.1:{port}"
        self.cookie = None
        self.csrf = None

    def request(self, method, path, body=None, headers=None, csrf=True):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.base + path, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if self.cookie:
            request.add_header("Cookie", self.cookie)
        if csrf and self.csrf and method != "GET":
            request.add_header("X-CSRF-Token", self.csrf)
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=30) as reply:
                return reply.status, reply.headers, reply.read()
        except urllib.error.HTTPError as error:
            return error.code, error.headers, error.read()

    def json(self, method, path, body=None, **options):
        status, headers, raw = self.request(method, path, body, **options)
        return status, (json.loads(raw) if raw else None)

    def sign_in(self, name, password):
        status, headers, raw = self.request("POST", "/api/session", {"name": name, "password": password})
        if status == 200:
            self.cookie = headers["Set-Cookie"].split(";")[0]
            self.csrf = json.loads(raw)["csrfToken"]
        return status, headers, raw


# What the audit log calls whoever runs the CLI in these tests.
CLI_ACTOR = "cli:" + pwd.getpwuid(os.geteuid()).pw_name


def operator_command(server, *arguments):
    return subprocess.run([BINARY, *arguments, *server.database_args], capture_output=True, text=True, timeout=60)


def add_operator(server, name, role="admin"):
    result = operator_command(server, "operators", "add", name, "--role", role)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1].strip()


def console_server(server_factory, *extra, port=None):
    console_port = free_port()
    server = server_factory("--console-port", str(console_port), "--console-root", str(REPO / "Console"), *extra, port=port)
    server.console_port = console_port
    return server


def new_player(server, name="Console Test"):
    reply = server.request("POST", "/api/v1/players", {"displayName": name, "deviceLabel": "test"})
    assert reply.status == 201, reply.body
    return reply.json()


def grant_rows(server):
    return server.query("SELECT player_id FROM unlimited_entitlements")


def audit_rows(server):
    """The audit entries the console wrote (the CLI wrote the operator's own `operators.add`)."""
    return server.query("SELECT actor, action, subject, before_state, after_state FROM audit_log WHERE actor LIKE 'console:%' ORDER BY id")


def test_the_console_answers_only_on_its_own_listener_and_nothing_without_a_session(server_factory):
    server = console_server(server_factory)
    assert re.search(rf"Operator console on http://127\.0\.0\.1:{server.console_port}", server.log())
    # The players' address has no console: no API, no pages.
    assert server.request("GET", "/api/session").status == 404
    assert server.request("POST", "/api/session", {"name": "x", "password": "y"}).status == 404
    assert server.request("GET", "/players.html").status == 404
    assert server.request("GET", "/audit.html").status == 404
    console = Console(server.console_port)
    # The pages load (they hold no data); every API route but sign-in wants a session.
    assert console.request("GET", "/sign-in.html")[0] == 200
    player = new_player(server)
    for method, path, body in [("GET", "/api/session", None), ("GET", "/api/overview", None),
                               ("GET", "/api/players?query=x", None), ("GET", f"/api/players/{player['player']['id']}", None),
                               ("GET", "/api/audit", None),
                               ("POST", f"/api/players/{player['player']['id']}/unlimited", {"reason": "x"}),
                               ("DELETE", "/api/session", None)]:
        status, answer = console.json(method, path, body)
        assert status == 401, (method, path, status, answer)
        assert answer["error"]["code"] == "unauthorized"
    # A session token made up, or another server's, signs nobody in.
    console.cookie = "rr_console=" + "A" * 43
    assert console.json("GET", "/api/players?query=x")[0] == 401
    assert grant_rows(server) == [] and audit_rows(server) == []


def test_sign_in_makes_a_strict_http_only_session_and_sign_out_ends_it(server_factory):
    server = console_server(server_factory)
    password = add_operator(server, "ada")
    console = Console(server.console_port)
    status, _, raw = console.sign_in("ada", "wrong-password")
    assert status == 401 and json.loads(raw)["error"]["code"] == "unauthorized"
    status, _, raw = console.sign_in("nobody", password)
    assert status == 401
    # A body's worth of "password" is refused at once, not hashed 100,000 times.
    started = time.monotonic()
    status, _, raw = console.sign_in("ada", "x" * 60_000)
    assert status == 401 and time.monotonic() - started < 20
    # The password as printed, typed in lower case with spaces: it still matches.
    status, headers, raw = console.sign_in(" ADA ", password.lower().replace("-", " "))
    assert status == 200, raw
    cookie = headers["Set-Cookie"]
    assert re.fullmatch(r"rr_console=[A-Za-z0-9_-]{43}; Path=/; HttpOnly; SameSite=Strict", cookie), cookie
    assert json.loads(raw)["operator"] == {"name": "ada", "role": "admin"} and "site" not in json.loads(raw)
    assert console.json("GET", "/api/session")[1]["csrfToken"] == console.csrf
    # Signing out needs the CSRF token too.
    assert console.request("DELETE", "/api/session", csrf=False)[0] == 403
    status, headers, _ = console.request("DELETE", "/api/session")
    assert status == 204 and "Max-Age=0" in headers["Set-Cookie"]
    assert console.json("GET", "/api/session")[0] == 401
    assert "operator signed in" in server.log() and password not in server.log()


def test_sign_in_is_rate_limited_per_address_whatever_the_password(server_factory):
    server = console_server(server_factory, "--operator-sign-ins-per-address", "3/600")
    password = add_operator(server, "ada")
    console = Console(server.console_port)
    for _ in range(3):
        assert console.sign_in("ada", "not-it")[0] == 401
    status, headers, raw = console.sign_in("ada", password)
    assert status == 429, raw
    assert int(headers["Retry-After"]) >= 1
    assert json.loads(raw)["error"]["code"] == "rate_limited"
    # Counted in the database, so a restart does not reset it.
    server.stop()
    restarted = start_server(Path(server.log_path).parent, *server.extra_args, port=server.port)
    try:
        assert Console(server.console_port).sign_in("ada", password)[0] == 429
    finally:
        restarted.stop()


def test_a_change_without_the_csrf_token_or_from_another_origin_changes_nothing(server_factory):
    server = console_server(server_factory)
    console = Console(server.console_port)
    console.sign_in("ada", add_operator(server, "ada"))
    player = new_player(server)["player"]["id"]
    path = f"/api/players/{player}/unlimited"
    status, answer = console.json("POST", path, {"reason": "goodwill"}, csrf=False)
    assert status == 403 and answer["error"]["code"] == "csrf"
    status, answer = console.json("POST", path, {"reason": "goodwill"}, csrf=False, headers={"X-CSRF-Token": "A" * 43})
    assert status == 403 and answer["error"]["code"] == "csrf"
    status, answer = console.json("POST", path, {"reason": "goodwill"}, headers={"Origin": "https://evil.example"})
    assert status == 403 and answer["error"]["code"] == "forbidden"
    assert grant_rows(server) == [] and audit_rows(server) == []
    # The same change, from the console's own page with its token, goes through and is audited.
    status, answer = console.json("POST", path, {"reason": "goodwill"},
                                  headers={"Origin": f"http://127.0.0.1:{server.console_port}"})
    assert status == 200, answer
    assert answer["changed"] is True and answer["player"]["unlimited"]["reference"] == "goodwill"
    assert audit_rows(server) == [("console:ada", "players.grant-unlimited", player, "no unlimited play",
                                   "unlimited play (operator: goodwill)")]
    # Again: nothing changes, nothing more is written.
    status, answer = console.json("POST", path, {"reason": "again"})
    assert status == 200 and answer["changed"] is False
    assert len(audit_rows(server)) == 1


def test_a_viewer_sees_everything_and_changes_nothing(server_factory):
    server = console_server(server_factory)
    console = Console(server.console_port)
    status, _, raw = console.sign_in("vic", add_operator(server, "vic", role="viewer"))
    assert status == 200 and json.loads(raw)["operator"]["role"] == "viewer"
    created = new_player(server, "Viewer Test")
    player = created["player"]["id"]
    status, answer = console.json("GET", f"/api/players/{player}")
    assert status == 200 and answer["player"]["displayName"] == "Viewer Test"
    for path, body in [(f"/api/players/{player}/unlimited", {"reason": "x"}),
                       (f"/api/players/{player}/name", {"displayName": "Renamed"}),
                       (f"/api/players/{player}/devices/{answer['devices'][0]['id']}/revoke", None)]:
        status, refusal = console.json("POST", path, body)
        assert status == 403 and refusal["error"]["code"] == "forbidden", (path, refusal)
    assert grant_rows(server) == [] and audit_rows(server) == []
    assert server.query("SELECT display_name FROM players") == [("Viewer Test",)]


def test_a_disabled_operator_loses_the_session_they_have(server_factory):
    server = console_server(server_factory)
    console = Console(server.console_port)
    console.sign_in("ada", add_operator(server, "ada"))
    assert console.json("GET", "/api/audit")[0] == 200
    assert operator_command(server, "operators", "disable", "ada").returncode == 0
    status, answer = console.json("GET", "/api/audit")
    assert status == 401 and "disabled" in answer["error"]["message"]
    assert console.json("GET", "/api/session")[0] == 401


def test_players_are_found_by_id_display_name_or_device_and_renamed_by_the_display_name_rules(server_factory):
    server = console_server(server_factory)
    console = Console(server.console_port)
    console.sign_in("ada", add_operator(server, "ada"))
    first = new_player(server, "Speedy Sam")
    new_player(server, "Other")
    player = first["player"]["id"]
    device = server.query("SELECT d.id FROM devices d JOIN players p ON p.id = d.player_id WHERE p.public_id = ?", (player,))[0][0]
    for query in (player, player.lower(), "speedy sam", str(device)):
        status, answer = console.json("GET", f"/api/players?query={urllib.request.quote(query)}")
        assert status == 200 and [p["id"] for p in answer["players"]] == [player], (query, answer)
    assert console.json("GET", "/api/players?query=nobody")[1]["players"] == []
    status, answer = console.json("GET", "/api/players/NOPE12345678")
    assert status == 404
    # A name the players' rules refuse is refused here too, and changes nothing.
    status, answer = console.json("POST", f"/api/players/{player}/name", {"displayName": "x" * 25})
    assert status == 400 and answer["error"]["field"] == "displayName"
    assert audit_rows(server) == []
    status, answer = console.json("POST", f"/api/players/{player}/name", {"displayName": "Racer 1"})
    assert status == 200 and answer["player"]["player"]["displayName"] == "Racer 1"
    assert audit_rows(server) == [("console:ada", "players.rename", player, "display name Speedy Sam", "display name Racer 1")]
    # Unknown members of a body are refused, as on the players' API.
    status, answer = console.json("POST", f"/api/players/{player}/unlimited", {"reason": "x", "extra": 1})
    assert status == 400 and answer["error"]["code"] == "unknown_field"


def test_a_device_revoked_from_the_console_loses_its_open_game_connection(server_factory):
    server = console_server(server_factory)
    console = Console(server.console_port)
    console.sign_in("ada", add_operator(server, "ada"))
    created = new_player(server)
    player, token = created["player"]["id"], created["token"]
    device = console.json("GET", f"/api/players/{player}")[1]["devices"][0]["id"]

    async def scenario():
        client = await GameClient.signed_in(server, token)
        status, answer = await asyncio.to_thread(console.json, "POST", f"/api/players/{player}/devices/{device}/revoke")
        assert status == 200 and answer["changed"] is True, answer
        error = await client.expect_error("unauthorized")
        assert "signed out" in error["message"]
        code, _ = await client.closed()
        assert code == 4401

    run(scenario())
    # Its token signs nobody in any more, and the audit log says who did it.
    assert server.request("GET", "/api/v1/me", token=token).status == 401
    assert audit_rows(server)[-1][:3] == ("console:ada", "players.revoke-device", player)


def test_the_audit_log_shows_console_and_cli_changes_newest_first(server_factory):
    server = console_server(server_factory)
    console = Console(server.console_port)
    console.sign_in("ada", add_operator(server, "ada"))
    player = new_player(server)["player"]["id"]
    assert console.json("POST", f"/api/players/{player}/unlimited", {"reason": "from the console"})[0] == 200
    result = operator_command(server, "codes", "create", "--random", "--unlock")
    assert result.returncode == 0, result.stderr
    status, answer = console.json("GET", "/api/audit")
    assert status == 200
    actions = [(entry["actor"], entry["action"]) for entry in answer["entries"]]
    assert actions == [(CLI_ACTOR, "codes.create"), ("console:ada", "players.grant-unlimited"), (CLI_ACTOR, "operators.add")]
    ids = [entry["id"] for entry in answer["entries"]]
    assert ids == sorted(ids, reverse=True)
    status, older = console.json("GET", f"/api/audit?before={ids[0]}&limit=1")
    assert status == 200 and [entry["id"] for entry in older["entries"]] == [ids[1]]
    assert console.json("GET", "/api/audit?limit=0")[0] == 400
    assert console.json("GET", "/api/audit?before=-1")[0] == 400


def test_the_overview_counts_today_and_the_node(server_factory):
    server = console_server(server_factory)
    console = Console(server.console_port)
    console.sign_in("vic", add_operator(server, "vic", role="viewer"))
    token = new_player(server)["token"]
    second = new_player(server, "Second")["token"]
    third = new_player(server, "Third")["token"]

    async def scenario():
        client = await GameClient.signed_in(server, token)
        started = await client.start(level="cruise")
        watcher = await GameClient.signed_in(server, second)
        await watcher.send(type="watch", gameId=started["game"]["gameId"])
        await watcher.expect("watching")
        host = await GameClient.signed_in(server, third)
        await host.send(type="openRoom", level="cruise")
        await host.expect("room")
        status, answer = await asyncio.to_thread(console.json, "GET", "/api/overview")
        for each in (client, watcher, host):
            await each.close()
        return status, answer

    status, answer = run(scenario())
    assert status == 200, answer
    assert answer["today"]["newPlayers"] == 3 and answer["today"]["gamesFinished"] == 0
    assert answer["today"]["playsUsed"] == 1 and answer["today"]["ordersPaid"] == 0
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", answer["today"]["day"])
    assert answer["node"]["gamesRunning"] == 1 and answer["node"]["gameConnections"] == 3, answer
    assert answer["node"]["watchers"] == 1 and answer["node"]["raceRooms"] == 1, answer
    # On SQLite a node runs alone and lists no cluster; on PostgreSQL every node registers, so a
    # single node is a cluster of one holding the one running game. The charts' first sample was
    # taken when the console started.
    if server.database_url is None:
        assert answer["cluster"] == []
    else:
        assert [(node["gamesHeld"], node["id"]) for node in answer["cluster"]] == [(1, answer["node"]["id"])], answer
    assert len(answer["lastHour"]) >= 1 and set(answer["lastHour"][0]) == {"at", "gamesRunning", "gameConnections", "gamesEnded"}
    assert len(answer["lastDay"]) >= 1 and answer["lastDay"][-1]["mostGamesRunning"] >= 0


def test_codes_are_created_by_the_cli_strength_rules_listed_and_disabled(server_factory):
    server = console_server(server_factory)
    console = Console(server.console_port)
    console.sign_in("ada", add_operator(server, "ada"))
    # An easy code is refused, as by the CLI, unless insisted on; nothing is written meanwhile.
    status, answer = console.json("POST", "/api/codes", {"code": "SUMMER2026", "unlock": True})
    assert status == 400 and answer["error"]["field"] == "code" and "guess" in answer["error"]["message"], answer
    for body, field in [({"random": True}, "unlock"), ({"random": True, "code": "K7Q4M2XD9P3R", "unlock": True}, "code"),
                        ({"random": True, "discount": "0.999", "currency": "GBP"}, "discount"),
                        ({"random": True, "discount": "0.99"}, "currency"),
                        ({"random": True, "unlock": True, "expiresAt": "tomorrow"}, "expiresAt"),
                        ({"random": True, "unlock": True, "maxRedemptions": 0}, None)]:
        status, answer = console.json("POST", "/api/codes", body)
        assert status == 400, (body, answer)
        if field:
            assert answer["error"]["field"] == field, (body, answer)
    assert server.query("SELECT count(*) FROM promo_codes") == [(0,)] and audit_rows(server) == []

    status, random_code = console.json("POST", "/api/codes", {"random": True, "unlock": True, "maxRedemptions": 50,
                                                             "expiresAt": "2099-01-01T00:00:00Z"})
    assert status == 201, random_code
    assert re.fullmatch(r"[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}", random_code["grouped"])
    assert random_code["status"] == "live" and random_code["maxRedemptions"] == 50
    status, forced = console.json("POST", "/api/codes", {"code": "summer2026", "force": True, "discount": "0.99", "currency": "GBP"})
    assert status == 201 and forced["code"] == "SUMMER2026" and forced["kind"] == "discount to £0.99", forced
    status, answer = console.json("POST", "/api/codes", {"code": "SUMMER2026", "force": True, "unlock": True})
    assert status == 409, answer

    listed = console.json("GET", "/api/codes")[1]["codes"]
    assert sorted(code["code"] for code in listed) == sorted([random_code["code"], "SUMMER2026"])
    status, answer = console.json("POST", "/api/codes/summer2026/disable")
    assert status == 200 and answer["changed"] is True
    assert console.json("POST", "/api/codes/SUMMER2026/disable")[1]["changed"] is False
    assert console.json("POST", "/api/codes/NOSUCHCODE99/disable")[0] == 404
    assert {code["code"]: code["status"] for code in console.json("GET", "/api/codes")[1]["codes"]}["SUMMER2026"] == "disabled"
    assert [row[1:3] for row in audit_rows(server)] == [("codes.create", random_code["code"]), ("codes.create", "SUMMER2026"),
                                                       ("codes.disable", "SUMMER2026")]
    # A viewer sees them and changes none.
    viewer = Console(server.console_port)
    viewer.sign_in("vic", add_operator(server, "vic", role="viewer"))
    assert len(viewer.json("GET", "/api/codes")[1]["codes"]) == 2
    assert viewer.json("POST", "/api/codes", {"random": True, "unlock": True})[0] == 403


def test_orders_are_listed_by_state_show_the_providers_events_and_are_marked_paid(server_factory):
    from payment_provider_standin import PaymentProviderStandIn
    from test_payments import KEY, WEBHOOK_SECRET, post_form

    standin = PaymentProviderStandIn(KEY, WEBHOOK_SECRET).start()
    try:
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        standin.webhook_url = base + "/api/v1/payments/webhook"
        server = console_server(server_factory, "--payment-provider-url", standin.url, "--payment-secret-key", KEY,
                                "--webhook-secret", WEBHOOK_SECRET, "--public-base-url", base, port=port)
        console = Console(server.console_port)
        console.sign_in("ada", add_operator(server, "ada"))
        # The pages link games to the players' site when the server knows its address.
        assert console.json("GET", "/api/session")[1]["site"] == base
        buyer, waiter = new_player(server, "Buyer"), new_player(server, "Waiter")
        paid = server.request("POST", "/api/v1/orders", token=buyer["token"]).json()
        assert post_form(paid["checkoutUrl"] + "/pay")[0] == 303
        pending = server.request("POST", "/api/v1/orders", token=waiter["token"]).json()

        status, answer = console.json("GET", "/api/orders")
        assert status == 200 and [o["id"] for o in answer["orders"]] == [pending["id"], paid["id"]]
        assert answer["orders"][1]["playerID"] == buyer["player"]["id"] and answer["orders"][1]["amount"] == "£2.99"
        assert [o["id"] for o in console.json("GET", "/api/orders?status=paid")[1]["orders"]] == [paid["id"]]
        assert [o["id"] for o in console.json("GET", "/api/orders?status=pending")[1]["orders"]] == [pending["id"]]
        assert console.json("GET", "/api/orders?status=cancelled")[1]["orders"] == []
        assert console.json("GET", "/api/orders?status=refunded")[0] == 400

        status, detail = console.json("GET", f"/api/orders/{paid['id']}")
        assert status == 200 and [event["type"] for event in detail["events"]] == ["checkout.session.completed"], detail
        assert detail["order"]["paidBy"] == detail["events"][0]["id"]
        assert console.json("GET", "/api/orders/ord_nosuchorder")[0] == 404

        status, marked = console.json("POST", f"/api/orders/{pending['id']}/mark-paid", {"reason": "bank transfer"})
        assert status == 200 and marked["changed"] is True and marked["order"]["order"]["paidBy"] == "operator: bank transfer"
        assert server.request("GET", "/api/v1/me", token=waiter["token"]).json()["entitlements"]["unlimited"] is True
        assert console.json("POST", f"/api/orders/{pending['id']}/mark-paid", {"reason": "again"})[1]["changed"] is False
        assert console.json("POST", f"/api/orders/{pending['id']}/mark-paid", {"reason": " "})[0] == 400
        assert [row[1:3] for row in audit_rows(server)] == [("orders.mark-paid", pending["id"])]
    finally:
        standin.stop()
