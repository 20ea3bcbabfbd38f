"""Buying unlimited play through the payment provider's hosted checkout, end to end: the real
server binary against the local stand-in for the provider (payment_provider_standin.py,
Stripe's API shape), real HTTP both ways."""

import json
import os
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from conftest import REPO, free_port
from payment_provider_standin import PaymentProviderStandIn

KEY, WEBHOOK_SECRET = "sk_test_4eC39HqLyjWDarjtT1zdp7dc", "whsec_test_standin_secret"


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def post_form(url):
    """A browser's form POST to the stand-in's page; returns (status, Location)."""
    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(urllib.request.Request(url, data=b"", method="POST"), timeout=10) as reply:
            return reply.status, reply.headers.get("Location")
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Location")


@pytest.fixture
def standin():
    provider = PaymentProviderStandIn(KEY, WEBHOOK_SECRET).start()
    yield provider
    provider.stop()


def selling_server(server_factory, standin, key=KEY, *extra):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    standin.webhook_url = base + "/api/v1/payments/webhook"
    return server_factory("--payment-provider-url", standin.url, "--payment-secret-key", key,
                          "--webhook-secret", WEBHOOK_SECRET, "--public-base-url", base, *extra, port=port)


def new_player(server):
    reply = server.request("POST", "/api/v1/players", {"displayName": "Buyer"})
    assert reply.status == 201, reply.body
    return reply.json()["token"]


def test_buying_opens_the_providers_checkout_and_only_its_signed_webhook_pays(server_factory, standin):
    server = selling_server(server_factory, standin)
    token = new_player(server)
    assert server.request("GET", "/api/v1/price", token=token).json()["purchasable"] is True

    reply = server.request("POST", "/api/v1/orders", token=token)
    assert reply.status == 201, reply.body
    order = reply.json()
    assert order["status"] == "pending"
    assert order["checkoutUrl"].startswith(standin.url + "/c/pay/cs_test_")
    # The provider got Stripe's fields, with our order and the return page.
    method, path, fields = standin.requests[-1]
    assert fields == {
        "mode": "payment",
        "line_items[0][price_data][currency]": "gbp",
        "line_items[0][price_data][unit_amount]": "299",
        "line_items[0][price_data][product_data][name]": "RetroRapid unlimited play",
        "line_items[0][quantity]": "1",
        "success_url": f"{server.base_url}/unlock.html?order={order['id']}&checkout=success",
        "cancel_url": f"{server.base_url}/unlock.html?order={order['id']}&checkout=cancelled",
        "client_reference_id": order["id"],
        "metadata[order]": order["id"],
    }

    # A second click (or a reload) gets the same order and page, and opens no second session.
    again = server.request("POST", "/api/v1/orders", token=token)
    assert again.status == 200 and again.json()["id"] == order["id"]
    assert again.json()["checkoutUrl"] == order["checkoutUrl"]
    assert len(standin.sessions) == 1
    listed = server.request("GET", "/api/v1/orders", token=token).json()["orders"]
    assert [(o["id"], o["status"], o["checkoutUrl"]) for o in listed] == [(order["id"], "pending", order["checkoutUrl"])]
    # Coming back from the provider is not paying: still pending, still limited.
    assert server.request("GET", "/api/v1/me", token=token).json()["entitlements"]["unlimited"] is False

    page = urllib.request.urlopen(order["checkoutUrl"], timeout=10).read().decode()
    assert ">Pay 2.99 GBP</button>" in page and "Cancel and go back" in page
    status, location = post_form(order["checkoutUrl"] + "/pay")
    assert (status, location) == (303, f"{server.base_url}/unlock.html?order={order['id']}&checkout=success")
    assert standin.deliveries[-1][0] == 200, standin.deliveries
    assert json.loads(standin.deliveries[-1][1])["outcome"] == "paid"

    paid = server.request("GET", f"/api/v1/orders/{order['id']}", token=token).json()
    assert paid["status"] == "paid" and paid["paidAt"] and "checkoutUrl" not in paid
    assert server.request("GET", "/api/v1/me", token=token).json()["entitlements"]["unlimited"] is True
    assert server.request("GET", "/api/v1/quota", token=token).json()["unlimited"] is True
    assert server.request("POST", "/api/v1/orders", token=token).status == 409


def test_a_cancelled_order_is_closed_at_the_provider_and_a_late_payment_still_pays_it(server_factory, standin):
    server = selling_server(server_factory, standin)
    token = new_player(server)
    order = server.request("POST", "/api/v1/orders", token=token).json()
    status, location = post_form(order["checkoutUrl"] + "/cancel")
    assert (status, location) == (303, f"{server.base_url}/unlock.html?order={order['id']}&checkout=cancelled")
    assert server.request("GET", f"/api/v1/orders/{order['id']}", token=token).json()["status"] == "pending"

    cancelled = server.request("POST", f"/api/v1/orders/{order['id']}/cancel", token=token)
    assert cancelled.status == 200, cancelled.body
    assert cancelled.json()["status"] == "cancelled" and cancelled.json()["cancelledAt"]
    assert "checkoutUrl" not in cancelled.json()
    assert server.request("POST", f"/api/v1/orders/{order['id']}/cancel", token=token).json()["status"] == "cancelled"
    # Buying again makes a new order with a new session.
    second = server.request("POST", "/api/v1/orders", token=token)
    assert second.status == 201 and second.json()["id"] != order["id"]
    assert [o["status"] for o in server.request("GET", "/api/v1/orders", token=token).json()["orders"]] == ["pending", "cancelled"]

    # The server asked the provider to close the cancelled order's page: paying there is refused.
    session_id = order["checkoutUrl"].rsplit("/", 1)[1]
    deadline = time.monotonic() + 10
    while standin.sessions[session_id]["status"] != "expired" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert standin.sessions[session_id]["status"] == "expired"
    assert ("POST", f"/v1/checkout/sessions/{session_id}/expire", {}) in standin.requests
    assert post_form(order["checkoutUrl"] + "/pay")[0] == 409
    assert server.request("GET", f"/api/v1/orders/{order['id']}", token=token).json()["status"] == "cancelled"

    # A payment that got through before the page closed is reported anyway: the money was
    # taken, so it pays the order.
    standin.sessions[session_id].update(status="complete", payment_status="paid")
    assert standin.send_completed(session_id)[0] == 200
    late = server.request("GET", f"/api/v1/orders/{order['id']}", token=token).json()
    assert late["status"] == "paid" and late["cancelledAt"]
    assert server.request("GET", "/api/v1/me", token=token).json()["entitlements"]["unlimited"] is True
    assert "payment arrived for a cancelled order" in server.log()
    # A paid order cannot be cancelled.
    refused = server.request("POST", f"/api/v1/orders/{order['id']}/cancel", token=token)
    assert refused.status == 409 and refused.json()["error"]["code"] == "conflict"


def test_a_wrong_secret_key_is_a_clear_error_and_stores_nothing(server_factory, standin):
    server = selling_server(server_factory, standin, "sk_test_wrong_key_1234")
    token = new_player(server)
    reply = server.request("POST", "/api/v1/orders", token=token)
    assert reply.status == 502, reply.body
    error = reply.json()["error"]
    assert error["code"] == "payment_provider_error"
    assert "payment key was refused" in error["message"] and "Invalid API Key" in error["message"]
    assert server.request("GET", "/api/v1/orders", token=token).json() == {"orders": []}
    assert standin.sessions == {}


def test_a_provider_that_does_not_answer_in_time_is_a_502_and_stores_nothing(server_factory, standin):
    standin.delay_seconds = 3
    server = selling_server(server_factory, standin, KEY, "--payment-timeout-seconds", "1")
    token = new_player(server)
    reply = server.request("POST", "/api/v1/orders", token=token)
    assert reply.status == 502 and "did not answer in time" in reply.json()["error"]["message"]
    assert server.request("GET", "/api/v1/orders", token=token).json() == {"orders": []}
    # The server kept serving while it waited.
    assert server.request("GET", "/healthz").status == 200


def test_without_a_provider_the_server_sells_nothing(server):
    token = new_player(server)
    assert server.request("GET", "/api/v1/price", token=token).json()["purchasable"] is False
    reply = server.request("POST", "/api/v1/orders", token=token)
    assert reply.status == 503 and reply.json()["error"]["code"] == "payments_unavailable"
    assert "code" in reply.json()["error"]["message"]
    assert server.request("GET", "/api/v1/orders", token=token).json() == {"orders": []}


def test_forged_stale_and_replayed_webhooks_pay_nothing_twice(server_factory, standin):
    server = selling_server(server_factory, standin)
    token = new_player(server)
    order = server.request("POST", "/api/v1/orders", token=token).json()
    session_id = order["checkoutUrl"].rsplit("/", 1)[1]
    standin.sessions[session_id].update(status="complete", payment_status="paid")
    payload = json.dumps(standin.completed_event(session_id, "evt_forged_1")).encode()

    def send(signature):
        return server.request("POST", "/api/v1/payments/webhook", raw=payload,
                              headers={"Content-Type": "application/json", "Stripe-Signature": signature})

    forged = send(standin.sign(payload, secret="whsec_someone_else"))
    assert forged.status == 401 and forged.json()["error"]["code"] == "unauthorized"
    stale = send(standin.sign(payload, timestamp=time.time() - 3600))
    assert stale.status == 401 and "ago" in stale.json()["error"]["message"]
    assert send("").status == 401
    assert server.request("GET", f"/api/v1/orders/{order['id']}", token=token).json()["status"] == "pending"

    # A completed session that is not paid yet (a delayed payment method) pays nothing.
    standin.sessions[session_id]["payment_status"] = "unpaid"
    unpaid = json.dumps(standin.completed_event(session_id, "evt_unpaid")).encode()
    reply = server.request("POST", "/api/v1/payments/webhook", raw=unpaid,
                           headers={"Content-Type": "application/json", "Stripe-Signature": standin.sign(unpaid)})
    assert reply.status == 200 and reply.json()["outcome"] == "ignored"
    assert server.request("GET", f"/api/v1/orders/{order['id']}", token=token).json()["status"] == "pending"

    standin.sessions[session_id]["payment_status"] = "paid"
    assert send(standin.sign(payload)).json()["outcome"] == "paid"
    assert send(standin.sign(payload)).json()["outcome"] == "already_handled"


def test_selling_without_the_webhook_secret_or_the_public_address_will_not_start(tmp_path):
    binary = os.environ.get("RETRORAPID_BINARY", str(REPO / ".build/debug/retrorapid"))
    common = [binary, "serve", "--port", str(free_port()), "--database-path", str(tmp_path / "db.sqlite"),
              "--migrations-path", str(REPO / "Migrations"), "--payment-secret-key", KEY]
    no_secret = subprocess.run(common + ["--public-base-url", "https://game.example.com"],
                               capture_output=True, text=True, timeout=30)
    assert no_secret.returncode != 0 and "webhook-secret" in no_secret.stderr + no_secret.stdout
    no_base = subprocess.run(common + ["--webhook-secret", WEBHOOK_SECRET], capture_output=True, text=True, timeout=30)
    assert no_base.returncode != 0 and "public-base-url" in no_base.stderr + no_base.stdout


def test_unlimited_play_granted_while_the_provider_opens_the_checkout_stores_no_order_and_closes_the_page(server_factory, standin):
    standin.gate = threading.Event()
    server = selling_server(server_factory, standin)
    created = server.request("POST", "/api/v1/players", {"displayName": "Racer"}).json()
    token = created["token"]
    answer = {}
    buying = threading.Thread(target=lambda: answer.update(reply=server.request("POST", "/api/v1/orders", token=token)))
    buying.start()
    deadline = time.monotonic() + 10
    while not standin.requests and time.monotonic() < deadline:
        time.sleep(0.02)
    # The operator grants unlimited play while the provider is still answering.
    binary = server.process.args[0]
    granted = subprocess.run([binary, "players", "grant-unlimited", created["player"]["id"], "--reason", "test",
                              *server.database_args, "--migrations", str(REPO / "Migrations")],
                             capture_output=True, text=True, timeout=30)
    assert granted.returncode == 0, granted.stderr
    standin.gate.set()  # now the provider answers
    buying.join(timeout=20)
    reply = answer["reply"]
    assert reply.status == 409 and reply.json()["error"]["code"] == "conflict"
    assert server.request("GET", "/api/v1/orders", token=token).json() == {"orders": []}
    # The session the provider opened is closed again, so nobody can pay for an unknown order.
    (session,) = standin.sessions.values()
    deadline = time.monotonic() + 10
    while session["status"] != "expired" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert session["status"] == "expired"


def test_purchases_sent_at_once_open_one_checkout_and_one_order(server_factory, standin):
    """Eight clicks (or tabs) at the same instant: one session at the provider, one order, and
    every answer names it."""
    standin.gate = threading.Event()  # the provider holds its answer until every click is in
    server = selling_server(server_factory, standin)
    token = new_player(server)
    replies = []
    clicks = [threading.Thread(target=lambda: replies.append(server.request("POST", "/api/v1/orders", token=token)))
              for _ in range(8)]
    for click in clicks:
        click.start()
    deadline = time.monotonic() + 10
    while not standin.requests and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(1.0)  # the other seven reach the server while the first session is being opened
    standin.gate.set()
    for click in clicks:
        click.join(timeout=20)
    assert len(replies) == 8
    assert sorted(reply.status for reply in replies) == [200] * 7 + [201], [r.body for r in replies]
    assert len({reply.json()["id"] for reply in replies}) == 1
    assert len(standin.sessions) == 1
    orders = server.request("GET", "/api/v1/orders", token=token).json()["orders"]
    assert [o["id"] for o in orders] == [replies[0].json()["id"]]


def test_opening_checkouts_is_limited_per_player_and_coming_back_costs_nothing(server_factory, standin):
    server = selling_server(server_factory, standin, KEY, "--checkout-sessions-per-player", "2/3600")
    token = new_player(server)
    for _ in range(2):
        order = server.request("POST", "/api/v1/orders", token=token)
        assert order.status == 201, order.body
        # Coming back to the open order is free.
        assert server.request("POST", "/api/v1/orders", token=token).status == 200
        assert server.request("POST", f"/api/v1/orders/{order.json()['id']}/cancel", token=token).status == 200
    refused = server.request("POST", "/api/v1/orders", token=token)
    assert refused.status == 429, refused.body
    assert refused.json()["error"]["code"] == "rate_limited"
    assert "You started too many purchases: at most 2 in any hour" in refused.json()["error"]["message"]
    assert 1 <= int(refused.headers["Retry-After"]) <= 3600
    assert len(standin.sessions) == 2
    assert len(server.request("GET", "/api/v1/orders", token=token).json()["orders"]) == 2
    # Another player is not held up.
    assert server.request("POST", "/api/v1/orders", token=new_player(server)).status == 201
    metrics = server.request("GET", "/metrics").body.decode()
    assert 'retrorapid_rate_limited_total{action="checkout_open",scope="player"} 1' in metrics


def test_a_webhook_for_another_session_amount_or_currency_pays_nothing(server_factory, standin):
    """A paid session pays only the order that opened it, at its price: one that merely names
    the order (`client_reference_id`, as a payment link lets anyone write) pays nothing."""
    server = selling_server(server_factory, standin)
    token = new_player(server)
    order = server.request("POST", "/api/v1/orders", token=token).json()
    session_id = order["checkoutUrl"].rsplit("/", 1)[1]
    # Another player's checkout: a real, paid session at the provider, for another order.
    other = server.request("POST", "/api/v1/orders", token=new_player(server)).json()
    other_session = other["checkoutUrl"].rsplit("/", 1)[1]
    for session in (session_id, other_session):
        standin.sessions[session].update(status="complete", payment_status="paid")

    def deliver(event):
        payload = json.dumps(event).encode()
        return server.request("POST", "/api/v1/payments/webhook", raw=payload,
                              headers={"Content-Type": "application/json", "Stripe-Signature": standin.sign(payload)})

    def naming_our_order(event_id, session=session_id, **fields):
        event = standin.completed_event(session, event_id)
        event["data"]["object"].update(client_reference_id=order["id"], metadata={"order": order["id"]}, **fields)
        return event

    refusals = {
        "evt_other_session": naming_our_order("evt_other_session", session=other_session),
        "evt_one_penny": naming_our_order("evt_one_penny", amount_total=1),
        "evt_no_amount": naming_our_order("evt_no_amount", amount_total=None),
        "evt_dollars": naming_our_order("evt_dollars", currency="usd"),
    }
    for event_id, event in refusals.items():
        reply = deliver(event)
        assert reply.status == 200, (event_id, reply.body)
        assert reply.json()["outcome"] == "refused" and reply.json()["order"] == order["id"], (event_id, reply.json())
        assert server.request("GET", f"/api/v1/orders/{order['id']}", token=token).json()["status"] == "pending", event_id
        assert server.request("GET", "/api/v1/me", token=token).json()["entitlements"]["unlimited"] is False, event_id
        # Recorded: the provider's retry of the same event is answered at once and pays nothing.
        assert deliver(event).json()["outcome"] == "already_handled", event_id
    assert server.query("SELECT count(*) FROM webhook_events WHERE order_id IS NULL")[0][0] == len(refusals)
    assert server.query("SELECT count(*) FROM unlimited_entitlements")[0][0] == 0
    assert server.query("SELECT status, provider_event_id FROM orders WHERE public_id = ?", (order["id"],)) == [("pending", None)]
    assert "payment webhook refused" in server.log()

    # The order's own session, for its own price, pays it.
    reply = deliver(standin.completed_event(session_id, "evt_own"))
    assert reply.status == 200 and reply.json()["outcome"] == "paid", reply.body
    assert server.request("GET", "/api/v1/me", token=token).json()["entitlements"]["unlimited"] is True
