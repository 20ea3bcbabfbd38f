"""The Devices page against the real server: it lists the player's signed-in devices (a second
one joined through a link code made over the API), and signing one out from the page removes
it from the list and stops its token working (the API answers 401); the display name set on
the page is the player's name."""

import json

from conftest import REPO
from test_client_support import Keys, browser, device_token, open_page, screenshot, wait_for, browser_errors  # noqa: F401
from ws_client import link_second_device

EN = json.loads((REPO / "Web/i18n/en.json").read_text())

DEVICE_ROWS = "return [...document.querySelectorAll('#device-table tbody tr')].map((tr) => tr.cells[0].textContent)"


def test_the_list_shows_each_device_and_signing_one_out_removes_it_and_its_token(server, browser):
    open_page(browser, server.base_url, "/devices.html")
    mine = device_token(browser)
    phone = link_second_device(server, mine)  # its label is "second"
    assert server.request("GET", "/api/v1/me", token=phone).status == 200

    browser.refresh()
    wait_for(browser, "document.documentElement.dataset.ready === 'true'")
    here = browser.execute_script(DEVICE_ROWS)
    assert len(here) == 2 and here[1] == "second", here
    assert here[0] == EN["devices"]["thisDevice"].format(label="Chromium on Linux")

    # Signed out from the page, by keyboard: gone from the list, its token refused, mine fine.
    button = browser.find_element("css selector", f"#device-table button[aria-label={json.dumps(EN['devices']['signOutNamed'].format(label='second'))}]")
    button.send_keys(Keys.ENTER)
    signed_out = EN["devices"]["signedOut"].format(label="second")
    wait_for(browser, f"document.getElementById('device-result').textContent === {json.dumps(signed_out)}")
    wait_for(browser, "document.querySelectorAll('#device-table tbody tr').length === 1")
    assert browser.execute_script(DEVICE_ROWS) == [here[0]]
    assert browser.execute_script("return document.activeElement.id") == "list-heading", "focus is not lost with the row"
    refused = server.request("GET", "/api/v1/me", token=phone)
    assert refused.status == 401 and refused.json()["error"]["code"] == "unauthorized"
    assert server.request("GET", "/api/v1/me", token=mine).status == 200
    screenshot(browser, "devices-signed-out")

    # Still gone after a reload (the server lists it as revoked; the page lists signed-in devices).
    browser.refresh()
    wait_for(browser, "document.documentElement.dataset.ready === 'true'")
    assert browser.execute_script(DEVICE_ROWS) == [here[0]]
    listed = server.request("GET", "/api/v1/devices", token=mine).json()["devices"]
    assert [d["label"] for d in listed if d.get("revokedAt")] == ["second"]  # absent while signed in

    # The display name set here is the player's name.
    field = browser.find_element("id", "display-name")
    field.clear()
    field.send_keys("Grace", Keys.ENTER)
    wait_for(browser, f"document.getElementById('name-result').textContent === {json.dumps(EN['devices']['nameSaved'].format(name='Grace'))}")
    assert server.request("GET", "/api/v1/me", token=mine).json()["player"]["displayName"] == "Grace"
    assert browser_errors(browser) == []
