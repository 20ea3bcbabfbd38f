"""The operator console's pages in real headless Chromium: signed in with the keyboard alone,
a player found and looked after, and axe-core finding nothing on any page in any display mode
(light, dark, more contrast, forced colours, reduced motion, 200 % text, phones, 200 % zoom)."""

import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import REPO, free_port, start_server
from test_client_pages import axe_in_every_mode
from test_client_support import Keys, browser_errors, describe_violations, new_browser, open_page, press, wait_for  # noqa: F401
from ws_client import GameClient, run

BINARY = str(Path(os.environ.get("RETRORAPID_BINARY", REPO / ".build/debug/retrorapid")).resolve())


@pytest.fixture(scope="module")
def console_server(tmp_path_factory):
    port = free_port()
    server = start_server(tmp_path_factory.mktemp("console-server"), "--console-port", str(port),
                          "--console-root", str(REPO / "Console"))
    server.console_url = f"http://127.0.0.1:{port}"
    added = subprocess.run([BINARY, "operators", "add", "ada", "--role", "admin", *server.database_args],
                           capture_output=True, text=True, timeout=60)
    assert added.returncode == 0, added.stderr
    server.password = added.stdout.strip().splitlines()[-1].strip()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def browser():
    driver = new_browser(record=False)
    yield driver
    driver.quit()


def unexpected_errors(browser):
    """The console's errors but the one the test asked for: a wrong password's 401."""
    return [error for error in browser_errors(browser) if "/api/session - Failed to load resource" not in error]


def sign_in_with_the_keyboard(browser, server, next_page=""):
    open_page(browser, server.console_url, "/sign-in.html" + next_page)
    # Tab from the top: the skip link, then the name, the password, the button.
    press(browser, Keys.TAB)
    assert browser.switch_to.active_element.get_attribute("class") == "skip-link"
    press(browser, Keys.TAB)
    assert browser.switch_to.active_element.get_attribute("id") == "name"
    press(browser, *"ada", Keys.TAB)
    press(browser, *server.password, Keys.ENTER)


def test_a_wrong_password_is_said_and_focused_then_the_keyboard_signs_in(console_server, browser):
    open_page(browser, console_server.console_url, "/sign-in.html")
    browser.find_element("id", "name").send_keys("ada")
    browser.find_element("id", "password").send_keys("not-the-password", Keys.ENTER)
    wait_for(browser, "!document.getElementById('sign-in-error').hidden")
    assert browser.switch_to.active_element.get_attribute("id") == "sign-in-error"
    assert "do not sign in" in browser.find_element("id", "sign-in-error").text
    assert browser.find_element("id", "sign-in-error").get_attribute("role") == "alert"

    sign_in_with_the_keyboard(browser, console_server)
    wait_for(browser, "location.pathname === '/index.html' && document.documentElement.dataset.ready === 'true'")
    assert "Signed in as ada (admin)" in browser.find_element("css selector", "header.console").text
    assert browser.find_element("css selector", "nav a[aria-current=page]").text == "Overview"
    # The session cookie is HttpOnly: no script on the page can read it.
    assert "rr_console" not in browser.execute_script("return document.cookie")
    assert unexpected_errors(browser) == []


def test_a_player_is_found_renamed_and_their_device_revoked_closing_its_game(console_server, browser):
    created = console_server.request("POST", "/api/v1/players", {"displayName": "Rude Name", "deviceLabel": "phone"}).json()
    player, token = created["player"]["id"], created["token"]
    open_page(browser, console_server.console_url, "/players.html")
    if browser.execute_script("return location.pathname") != "/players.html":
        sign_in_with_the_keyboard(browser, console_server, "?next=players.html")
        wait_for(browser, "location.pathname === '/players.html' && document.documentElement.dataset.ready === 'true'")

    async def scenario():
        client = await GameClient.signed_in(console_server, token)
        search = browser.find_element("id", "query")
        search.send_keys("rude name", Keys.ENTER)
        wait_for(browser, "!document.getElementById('player').hidden")
        assert browser.switch_to.active_element.get_attribute("id") == "player-heading"
        assert browser.find_element("id", "player-heading").text == "Player Rude Name"

        browser.find_element("id", "rename-name").send_keys("Racer 7", Keys.ENTER)
        wait_for(browser, "document.getElementById('player-heading').textContent === 'Player Racer 7'")
        wait_for(browser, "document.getElementById('status').textContent === 'Display name changed.'")

        browser.find_element("id", "grant-reason").send_keys("wrote in: lost purchase", Keys.ENTER)
        wait_for(browser, "document.getElementById('status').textContent === 'Unlimited play granted.'")
        facts = browser.find_element("id", "player-facts").text
        assert "not counted: unlimited play" in facts and "operator: wrote in: lost purchase" in facts, facts
        assert "undefined" not in browser.find_element("id", "player").text

        revoke = browser.find_element("css selector", "#devices-table button")
        assert revoke.get_attribute("aria-label").startswith("Revoke device")
        revoke.click()
        browser.switch_to.alert.accept()
        wait_for(browser, "document.querySelector('#devices-table tbody').textContent.includes('revoked')")
        error = await client.expect_error("unauthorized")
        assert "signed out" in error["message"]
        code, _ = await client.closed()
        return code

    assert run(scenario()) == 4401
    assert console_server.query("SELECT display_name FROM players WHERE public_id = ?", (player,)) == [("Racer 7",)]
    assert unexpected_errors(browser) == []


def test_an_admin_makes_a_random_code_and_disables_it_with_the_keyboard(console_server, browser):
    open_page(browser, console_server.console_url, "/codes.html")
    if browser.execute_script("return location.pathname") != "/codes.html":
        sign_in_with_the_keyboard(browser, console_server, "?next=codes.html")
        wait_for(browser, "location.pathname === '/codes.html' && document.documentElement.dataset.ready === 'true'")
    browser.find_element("id", "cap").send_keys("5", Keys.ENTER)
    wait_for(browser, "!document.getElementById('created').hidden")
    assert browser.switch_to.active_element.get_attribute("id") == "created"
    grouped = re.search(r"Created (\S+):", browser.find_element("id", "created").text)[1]
    row = wait_for(browser, f"[...document.querySelectorAll('#codes-table tbody tr')].find((r) => r.textContent.includes('{grouped}'))")
    assert "0 of 5" in row.text and "live" in row.text
    button = row.find_element("css selector", "button")
    assert button.get_attribute("aria-label") == f"Disable code {grouped}"
    button.send_keys(Keys.ENTER)
    browser.switch_to.alert.accept()
    wait_for(browser, f"document.getElementById('status').textContent === 'Code {grouped} disabled.'")
    assert "undefined" not in browser.find_element("id", "codes-table").text
    assert unexpected_errors(browser) == []


@pytest.mark.parametrize("page", ["sign-in", "index", "players", "codes", "orders", "audit"])
def test_axe_finds_nothing_on_any_console_page_in_any_display_mode(console_server, browser, page):
    if page == "sign-in":
        browser.delete_all_cookies()
        open_page(browser, console_server.console_url, "/sign-in.html")
    else:
        open_page(browser, console_server.console_url, f"/{page}.html")
        if browser.execute_script("return location.pathname") == "/sign-in.html":
            sign_in_with_the_keyboard(browser, console_server, f"?next={page}.html")
            wait_for(browser, f"location.pathname === '/{page}.html' && document.documentElement.dataset.ready === 'true'")
        if page == "players":
            # A player shown, with every table and form the page has.
            created = console_server.request("POST", "/api/v1/players", {"displayName": "Axe Check", "deviceLabel": "x"}).json()
            open_page(browser, console_server.console_url, f"/players.html?id={created['player']['id']}")
            wait_for(browser, "!document.getElementById('player').hidden")
        if page == "codes":
            # A code in the list, so its row and its Disable button are checked too.
            browser.find_element("id", "create").submit()
            wait_for(browser, "!document.getElementById('created').hidden")
    failures = axe_in_every_mode(browser, f"console-{page}")
    assert not failures, describe_violations(failures)
