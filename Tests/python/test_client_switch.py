"""One switch alone plays the whole game loop (docs/GAME_RULES.md, "One-switch play"): start a
race, dodge, hold to pause, hear and see the scan over Resume, End game and Share a link to watch, resume, pause
again and end the game, then play again from the game-over panel, all with Space and nothing
else, in real headless Chromium against the real server. The server's own view (its metrics
and its database) says each step happened, not only the page."""

import sqlite3
import time

from selenium.webdriver.common.action_chains import ActionChains

import switch_bots
from test_client_support import (Keys, browser, browser_errors, describe_violations, device_token, emulate, open_page,  # noqa: F401
                                 press, run_axe, screenshot, wait_for)
from ws_client import metric

ROAD = "[data-part='play-area']"
PHASE = f"document.querySelector(\"{ROAD}\").dataset.phase"
PAUSE_BUTTON = "document.querySelector(\"[data-part='pause']\")"
QUIT_BUTTON = "document.querySelector(\"[data-part='quit']\")"
SHARE_BUTTON = "document.querySelector(\"[data-part='share-watch']\")"
HIGHLIGHTED = "document.querySelector('.switch-highlight')"
# A stand-in pad (no gamepad here) that the page reads through navigator.getGamepads.
FAKE_PAD = """
  const pad = { index: 0, id: "test pad", connected: true, mapping: "standard", axes: [0, 0, 0, 0],
                buttons: Array.from({ length: 17 }, () => ({ pressed: false, value: 0 })) };
  window.__pad = pad;
  navigator.getGamepads = () => [pad];
  window.dispatchEvent(new Event("gamepadconnected"));
"""


def patch_settings(server, driver, patch):
    token = device_token(driver)
    version = server.request("GET", "/api/v1/settings", token=token).json()["version"]
    reply = server.request("PATCH", "/api/v1/settings", patch, token=token, headers={"If-Match": f'"{version}"'})
    assert reply.status == 200, reply.body


def spoken(driver):
    return driver.execute_script("return window.__rr.announcements.slice()")


def wait_spoken(driver, text, timeout=10):
    """Waits until the live region has said something containing `text`."""
    return wait_for(driver, f"window.__rr.announcements.find((a) => a.includes({text!r}))", timeout=timeout)


def steps_taken(server):
    return metric(server, "retrorapid_game_steps_total")


def hold_switch(driver, seconds=1.2):
    """Holds Space (a real key press through DevTools) just after a step, so its dodge answers
    that step's cue and the pause lands before the step after next. The bot lets go of the
    switch as the key goes down: a press of its own could land on the paused game's Resume."""
    count = driver.execute_script("return window.__rr.socketIn.filter((m) => m.type === 'step').length")
    wait_for(driver, f"window.__rr.socketIn.filter((m) => m.type === 'step').length > {count}", timeout=5)
    driver.execute_script("window.__bot.off = true")
    ActionChains(driver).key_down(Keys.SPACE).pause(seconds).key_up(Keys.SPACE).perform()


def is_highlighted(driver, element_js):
    """The switch's choice is `element_js`: framed, and focus is on it."""
    return driver.execute_script(f"const e = {element_js}; return e.classList.contains('switch-highlight') && document.activeElement === e")


def assert_highlight_shows_in_every_mode(driver):
    """The frame is drawn (not colour alone: a 5 px outline and bold underlined words) in light,
    dark, high contrast and forced colours, and its colour differs from the page behind it."""
    for mode in ({}, {"scheme": "dark"}, {"contrast": "more"}, {"scheme": "dark", "contrast": "more"}, {"forced": "active"}):
        emulate(driver, **mode)
        look = driver.execute_script("""
            const e = document.querySelector('.switch-highlight'), s = getComputedStyle(e);
            return { width: parseFloat(s.outlineWidth), style: s.outlineStyle, color: s.outlineColor, weight: s.fontWeight,
                     underline: s.textDecorationLine, page: getComputedStyle(document.body).backgroundColor };
        """)
        assert look["style"] == "solid" and look["width"] >= 4, (mode, look)
        assert look["weight"] == "700" and "underline" in look["underline"], (mode, look)
        assert look["color"] != look["page"], (mode, look)
    emulate(driver)


def test_one_switch_alone_starts_pauses_resumes_quits_and_plays_again(server, browser):
    open_page(browser, server.base_url, "/")
    patch_settings(server, browser, {"speedLevel": "cruise", "controls": {
        "oneSwitch": True, "switchMode": "dodge", "scanIntervalMs": 1300, "inputCooldownMs": 0}})
    open_page(browser, server.base_url, "/")
    wait_for(browser, "!document.getElementById('start').disabled")
    assert browser.execute_script("return document.activeElement === document.body")
    assert metric(server, "retrorapid_games_running") == 0

    # Start: the switch on the page as it loads, nothing focused.
    press(browser, Keys.SPACE)
    wait_for(browser, f"{PHASE} === 'running'")
    assert metric(server, "retrorapid_games_running") == 1
    browser.execute_script(switch_bots.BOT, "switch", 7)  # the switch dodges while the test waits

    # A quick press still dodges at once, on key-down, and does not pause.
    dodges = browser.execute_script("return window.__bot.presses")
    wait_for(browser, f"window.__bot.presses > {dodges}", timeout=20)
    time.sleep(1.0)
    assert browser.execute_script(f"return {PHASE}") in ("running", "over")
    assert not any(m["type"] == "pause" for m in browser.execute_script("return window.__rr.socketOut"))
    assert browser.execute_script(f"return {PHASE}") == "running", "the road ended the race before the test could pause"

    # Hold to pause: the press dodges (if needed) at once, holding on pauses.
    sent_before = len(browser.execute_script("return window.__rr.socketOut"))
    hold_switch(browser)
    wait_for(browser, f"{PHASE} === 'paused'")
    sent = browser.execute_script(f"return window.__rr.socketOut.slice({sent_before}).map((m) => m.type)")
    assert sent.count("pause") == 1 and set(sent) <= {"move", "pause", "ping"}, sent
    paused = [m for m in browser.execute_script("return window.__rr.socketIn") if m["type"] == "paused"]
    assert paused[-1]["reason"] == "player"
    # The pause is announced with how to resume by switch, Resume first and framed, focus on it.
    wait_spoken(browser, "To race on, press the switch while Resume is highlighted; the highlight steps through Resume, End game, and Share a link to watch. Now: Resume.")
    assert is_highlighted(browser, PAUSE_BUTTON)
    assert browser.execute_script("return document.querySelectorAll('.switch-highlight').length") == 1
    # The server takes no step while paused (Cruise steps every 0.8 s).
    steps = steps_taken(server)
    violations = run_axe(browser)
    assert violations == [], describe_violations(violations)
    screenshot(browser, "switch-paused-resume-highlighted")
    assert_highlight_shows_in_every_mode(browser)
    time.sleep(2.0)
    assert steps_taken(server) == steps
    assert browser.execute_script(f"return {PHASE}") == "paused"

    # The scan moves on to End game, then Share a link to watch: each seen, focused and said
    # once; then back to Resume, said once too (one round of the scan, from a moment Resume is
    # highlighted).
    wait_for(browser, f"{HIGHLIGHTED} === {PAUSE_BUTTON}", timeout=5)
    wait_for(browser, "['Resume', ''].includes(window.__rr.announcements.at(-1).replace(/^.*Now: Resume\\.$/, ''))", timeout=5)
    before = spoken(browser)
    wait_for(browser, f"{HIGHLIGHTED} === {QUIT_BUTTON}", timeout=5)
    assert is_highlighted(browser, QUIT_BUTTON)
    wait_for(browser, f"window.__rr.announcements.length > {len(before)} && window.__rr.announcements.at(-1) === 'End game'", timeout=5)
    wait_for(browser, f"{HIGHLIGHTED} === {SHARE_BUTTON}", timeout=5)
    assert is_highlighted(browser, SHARE_BUTTON)
    wait_for(browser, f"{HIGHLIGHTED} === {PAUSE_BUTTON}", timeout=5)
    assert is_highlighted(browser, PAUSE_BUTTON)
    wait_for(browser, f"window.__rr.announcements.length > {len(before) + 2}", timeout=5)
    assert spoken(browser)[len(before):] == ["End game", "Share a link to watch", "Resume"], spoken(browser)

    # A press on Resume resumes: the server steps again, focus is back on the road.
    press(browser, Keys.SPACE)
    wait_for(browser, f"{PHASE} === 'running'")
    wait_for(browser, f"document.activeElement === document.querySelector(\"{ROAD}\")")
    # The cue heard before the pause still stands: the player answers it with a quick press
    # (a dodge, or a tick in a safe lane), and the bot takes the switch back.
    press(browser, Keys.SPACE)
    browser.execute_script("window.__bot.off = false")
    assert browser.execute_script(f"return {HIGHLIGHTED}") is None
    count = browser.execute_script("return window.__rr.socketIn.filter((m) => m.type === 'step').length")
    wait_for(browser, f"window.__rr.socketIn.filter((m) => m.type === 'step').length > {count}", timeout=5)
    assert steps_taken(server) > steps
    assert browser.execute_script(f"return {PHASE}") == "running"  # the quick press did not pause

    # Pause again, wait for End game, press: the game ends, and the server stores it as quit.
    hold_switch(browser)
    wait_for(browser, f"{PHASE} === 'paused'")
    wait_for(browser, f"{HIGHLIGHTED} === {QUIT_BUTTON}", timeout=8)
    press(browser, Keys.SPACE)
    wait_for(browser, "!document.getElementById('game-over').hidden")
    over = [m for m in browser.execute_script("return window.__rr.socketIn") if m["type"] == "gameOver"]
    assert len(over) == 1
    assert metric(server, "retrorapid_games_running") == 0
    deadline = time.monotonic() + 5
    rows = []
    while time.monotonic() < deadline and not rows:
        with sqlite3.connect(server.database) as db:
            rows = db.execute("SELECT end_reason FROM games").fetchall()
        time.sleep(0.1)
    assert rows == [("abandoned",)]  # a quit game is stored as abandoned (PROTOCOL.md, "quit")

    # The game-over panel: Play again first, framed and focused, said after the result.
    wait_spoken(browser, "Your switch steps through Play again and Leaderboards: press it on the one you want. Now: Play again.")
    assert is_highlighted(browser, "document.getElementById('play-again')")
    emulate(browser, scheme="dark", contrast="more")
    violations = run_axe(browser)
    assert violations == [], describe_violations(violations)
    screenshot(browser, "switch-game-over-play-again-highlighted-dark-high-contrast")
    emulate(browser)

    # Play again, by the switch, once the scan has come back round to it.
    wait_for(browser, f"{HIGHLIGHTED} !== document.getElementById('play-again')", timeout=8)
    wait_for(browser, f"{HIGHLIGHTED} === document.getElementById('play-again')", timeout=8)
    press(browser, Keys.SPACE)
    wait_for(browser, f"{PHASE} === 'running'")
    assert metric(server, "retrorapid_games_running") == 1
    starts = [m for m in browser.execute_script("return window.__rr.socketOut") if m["type"] == "start"]
    assert [m["level"] for m in starts] == ["cruise", "cruise"]
    assert browser.execute_script(f"return {HIGHLIGHTED}") is None
    assert browser_errors(browser) == []


def test_a_long_tap_on_the_road_pauses_without_a_dodge_and_a_keyboard_player_keeps_p(server, browser):
    """The tap is the switch too: it acts on release, so a tap held past the threshold is the
    pause alone. P pauses as before, and the scan then runs for the switch."""
    open_page(browser, server.base_url, "/")
    patch_settings(server, browser, {"speedLevel": "cruise", "controls": {"oneSwitch": True, "switchMode": "dodge", "inputCooldownMs": 0}})
    open_page(browser, server.base_url, "/")
    wait_for(browser, "!document.getElementById('start').disabled")
    road = browser.find_element("css selector", ROAD)
    road.click()  # a tap on the road is the switch: it starts the race
    wait_for(browser, f"{PHASE} === 'running'")
    moves_before = browser.execute_script("return window.__rr.socketOut.filter((m) => m.type === 'move').length")
    ActionChains(browser).click_and_hold(road).pause(1.2).release().perform()
    wait_for(browser, f"{PHASE} === 'paused'")
    time.sleep(0.3)
    assert browser.execute_script("return window.__rr.socketOut.filter((m) => m.type === 'move').length") == moves_before
    assert browser.execute_script(f"return {PHASE}") == "paused"  # the release did not resume it
    assert is_highlighted(browser, PAUSE_BUTTON)
    road.click()  # a tap chooses the highlighted Resume
    wait_for(browser, f"{PHASE} === 'running'")
    press(browser, "p")
    wait_for(browser, f"{PHASE} === 'paused'")
    assert is_highlighted(browser, PAUSE_BUTTON)
    press(browser, "p")  # P resumes as it always did, wherever focus is
    wait_for(browser, f"{PHASE} === 'running'")
    assert browser.execute_script(f"return {HIGHLIGHTED}") is None

    # The gamepad's A button is the switch as well: held, it pauses; pressed, it resumes.
    browser.execute_script(FAKE_PAD)
    browser.execute_script("window.__pad.buttons[0] = { pressed: true, value: 1 }")
    wait_for(browser, f"{PHASE} === 'paused'", timeout=5)
    browser.execute_script("window.__pad.buttons[0] = { pressed: false, value: 0 }")
    assert is_highlighted(browser, PAUSE_BUTTON)
    time.sleep(0.2)
    browser.execute_script("window.__pad.buttons[0] = { pressed: true, value: 1 }")
    wait_for(browser, f"{PHASE} === 'running'")
    time.sleep(1.2)  # held on past the threshold: a press that resumed never pauses again
    browser.execute_script("window.__pad.buttons[0] = { pressed: false, value: 0 }")
    assert browser.execute_script(f"return {PHASE}") in ("running", "over")
    assert [m["type"] for m in browser.execute_script("return window.__rr.socketOut")].count("pause") == 3
    assert browser_errors(browser) == []
