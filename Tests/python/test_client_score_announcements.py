"""How often a race says the score (`scoreAnnouncementEvery`, docs/API.md "Settings"), in real
headless Chromium against the real server: chosen on the Settings page with the keyboard (a
labelled radio group, axe-clean, saved on the server), then heard in the polite live region
during a real game at Cruise that a dodging bot plays. Every 5 points: the score is said each
time it passes a multiple of 5, and at no other time. Only when asked (0): never said by
itself, and the status key still says it."""

import re
import time

import switch_bots
from test_client_support import (Keys, browser, describe_violations, device_token, open_page, press,  # noqa: F401
                                 run_axe, wait_for)

PHASE = "document.querySelector(\"[data-part='play-area']\").dataset.phase"
LAST_STEP = "window.__rr.socketIn.filter((m) => m.type === 'step').pop()"
SCORE_SAID = re.compile(r"^(\d[\d,]*) points\.$")  # say.score in Web/i18n/en.json


def stored_pace(server, driver):
    return server.request("GET", "/api/v1/settings", token=device_token(driver)).json()["settings"]["scoreAnnouncementEvery"]


def choose_pace_by_keyboard(server, driver, arrows, expected):
    """Focuses the pace that is checked and moves through the radio group with arrow keys, as
    a keyboard or screen-reader user does; waits for the server to hold `expected`."""
    driver.execute_script("document.querySelector(\"input[name='scoreAnnouncementEvery']:checked\").focus()")
    press(driver, *arrows)
    deadline = time.monotonic() + 10
    while stored_pace(server, driver) != expected:
        assert time.monotonic() < deadline, f"the server never stored {expected}"
        time.sleep(0.1)


def race_until(driver, score, seed):
    """Starts a game at Cruise with the keyboard bot dodging; returns once the score is `score`
    or more (the game still running) and every step message seen so far. The bot dodges on
    until the game is ended, so no crash takes the road's focus while the test listens."""
    driver.execute_script("window.__rr.socketIn.length = 0; window.__rr.announcements.length = 0")
    driver.execute_script(switch_bots.BOT, "keyboard", seed)
    driver.execute_script("document.querySelector(\"input[name='level'][value='cruise']\").checked = true")
    driver.execute_script("document.getElementById('start').click()")
    wait_for(driver, f"{PHASE} === 'running'")
    wait_for(driver, f"({LAST_STEP})?.score >= {score} || {PHASE} !== 'running'", timeout=45)
    assert driver.execute_script(f"return {PHASE}") == "running", "the bot crashed before the score was reached"
    return driver.execute_script("return window.__rr.socketIn.filter((m) => m.type === 'step').map((m) => m.score)")


def scores_said(driver):
    said = driver.execute_script("return window.__rr.announcements.slice()")
    return [int(m.group(1).replace(",", "")) for m in map(SCORE_SAID.match, said) if m]


def end_game(driver):
    driver.execute_script("document.querySelector(\"[data-part='quit']\").click()")
    wait_for(driver, "!document.getElementById('game-over').hidden")


def test_the_score_is_said_as_often_as_the_player_chose_and_on_request(server, browser):
    # The Settings page: a labelled group with a hint, 25 until changed, axe-clean.
    open_page(browser, server.base_url, "/settings.html")
    group = browser.execute_script("""
        const radios = [...document.querySelectorAll("input[name='scoreAnnouncementEvery']")];
        const fieldset = radios[0].closest("fieldset");
        return { legend: fieldset.querySelector("legend").textContent,
                 hint: document.getElementById(fieldset.getAttribute("aria-describedby")).textContent,
                 labels: radios.map((r) => [r.value, r.labels[0].textContent]),
                 checked: radios.find((r) => r.checked)?.value };
    """)
    assert group == {
        "legend": "How often the score is said during a race",
        "hint": group["hint"], "checked": "25",
        "labels": [["1", "Every point"], ["5", "Every 5 points"], ["10", "Every 10 points"], ["25", "Every 25 points"],
                   ["0", "Only when I ask, with the status key"]],
    }
    assert "status key" in group["hint"]
    violations = run_axe(browser)
    assert violations == [], describe_violations(violations)
    # Without announcements nothing is said by itself, so the pace waits, disabled.
    browser.find_element("id", "announcements").click()
    wait_for(browser, "[...document.querySelectorAll(\"input[name='scoreAnnouncementEvery']\")].every((r) => r.disabled)")
    browser.find_element("id", "announcements").click()
    wait_for(browser, "[...document.querySelectorAll(\"input[name='scoreAnnouncementEvery']\")].every((r) => !r.disabled)")
    choose_pace_by_keyboard(server, browser, [Keys.ARROW_LEFT, Keys.ARROW_LEFT], 5)  # 25 -> 10 -> 5

    # Every 5 points: said at each multiple of 5 the score passes (a step can pass two cars),
    # and nothing else said as a score.
    open_page(browser, server.base_url, "/")
    wait_for(browser, "!document.getElementById('start').disabled")
    scores = race_until(browser, 11, seed=3)
    time.sleep(0.3)  # the announcer's next frame
    crossed = [after for before, after in zip([0] + scores, scores) if after // 5 > before // 5]
    assert len(crossed) >= 2, scores
    assert scores_said(browser) == crossed, (browser.execute_script("return window.__rr.announcements"), scores)
    end_game(browser)

    # Only when asked: the Settings page again, the last choice, by keyboard.
    open_page(browser, server.base_url, "/settings.html")
    choose_pace_by_keyboard(server, browser, [Keys.ARROW_RIGHT, Keys.ARROW_RIGHT, Keys.ARROW_RIGHT], 0)  # 5 -> 10 -> 25 -> 0
    assert browser.execute_script("return document.activeElement.id") == "scoreAnnouncementEvery-0"

    open_page(browser, server.base_url, "/")
    wait_for(browser, "!document.getElementById('start').disabled")
    scores = race_until(browser, 6, seed=4)
    time.sleep(1.5)  # longer than the announcer's gap: anything queued would be said by now
    assert scores_said(browser) == [], browser.execute_script("return window.__rr.announcements")
    # The status key (S, the road focused) still says the score.
    assert browser.execute_script("return document.activeElement.dataset.part") == "play-area"
    press(browser, "s")
    status = wait_for(browser, "window.__rr.announcements.find((t) => t.startsWith('Racing. Score '))", timeout=5)
    assert int(re.match(r"Racing\. Score ([\d,]+)\.", status).group(1).replace(",", "")) >= scores[-1]
    end_game(browser)
