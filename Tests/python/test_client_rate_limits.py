"""The browser client under the limit on failed sign-ins (docs/PROTOCOL.md, `hello`): refused
with `too_many_failed_sign_ins`, it waits the `retryAfter` the server gave before it says hello
again, instead of knocking every half second, and then signs in."""

from test_client_support import browser, open_page, wait_for  # noqa: F401

UNKNOWN_TOKEN = "A" * 43


def test_the_page_waits_the_retry_after_of_a_refused_hello_then_signs_in(server_factory, browser):
    server = server_factory("--failed-sign-ins-per-address", "1/4")
    # One token that signs nobody in from this address (the browser's too): hellos are refused for 4 s.
    assert server.request("GET", "/api/v1/me", token=UNKNOWN_TOKEN).status == 401
    open_page(browser, server.base_url, "/")
    wait_for(browser, "window.__rr.socketIn.some((m) => m.type === 'welcome')", timeout=20)
    received = browser.execute_script("return window.__rr.socketIn.map((m) => m.code || m.type)")
    assert received[:2] == ["too_many_failed_sign_ins", "welcome"], received
