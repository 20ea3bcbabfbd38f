"""A whole game in the browser with the keyboard alone, against the real server: Tab to the
level and Start, steer with the arrow keys by what the page shows (the player's car and the
safe-lane marks under the road), hear the speed-up in the polite live region, and end on the
game-over panel with a positive score."""

import json
import time

from conftest import REPO
from test_client_support import Keys, browser, open_page, press, screenshot, wait_for, browser_errors  # noqa: F401

EN = json.loads((REPO / "Web/i18n/en.json").read_text())

# What a sighted player reads off the screen after each step: no test hook, only the DOM.
NEXT_FRAME = """
  const [after, done] = [arguments[0], arguments[arguments.length - 1]];
  const read = () => {
    const road = document.querySelector("[data-part='road']");
    const player = road.querySelector(".cell.player, .cell.crash");
    return {
      step: Number(road.dataset.step),
      lane: player ? Number(player.dataset.lane) : null,
      safe: [...document.querySelectorAll("[data-part='cue-strip'] li.safe")].map((li) => Number(li.dataset.lane)),
      phase: document.querySelector("[data-part='play-area']").dataset.phase,
      score: document.querySelector("[data-part='score']").textContent,
    };
  };
  const poll = () => {
    const now = read();
    if (now.step > after || now.phase !== "running") done(now); else setTimeout(poll, 5);
  };
  poll();
"""


def tab_to(driver, predicate_js, limit=40):
    for _ in range(limit):
        press(driver, Keys.TAB)
        if driver.execute_script(f"const e = document.activeElement; return {predicate_js};"):
            return
    raise AssertionError(f"Tab never reached {predicate_js}")


def steer(driver, seconds, follow=True):
    """Plays by the marks on screen until the game ends or `seconds` pass; returns the last frame."""
    deadline = time.monotonic() + seconds
    frame = {"step": -1, "phase": "running"}
    while time.monotonic() < deadline:
        frame = driver.execute_async_script(NEXT_FRAME, frame["step"])
        if frame["phase"] != "running":
            return frame
        if follow and frame["safe"] and frame["lane"] is not None and frame["lane"] not in frame["safe"]:
            target = min(frame["safe"], key=lambda lane: abs(lane - frame["lane"]))
            key = Keys.ARROW_LEFT if target < frame["lane"] else Keys.ARROW_RIGHT
            press(driver, *([key] * abs(target - frame["lane"])))
        if follow and speed_up_heard(driver):
            return frame
    return frame


def speed_up_heard(driver):
    said = driver.execute_script("return window.__rr.announcements")
    return any(text.startswith(EN["say"]["speedUp"].split(".")[0] + ".") for text in said)


def test_a_game_played_with_the_keyboard_alone_scores_and_announces_the_speed_up(server, browser):
    open_page(browser, server.base_url, "/")
    wait_for(browser, "!document.getElementById('start').disabled")
    browser.execute_script("document.activeElement.blur()")

    # Keyboard only from here: Tab to the level radios, arrow to Rapid, Tab to Start, Enter.
    tab_to(browser, "e.name === 'level'")
    assert browser.execute_script("return document.activeElement.value") == "cruise"  # a new player's default
    press(browser, Keys.ARROW_RIGHT, Keys.ARROW_RIGHT)
    assert browser.execute_script("return document.activeElement.value") == "rapid"
    tab_to(browser, "e.id === 'start'", limit=3)
    press(browser, Keys.ENTER)
    wait_for(browser, "document.querySelector(\"[data-part='play-area']\").dataset.phase === 'running'")
    assert browser.execute_script("return document.activeElement.dataset.part") == "play-area"
    sent = browser.execute_script("return window.__rr.socketOut.filter((m) => m.type === 'start')")
    assert sent == [{"type": "start", "level": "rapid", "practice": False}]

    games, heard = 1, False
    while True:
        frame = steer(browser, seconds=150)
        heard = heard or speed_up_heard(browser)
        if frame["phase"] == "running":
            break  # heard the speed-up while still racing
        # A crash before the speed-up: start again from the game-over panel (focus is on Play again).
        assert games < 3, f"crashed {games} times before reaching 100 points: {frame}"
        wait_for(browser, "document.activeElement.id === 'play-again'")
        press(browser, Keys.ENTER)
        wait_for(browser, "document.querySelector(\"[data-part='play-area']\").dataset.phase === 'running'")
        games += 1
    assert heard, "no speed-up was announced in the live region"
    screenshot(browser, "play-racing")

    # Stop steering: the road ends the game, and the page shows and says the result.
    frame = steer(browser, seconds=30, follow=False)
    wait_for(browser, "!document.getElementById('game-over').hidden", timeout=20)
    score = int(browser.find_element("id", "over-score").text.replace(",", ""))
    assert score >= 100
    wait_for(browser, "window.__rr.announcements.some((t) => t.startsWith('Game over.'))", timeout=10)
    said = browser.execute_script("return window.__rr.announcements")
    assert any(text.startswith("Speed up soon, at 100 points") for text in said), said
    assert browser.execute_script("return document.activeElement.id") == "play-again"
    screenshot(browser, "play-game-over")

    # Every move the page sent was an arrow key's, naming a step it had seen; the server decided.
    moves = browser.execute_script("return window.__rr.socketOut.filter((m) => m.type === 'move')")
    assert moves and all(m["direction"] in ("left", "right") and isinstance(m["step"], int) for m in moves)
    over = browser.execute_script("return window.__rr.socketIn.filter((m) => m.type === 'gameOver').pop()")
    assert over["score"] == score and over["saved"] is True
    assert browser_errors(browser) == []


def test_the_status_key_speaks_and_the_pause_key_pauses_then_resumes(server, browser):
    open_page(browser, server.base_url, "/")
    wait_for(browser, "!document.getElementById('start').disabled")
    browser.find_element("id", "start").send_keys(Keys.ENTER)
    wait_for(browser, "document.querySelector(\"[data-part='play-area']\").dataset.phase === 'running'")
    press(browser, "s")
    wait_for(browser, "window.__rr.announcements.some((t) => t.startsWith('Racing. Score'))")
    press(browser, "p")
    wait_for(browser, "document.querySelector(\"[data-part='play-area']\").dataset.phase === 'paused'")
    assert browser.execute_script("return window.__rr.socketOut.some((m) => m.type === 'pause')")
    press(browser, "h")
    assert browser.execute_script("return !document.querySelector(\"[data-part='controls-help']\").hidden")
    press(browser, "p")
    wait_for(browser, "document.querySelector(\"[data-part='play-area']\").dataset.phase === 'running'")
    # Auto-repeat is ignored: a held key is one move at most.
    browser.execute_script("""
        const area = document.querySelector("[data-part='play-area']");
        for (let i = 0; i < 5; i++) area.dispatchEvent(new KeyboardEvent("keydown", { code: "ArrowLeft", key: "ArrowLeft", repeat: true, bubbles: true }));
    """)
    time.sleep(0.3)
    assert browser.execute_script("return window.__rr.socketOut.filter((m) => m.type === 'move').length") == 0
    browser.find_element("css selector", "[data-part='quit']").click()
    wait_for(browser, "!document.getElementById('game-over').hidden")


def test_a_game_taken_back_after_a_reload_is_announced_as_running(server, browser):
    """After a reload mid-race the page offers the waiting game; taking it back resumes it on the
    server at once, so the page must say it races again (never "press P to go on": P would pause)."""
    open_page(browser, server.base_url, "/")
    wait_for(browser, "!document.getElementById('start').disabled")
    browser.find_element("id", "start").send_keys(Keys.ENTER)
    wait_for(browser, "document.querySelector(\"[data-part='play-area']\").dataset.phase === 'running'")
    wait_for(browser, "window.__rr.socketIn.some((m) => m.type === 'step')")
    browser.refresh()
    wait_for(browser, "!document.getElementById('resume-waiting').hidden", timeout=10)
    browser.find_element("id", "resume-waiting").click()
    wait_for(browser, "document.querySelector(\"[data-part='play-area']\").dataset.phase === 'running'")
    wait_for(browser, "window.__rr.socketIn.some((m) => m.type === 'resumed')")
    score = browser.execute_script("return window.__rr.socketIn.find((m) => m.type === 'snapshot').game.score")
    back = EN["say"]["resumedGame"].format(score=score)
    wait_for(browser, f"window.__rr.announcements.includes({json.dumps(back)})")
    said = browser.execute_script("return window.__rr.announcements")
    assert not any("Press P" in text for text in said), said
    assert EN["say"]["resumed"] not in said, said  # one announcement for taking it back, not two
    assert browser_errors(browser) == []
