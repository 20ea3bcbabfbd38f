"""A local stand-in for the payment provider, for the tests (the real one, Stripe, cannot be
reached from our machines). It implements the subset of Stripe's documented API the server
uses (docs/API.md, "Paying through a hosted checkout"):

- POST /v1/checkout/sessions: `Authorization: Bearer <secret key>`, a form-encoded body in
  Stripe's bracket notation; checks the key and the fields as Stripe does and answers the
  Session object (`id`, `url`, `expires_at`, ...) or Stripe's error shape
  `{"error": {"type", "code", "param", "message"}}` (401 for a wrong key, 400 for a missing,
  malformed or unknown parameter). `Idempotency-Key` repeats the first answer.
- GET /v1/checkout/sessions/{id}: the Session object.
- POST /v1/checkout/sessions/{id}/expire: closes an open session's page (`status` `expired`);
  400 for a session that is not open, as Stripe answers.
- GET /c/pay/{id}: the hosted checkout page, with a Pay and a Cancel button.
- POST /c/pay/{id}/pay: completes the session, sends the signed `checkout.session.completed`
  event to the webhook URL (`Stripe-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, "t.payload")>`),
  then redirects (303) to `success_url`. Stripe delivers webhooks on its own schedule; the
  stand-in delivers before the redirect so that tests are deterministic, and `deliver_webhooks
  = False` holds them back (to test the return page's "still pending").
- POST /c/pay/{id}/cancel: redirects (303) to `cancel_url`.

Run alone for trying the client by hand:
    python Tests/python/payment_provider_standin.py --port 12111 --secret-key sk_test_x \
        --webhook-secret whsec_x --webhook-url http://127.0.0.1:8080/api/v1/payments/webhook
"""

import argparse
import hashlib
import hmac
import html
import json
import re
import secrets
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# The create-session parameters this stand-in knows (Stripe knows many more; the server sends
# only these). Anything else is refused as Stripe refuses an unknown parameter.
KNOWN_PARAMETERS = {
    "mode", "success_url", "cancel_url", "client_reference_id", "expires_at",
    "line_items[0][price_data][currency]", "line_items[0][price_data][unit_amount]",
    "line_items[0][price_data][product_data][name]", "line_items[0][quantity]",
}
METADATA = re.compile(r"^metadata\[([^\[\]]{1,40})\]$")


class StripeError(Exception):
    def __init__(self, status, message, type_="invalid_request_error", code=None, param=None):
        super().__init__(message)
        self.status, self.body = status, {"error": {k: v for k, v in {
            "type": type_, "code": code, "param": param, "message": message}.items() if v is not None}}


class PaymentProviderStandIn:
    """Start with `start()`; `url` is its base URL (the server's --payment-provider-url)."""

    def __init__(self, secret_key="sk_test_standin", webhook_secret="whsec_standin", webhook_url=None):
        self.secret_key, self.webhook_secret, self.webhook_url = secret_key, webhook_secret, webhook_url
        self.sessions = {}          # id -> Session object
        self.requests = []          # (method, path, form fields) of every API call
        self.deliveries = []        # (status, body) of every webhook sent
        self.deliver_webhooks = True
        self.delay_seconds = 0.0    # how long each API call waits before answering
        self.gate = None            # a threading.Event new sessions wait for once recorded
        self._idempotent = {}
        self._lock = threading.Lock()
        self._httpd = None

    @property
    def url(self):
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def start(self, port=0):
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                standin._handle(self, "GET")

            def do_POST(self):
                standin._handle(self, "POST")

        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def stop(self):
        if self._httpd:
            self._httpd.shutdown()
            self._httpd.server_close()

    # MARK: - Requests

    def _handle(self, handler, method):
        path = urllib.parse.urlsplit(handler.path).path
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else b""
        try:
            if path == "/v1/checkout/sessions" and method == "POST":
                return self._json(handler, 200, self._create_session(handler, body))
            match = re.fullmatch(r"/v1/checkout/sessions/([A-Za-z0-9_]+)", path)
            if match and method == "GET":
                self._authenticate(handler)
                return self._json(handler, 200, self._session(match.group(1)))
            match = re.fullmatch(r"/v1/checkout/sessions/([A-Za-z0-9_]+)/expire", path)
            if match and method == "POST":
                self._authenticate(handler)
                return self._json(handler, 200, self._expire(match.group(1)))
            match = re.fullmatch(r"/c/pay/([A-Za-z0-9_]+)(/pay|/cancel)?", path)
            if match:
                return self._checkout(handler, method, self._session(match.group(1)), match.group(2))
            raise StripeError(404, f"Unrecognized request URL ({method}: {path}).")
        except StripeError as error:
            self._json(handler, error.status, error.body)

    def _authenticate(self, handler):
        header = handler.headers.get("Authorization", "")
        if not header.startswith("Bearer ") or not header[7:]:
            raise StripeError(401, "You did not provide an API key. Provide it in the Authorization header, "
                                   "using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY').")
        key = header[7:]
        if not hmac.compare_digest(key, self.secret_key):
            raise StripeError(401, f"Invalid API Key provided: {key[:8]}{'*' * max(0, len(key) - 12)}{key[-4:]}")

    def _create_session(self, handler, body):
        if self.delay_seconds:
            time.sleep(self.delay_seconds)
        self._authenticate(handler)
        if handler.headers.get("Content-Type", "").split(";")[0].strip() != "application/x-www-form-urlencoded":
            raise StripeError(400, "Invalid request: the body must be application/x-www-form-urlencoded.")
        try:
            pairs = urllib.parse.parse_qsl(body.decode("utf-8"), keep_blank_values=True, strict_parsing=bool(body))
        except (UnicodeDecodeError, ValueError):
            raise StripeError(400, "Invalid request: the body is not form-encoded.")
        fields, metadata = {}, {}
        for name, value in pairs:
            if name in fields or name in metadata:
                raise StripeError(400, f"Received the parameter {name} twice.", code="parameter_invalid", param=name)
            meta = METADATA.match(name)
            if meta:
                metadata[meta.group(1)] = value
            elif name in KNOWN_PARAMETERS:
                fields[name] = value
            else:
                raise StripeError(400, f"Received unknown parameter: {name}", code="parameter_unknown", param=name)
        with self._lock:
            self.requests.append(("POST", "/v1/checkout/sessions", dict(fields, **{f"metadata[{k}]": v for k, v in metadata.items()})))
        if self.gate is not None:
            self.gate.wait(30)
        key = handler.headers.get("Idempotency-Key")
        if key and key in self._idempotent:
            return self._idempotent[key]

        def required(name):
            if not fields.get(name):
                raise StripeError(400, f"Missing required param: {name}.", code="parameter_missing", param=name)
            return fields[name]

        if required("mode") != "payment":
            raise StripeError(400, "This stand-in supports mode=payment only.", code="parameter_invalid", param="mode")
        for name in ("success_url", "cancel_url"):
            if urllib.parse.urlsplit(required(name)).scheme not in ("http", "https"):
                raise StripeError(400, f"Not a valid URL", code="url_invalid", param=name)
        currency = required("line_items[0][price_data][currency]")
        if not re.fullmatch(r"[a-z]{3}", currency):
            raise StripeError(400, f"Invalid currency: {currency}.", code="parameter_invalid",
                              param="line_items[0][price_data][currency]")
        amount = required("line_items[0][price_data][unit_amount]")
        if not re.fullmatch(r"[0-9]{1,12}", amount):
            raise StripeError(400, "Invalid integer: " + amount, code="parameter_invalid",
                              param="line_items[0][price_data][unit_amount]")
        name = required("line_items[0][price_data][product_data][name]")
        quantity = required("line_items[0][quantity]")
        if not re.fullmatch(r"[1-9][0-9]{0,5}", quantity):
            raise StripeError(400, "Invalid integer: " + quantity, code="parameter_invalid", param="line_items[0][quantity]")

        session_id = "cs_test_" + secrets.token_urlsafe(24).replace("-", "A").replace("_", "B")
        now = int(time.time())
        session = {
            "id": session_id, "object": "checkout.session", "mode": "payment",
            "url": f"{self.url}/c/pay/{session_id}", "status": "open", "payment_status": "unpaid",
            "amount_total": int(amount) * int(quantity), "currency": currency, "created": now,
            "expires_at": int(fields.get("expires_at") or now + 24 * 3600),
            "client_reference_id": fields.get("client_reference_id"), "metadata": metadata,
            "success_url": fields["success_url"], "cancel_url": fields["cancel_url"],
            "livemode": False, "_product": name,
        }
        with self._lock:
            self.sessions[session_id] = session
        public = self._public(session)
        if key:
            self._idempotent[key] = public
        return public

    def _session(self, session_id):
        session = self.sessions.get(session_id)
        if session is None:
            raise StripeError(404, f"No such checkout.session: '{session_id}'", code="resource_missing", param="id")
        return self._public(session)

    def _expire(self, session_id):
        self._session(session_id)
        with self._lock:
            self.requests.append(("POST", f"/v1/checkout/sessions/{session_id}/expire", {}))
            stored = self.sessions[session_id]
            if stored["status"] != "open":
                raise StripeError(400, f"Only Checkout Sessions with a status in [\"open\"] can be expired. This Checkout "
                                       f"Session has a status of \"{stored['status']}\".", code="checkout_session_not_open")
            stored.update(status="expired")
        return self._public(stored)

    @staticmethod
    def _public(session):
        return {k: v for k, v in session.items() if not k.startswith("_")}

    # MARK: - The hosted page

    def _checkout(self, handler, method, session, action):
        stored = self.sessions[session["id"]]
        if method == "GET" and action is None:
            return self._page(handler, 200, stored)
        if method != "POST" or action is None:
            raise StripeError(405, "Method not allowed.")
        if action == "/cancel":
            return self._redirect(handler, stored["cancel_url"])
        if stored["status"] != "open":
            return self._page(handler, 409, stored, "This checkout is no longer open.")
        stored.update(status="complete", payment_status="paid")
        if self.deliver_webhooks:
            self.send_completed(session["id"])
        return self._redirect(handler, stored["success_url"].replace("{CHECKOUT_SESSION_ID}", session["id"]))

    def completed_event(self, session_id, event_id=None):
        """The checkout.session.completed event for a session, as Stripe sends it."""
        return {
            "id": event_id or "evt_" + secrets.token_hex(12), "object": "event", "api_version": "2024-06-20",
            "created": int(time.time()), "type": "checkout.session.completed", "livemode": False,
            "data": {"object": self._public(self.sessions[session_id])},
        }

    def sign(self, payload: bytes, timestamp=None, secret=None):
        t = str(int(time.time() if timestamp is None else timestamp))
        mac = hmac.new((secret or self.webhook_secret).encode(), t.encode() + b"." + payload, hashlib.sha256)
        return f"t={t},v1={mac.hexdigest()}"

    def send_completed(self, session_id, event_id=None):
        """Delivers the signed event to the webhook URL; returns (status, body)."""
        payload = json.dumps(self.completed_event(session_id, event_id), separators=(",", ":")).encode()
        request = urllib.request.Request(self.webhook_url, data=payload, method="POST", headers={
            "Content-Type": "application/json; charset=utf-8", "Stripe-Signature": self.sign(payload),
            "User-Agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)"})
        try:
            with urllib.request.urlopen(request, timeout=10) as reply:
                result = (reply.status, reply.read())
        except urllib.error.HTTPError as error:
            result = (error.code, error.read())
        with self._lock:
            self.deliveries.append(result)
        return result

    def _page(self, handler, status, session, notice=None):
        amount = f"{session['amount_total'] / 100:.2f} {session['currency'].upper()}"
        body = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,">
<title>Pay {html.escape(session['_product'])} (test payment page)</title>
<style>body{{font:1.1rem/1.5 sans-serif;margin:1rem;max-width:40rem}}
button{{min-height:44px;min-width:44px;font-size:1rem;padding:.5rem 1rem;margin:.25rem 0}}</style></head>
<body><main><h1>Pay for {html.escape(session['_product'])}</h1>
<p>Test payment page standing in for the payment provider: no card is charged.</p>
<p>Amount: <strong>{html.escape(amount)}</strong></p>
{f'<p role="alert">{html.escape(notice)}</p>' if notice else ''}
<form method="post" action="/c/pay/{session['id']}/pay"><button type="submit" id="pay">Pay {html.escape(amount)}</button></form>
<form method="post" action="/c/pay/{session['id']}/cancel"><button type="submit" id="cancel">Cancel and go back</button></form>
</main></body></html>"""
        data = body.encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "text/html; charset=utf-8")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    @staticmethod
    def _redirect(handler, location):
        handler.send_response(303)
        handler.send_header("Location", location)
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    @staticmethod
    def _json(handler, status, value):
        data = json.dumps(value).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=12111)
    parser.add_argument("--secret-key", default="sk_test_standin")
    parser.add_argument("--webhook-secret", default="whsec_standin")
    parser.add_argument("--webhook-url", default="http://127.0.0.1:8080/api/v1/payments/webhook")
    arguments = parser.parse_args()
    standin = PaymentProviderStandIn(arguments.secret_key, arguments.webhook_secret, arguments.webhook_url).start(arguments.port)
    print(f"payment provider stand-in on {standin.url}")
    threading.Event().wait()
