"""The choices kept on this device only (Web/js/settings/device-settings.js): "Announce rivals
during a race" and "Hear the ghost" share one local-storage key, are set on the Settings page
(each saved at once and said so beside it, never sent to the server's settings document) and
on the replay page, and a choice kept under the keys used before is carried over."""

import json

from conftest import REPO
from test_client_support import browser, describe_violations, device_token, open_page, run_axe, wait_for  # noqa: F401

EN = json.loads((REPO / "Web/i18n/en.json").read_text())
STORED = "return JSON.parse(localStorage.getItem(arguments[0]))"


def test_both_device_choices_live_under_one_key_and_the_former_keys_are_carried_over(server, browser):
    open_page(browser, server.base_url, "/settings.html")
    browser.execute_script("""
        localStorage.removeItem('retrorapid.deviceSettings');
        localStorage.setItem('retrorapid.raceSettings', JSON.stringify({rivalAnnouncements: false}));
        localStorage.setItem('retrorapid.devicePrefs', JSON.stringify({ghostAudio: true}));""")
    open_page(browser, server.base_url, "/settings.html")
    assert not browser.find_element("id", "rivalAnnouncements").is_selected()
    assert browser.find_element("id", "settings-ghost-audio").is_selected()
    assert browser.execute_script(STORED, "retrorapid.deviceSettings") == {"rivalAnnouncements": False, "ghostAudio": True}
    assert browser.execute_script(STORED, "retrorapid.raceSettings") is None
    assert browser.execute_script(STORED, "retrorapid.devicePrefs") is None


def test_hear_the_ghost_is_saved_on_this_device_from_the_settings_page_and_shown_on_the_replay_page(server, browser):
    open_page(browser, server.base_url, "/settings.html")
    box = browser.find_element("id", "settings-ghost-audio")
    assert not box.is_selected()  # off by default
    version = server.request("GET", "/api/v1/settings", token=device_token(browser)).json()["version"]
    browser.find_element("css selector", "label[for='settings-ghost-audio']").click()
    wait_for(browser, f"document.getElementById('settings-ghost-audio-status').textContent === {json.dumps(EN['settings']['deviceSaved'])}")
    assert "settings-ghost-audio-status" in box.get_attribute("aria-describedby").split()
    assert browser.execute_script(STORED, "retrorapid.deviceSettings") == {"rivalAnnouncements": True, "ghostAudio": True}
    assert server.request("GET", "/api/v1/settings", token=device_token(browser)).json()["version"] == version
    assert run_axe(browser) == [], describe_violations(run_axe(browser))
    open_page(browser, server.base_url, "/replay.html")
    assert browser.execute_script("return document.getElementById('ghost-audio').checked") is True
