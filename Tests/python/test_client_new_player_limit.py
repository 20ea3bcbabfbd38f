"""The browser client when the server refuses to create its player (429, docs/API.md "Limits"):
the page says plainly that too many new players joined from this network and when to try
again, in a polite live region, never "could not be reached"; Start says why rather than sit
disabled; the other pages still open; and once Retry-After has passed the page gets its player
by itself."""

from test_client_support import browser, describe_violations, open_page, run_axe, wait_for  # noqa: F401


def test_a_refused_new_player_is_told_the_wait_and_the_page_joins_by_itself_after_it(server_factory, browser):
    server = server_factory("--new-players-per-address", "1/6")
    # The one new player this address may create in 6 s: the browser's first visit is refused.
    assert server.request("POST", "/api/v1/players", {}).status == 201
    open_page(browser, server.base_url, "/")
    notice = wait_for(browser, "!document.getElementById('page-notice').hidden && document.getElementById('page-notice').textContent")
    assert "Too many new players joined from your network" in notice, notice
    assert "Try again in 1 min" in notice and "link code" in notice, notice
    assert "could not be reached" not in browser.execute_script("return document.body.innerText")
    wait_for(browser, "document.getElementById('announcer').textContent.includes('Too many new players')")
    # Focusable, so a page or a player can move to it.
    assert browser.execute_script("return document.getElementById('page-notice').tabIndex") == -1
    # Start is not silently disabled: pressing it says why, next to it, in its status region.
    start = browser.find_element("id", "start")
    assert start.is_enabled()
    start.click()
    message = wait_for(browser, "document.getElementById('start-message').textContent")
    assert "Try again in 1 min" in message, message
    assert browser.execute_script("return document.getElementById('start-message').getAttribute('role')") == "status"
    violations = run_axe(browser)
    assert violations == [], describe_violations(violations)
    # After Retry-After the page creates its player and connects, without a reload.
    wait_for(browser, "localStorage.getItem('retrorapid.token') !== null", timeout=20)
    wait_for(browser, "!document.getElementById('start').disabled && document.getElementById('page-notice').hidden", timeout=20)


def test_the_tutorial_still_opens_while_new_players_are_refused(server_factory, browser):
    server = server_factory("--new-players-per-address", "1/600")
    assert server.request("POST", "/api/v1/players", {}).status == 201
    open_page(browser, server.base_url, "/tutorial.html")
    notice = wait_for(browser, "!document.getElementById('page-notice').hidden && document.getElementById('page-notice').textContent")
    assert "Try again in 10 min" in notice, notice
    assert "could not be reached" not in browser.execute_script("return document.body.innerText")
