"""Watching, replays, ghost races and the daily road in the browser, against the real server
and real WebSocket clients in headless Chromium: the new pages and their states pass axe in
every display mode; a watch page follows a game a real client plays, to its end and the way to
its replay; a replay plays, pauses and seeks by keyboard alone; a ghost race shows the ghost
beside the player; the daily road starts from the play page and has its board; Spanish is
there."""

import asyncio
import json

import pytest

from conftest import REPO
from test_client_pages import axe_in_every_mode
from test_client_support import (Keys, browser, browser_errors, describe_violations, device_token,  # noqa: F401
                                 open_page, press, run_axe, screenshot, wait_for)
from ws_client import GameClient, create_player, nearest_safe_move, play_to_score, run

EN = json.loads((REPO / "Web/i18n/en.json").read_text())
ES = json.loads((REPO / "Web/i18n/es.json").read_text())

PHASE = "document.querySelector(\"#{root} [data-part='play-area']\").dataset.phase"


def rename(server, token, name):
    reply = server.request("PATCH", "/api/v1/me", {"displayName": name}, token=token)
    assert reply.status == 200, reply.body


def no_errors(driver):
    """Nothing went wrong in the page (a refused request the page explains is not an error)."""
    errors = [e for e in browser_errors(driver) if "Failed to load resource" not in e]
    assert errors == [], errors


# ---- The pages as they load, before anything is watched ---------------------------------------

STATES = {
    "watch-pick": "/watch.html",
    "replay-none": "/replay.html",
}


@pytest.mark.parametrize("state", STATES)
def test_the_new_pages_pass_axe_in_every_mode_as_they_load(server, browser, state):
    open_page(browser, server.base_url, STATES[state])
    facts = browser.execute_script("""
        return {
          h1: document.querySelectorAll("h1").length,
          skip: document.querySelector("a, button, input, select, [tabindex]").classList.contains("skip-link"),
          live: document.getElementById("announcer").getAttribute("aria-live"),
          empty: window.__rr.announcerEmptyAtLoad,
          untranslated: [...document.querySelectorAll("[data-i18n]")].filter((e) => !e.closest("[hidden]") && (e.textContent.trim() === "" || e.textContent === e.dataset.i18n)).map((e) => e.dataset.i18n),
        };
    """)
    assert facts == {"h1": 1, "skip": True, "live": "polite", "empty": True, "untranslated": []}, facts
    failures = axe_in_every_mode(browser, state)
    assert not failures, describe_violations(failures)
    no_errors(browser)


def test_the_watch_page_asks_for_a_code_and_refuses_what_is_not_one(server, browser):
    open_page(browser, server.base_url, "/watch.html")
    field = browser.find_element("id", "pick-target")
    field.send_keys("no such thing!", Keys.ENTER)
    wait_for(browser, f"document.getElementById('watch-message').textContent === {json.dumps(EN['watch']['pickInvalid'])}")
    assert field.get_attribute("aria-invalid") == "true"
    assert browser.execute_script("return document.activeElement.id") == "pick-target"
    field.clear()
    field.send_keys("k7q-xm2", Keys.ENTER)
    wait_for(browser, "location.search === '?room=K7QXM2'")
