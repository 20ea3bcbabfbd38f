"""Watching, replays, ghost races and the daily road in the browser, against the real server
and real WebSocket clients in headless Chromium: the new pages and their states pass axe in
every display mode; a watch page follows a game a real client plays, to its end and the way to
its replay; a replay plays, pauses and seeks by keyboard alone; a ghost race shows the ghost
beside the player; the daily road starts from the play page and has its board; Spanish is
there."""

import asyncio
import json

import pytest
from selenium.common.exceptions import ElementNotInteractableException
from selenium.webdriver.common.action_chains import ActionChains

from conftest import REPO
from test_client_pages import axe_in_every_mode
from test_client_support import (Keys, browser, browser_errors, describe_violations, device_token,  # noqa: F401
                                 open_page, press, run_axe, screenshot, wait_for)
from ws_client import GameClient, create_player, nearest_safe_move, play_to_score, run

EN = json.loads((REPO / "Web/i18n/en.json").read_text())
ES = json.loads((REPO / "Web/i18n/es.json").read_text())

PHASE = "document.querySelector(\"#{root} [data-part='play-area']\").dataset.phase"


def needs_replays(server):
    """The server answers `replay` (an unknown game is refused as such, not as an unknown type)."""
    async def probe():
        client = await GameClient.signed_in(server, create_player(server, "Probe"))
        try:
            await client.send(type="replay", gameId="0000000000000000")
            answer, _ = await client.until(lambda m: m["type"] in ("error", "replaying"))
            return answer
        finally:
            await client.close()
    answer = run(probe())
    assert answer.get("code") != "unknown_type", answer


def needs_daily_road(server):
    """The server has the daily road's routes."""
    token = create_player(server, "Probe")
    reply = server.request("GET", "/api/v1/daily/cruise", token=token)
    assert reply.status == 200, reply.body


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


def test_a_refused_watch_link_describes_its_field_until_it_is_changed(server, browser):
    open_page(browser, server.base_url, "/watch.html")
    field = browser.find_element("id", "pick-target")
    assert field.get_attribute("aria-describedby").split() == ["pick-hint"]
    field.send_keys("no such thing!", Keys.ENTER)
    wait_for(browser, "document.getElementById('pick-target').getAttribute('aria-invalid') === 'true'")
    described = browser.execute_script(
        "return document.getElementById('pick-target').getAttribute('aria-describedby').split(' ').map((id) => document.getElementById(id).textContent)")
    assert EN["watch"]["pickInvalid"] in described
    field.send_keys(Keys.BACKSPACE)  # changed: no longer the text that was refused
    assert field.get_attribute("aria-invalid") is None
    assert field.get_attribute("aria-describedby").split() == ["pick-hint"]


# ---- A real player, in a thread of its own, while the browser watches --------------------------

import queue  # noqa: E402
import threading  # noqa: E402


class SteeringPlayer(threading.Thread):
    """A real WebSocket client that starts a game and steers by the cue (so it lasts) until told
    to stop, then quits; it keeps every message it got."""

    def __init__(self, server, token, level="cruise", first=None):
        super().__init__(daemon=True)
        self.server, self.token, self.level = server, token, level
        self.first = first or {"type": "start", "level": level, "practice": False}
        self.started = queue.Queue()
        self.stop = threading.Event()
        self.messages = []
        self.over = None
        self.error = None

    def run(self):
        try:
            run(self._play())
        except BaseException as error:  # reported by the test
            self.error = error
            self.started.put(None)

    async def _play(self):
        client = await GameClient.signed_in(self.server, self.token)
        try:
            await client.send(**self.first)
            started = await client.expect("started")
            self.started.put(started)
            while True:
                if self.stop.is_set():
                    await client.send(type="quit")
                    self.over, skipped = await client.until(lambda m: m["type"] == "gameOver")
                    self.messages += skipped + [self.over]
                    return
                try:
                    message = await client.recv(timeout=0.2)
                except asyncio.TimeoutError:
                    continue
                self.messages.append(message)
                if message["type"] == "gameOver":
                    self.over = message
                    return
                if message["type"] == "step":
                    direction = nearest_safe_move(message)
                    if direction:
                        goal = min(message["safeLanes"], key=lambda lane: abs(lane - message["lane"]))
                        for _ in range(abs(goal - message["lane"])):
                            await client.send(type="move", direction=direction, step=message["step"])
        finally:
            await client.close()

    def steps(self):
        """The last frame of each step (a revised step replaces the first)."""
        return {m["step"]: m for m in self.messages if m["type"] == "step"}


def watched_steps(driver):
    return driver.execute_script("return window.__rr.socketIn.filter((m) => m.type === 'step')")


def test_a_watcher_follows_a_real_game_to_its_end_and_is_offered_its_replay(server, browser):
    ada = create_player(server, "Ada")
    player = SteeringPlayer(server, ada)
    player.start()
    started = player.started.get(timeout=15)
    assert started, player.error
    game_id = started["game"]["gameId"]
    try:
        open_page(browser, server.base_url, f"/watch.html?game={game_id}")
        wait_for(browser, "window.__rr.socketIn.some((m) => m.type === 'watching')")
        assert browser.execute_script("return window.__rr.socketOut.filter((m) => m.type === 'watch')") == [{"type": "watch", "gameId": game_id}]
        assert browser.find_element("id", "watch-heading").text == EN["watch"]["headingName"].format(name="Ada")
        wait_for(browser, "window.__rr.socketIn.filter((m) => m.type === 'step').length >= 3")
        assert browser.find_element("id", "watch-count").text == "1"
        # Sound only once the watcher asks for it: no audio context until the box is ticked.
        assert browser.execute_script("return window.__rr.contexts") == 0
        # The road on screen is the player's: the step drawn is one the player got, as it got it.
        wait_for(browser, "Number(document.querySelector(\"[data-part='road']\").dataset.step) > 0")
        shown = browser.execute_script("""
            const road = document.querySelector("[data-part='road']");
            return { step: Number(road.dataset.step), score: document.querySelector("[data-part='score']").textContent,
                     lane: Number(road.querySelector(".cell.player, .cell.crash")?.dataset.lane) };
        """)
        mine = player.steps()[shown["step"]]
        assert shown["score"] == str(mine["score"])  # (the lane may have moved since: a `moved` follows a step)
        # The status key on the focused road says whom and how it goes.
        browser.find_element("css selector", "#watch-game [data-part='play-area']").click()
        press(browser, "s")
        wait_for(browser, "window.__rr.announcements.some((t) => t.startsWith('Watching Ada.'))")
        browser.find_element("css selector", "label[for='watch-sound']").click()
        wait_for(browser, "window.__rr.oscillators.length > 0", timeout=10)
        failures = axe_in_every_mode(browser, "watch-live")
        assert not failures, describe_violations(failures)
    finally:
        player.stop.set()
        player.join(timeout=20)
    assert player.error is None, player.error
    over = player.over
    # The end: said, shown, focused, with the replay one activation away.
    wait_for(browser, "!document.getElementById('watch-ended').hidden")
    # The watcher got exactly the player's step frames, in order, from its first to the end.
    theirs = [m for m in player.messages if m["type"] == "step"]
    seen = watched_steps(browser)
    assert seen and seen[0] in theirs
    first = theirs.index(seen[0])
    assert seen == theirs[first:], "the watched frames differ from the player's"
    text = browser.find_element("id", "ended-text").text
    assert str(over["score"]) in text and "Ada" in text, text
    assert browser.find_element("id", "ended-replay").get_attribute("href").endswith(f"/replay.html?game={game_id}")
    assert browser.execute_script("return document.activeElement.id") == "ended-heading"
    said = EN["watch"]["sayEnded"].format(name="Ada", score=over["score"])
    wait_for(browser, f"window.__rr.announcements.includes({json.dumps(said)})")
    assert any(m["type"] == "watchers" and m["count"] == 1 for m in player.messages), "the player was never told of its watcher"
    failures = axe_in_every_mode(browser, "watch-ended")
    assert not failures, describe_violations(failures)
    no_errors(browser)


# ---- Replays and ghosts ------------------------------------------------------------------------

def tab_to(driver, predicate_js, limit=60, back=False):
    for _ in range(limit):
        if back:
            ActionChains(driver).key_down(Keys.SHIFT).send_keys(Keys.TAB).key_up(Keys.SHIFT).perform()
        else:
            press(driver, Keys.TAB)
        if driver.execute_script(f"const e = document.activeElement; return {predicate_js};"):
            return
    raise AssertionError(f"Tab never reached {predicate_js}")


def last_state(driver):
    return driver.execute_script("return window.__rr.socketIn.filter((m) => m.type === 'replayState').pop() ?? null")


def test_a_replay_plays_pauses_and_seeks_by_keyboard_alone(server, browser):
    needs_replays(server)
    ada = create_player(server, "Ada")
    rename(server, ada, "Ada")
    over = play_to_score(server, ada, "cruise", 6)
    game_id, steps = over["gameId"], over["steps"]
    open_page(browser, server.base_url, f"/replay.html?game={game_id}")
    wait_for(browser, "window.__rr.socketIn.some((m) => m.type === 'replaying')")
    assert browser.execute_script("return window.__rr.socketOut.filter((m) => m.type === 'replay')") == [{"type": "replay", "gameId": game_id}]
    assert browser.find_element("id", "replay-heading").text == EN["replay"]["headingName"].format(name="Ada")
    wait_for(browser, "window.__rr.socketIn.some((m) => m.type === 'step')")
    browser.execute_script("document.activeElement.blur()")

    # Pause with the keyboard: Tab to the button, Enter; the server's state shows.
    tab_to(browser, "e.id === 'replay-play'")
    press(browser, Keys.ENTER)
    wait_for(browser, "window.__rr.socketIn.some((m) => m.type === 'replayState' && m.playing === false)")
    assert browser.execute_script("return window.__rr.socketOut.filter((m) => m.type === 'replayControl')") == [{"type": "replayControl", "action": "pause"}]
    wait_for(browser, f"document.getElementById('replay-play').textContent === {json.dumps(EN['replay']['play'])}")
    wait_for(browser, f"{PHASE.format(root='replay-game')} === 'paused'")

    # Seek with the slider's own keys: Home to the start, one step on, End to the end.
    tab_to(browser, "e.id === 'replay-seek'", limit=4)
    press(browser, Keys.HOME)
    wait_for(browser, "(s => s && s.step === 0)(window.__rr.socketIn.filter((m) => m.type === 'replayState').pop())")
    wait_for(browser, f"document.getElementById('replay-position').textContent === {json.dumps(EN['replay']['position'].format(step=0, steps=steps))}")
    # The road follows with the seek's snapshot, which comes after the replayState.
    wait_for(browser, "Number(document.querySelector(\"#replay-game [data-part='road']\").dataset.step) === 0")
    press(browser, Keys.ARROW_RIGHT)
    wait_for(browser, "(s => s && s.step === 1)(window.__rr.socketIn.filter((m) => m.type === 'replayState').pop())")
    wait_for(browser, "Number(document.querySelector(\"#replay-game [data-part='road']\").dataset.step) === 1")
    seeks = browser.execute_script("return window.__rr.socketOut.filter((m) => m.action === 'seek').map((m) => m.step)")
    assert seeks == [0, 1], seeks
    said = EN["replay"]["positionPaused"].format(step=1, steps=steps)
    wait_for(browser, f"window.__rr.announcements.includes({json.dumps(said)})")
    failures = axe_in_every_mode(browser, "replay-paused")
    assert not failures, describe_violations(failures)

    # Play again from step 1: frames come, the road moves on, to the end.
    tab_to(browser, "e.id === 'replay-play'", limit=4, back=True)
    press(browser, Keys.ENTER)
    wait_for(browser, "Number(document.querySelector(\"#replay-game [data-part='road']\").dataset.step) > 2", timeout=20)
    wait_for(browser, "window.__rr.socketIn.some((m) => m.type === 'replayState' && m.ended === true)", timeout=steps + 30)
    wait_for(browser, f"{PHASE.format(root='replay-game')} === 'over'")
    failures = axe_in_every_mode(browser, "replay-ended")
    assert not failures, describe_violations(failures)
    no_errors(browser)


def test_a_step_button_that_reaches_the_end_hands_focus_to_the_other_one(server, browser):
    """Step back at step 0 (or forward at the last step) is disabled; under focus it would drop
    focus to the page's start, so focus goes to the other step button."""
    needs_replays(server)
    ada = create_player(server, "Ada")
    over = play_to_score(server, ada, "cruise", 6)
    steps = over["steps"]
    open_page(browser, server.base_url, f"/replay.html?game={over['gameId']}")
    wait_for(browser, "window.__rr.socketIn.some((m) => m.type === 'replaying')")
    browser.execute_script("document.activeElement.blur()")
    tab_to(browser, "e.id === 'replay-play'")
    press(browser, Keys.ENTER)
    wait_for(browser, "window.__rr.socketIn.some((m) => m.type === 'replayState' && m.playing === false)")
    tab_to(browser, "e.id === 'replay-seek'", limit=4)
    press(browser, Keys.HOME)
    press(browser, Keys.ARROW_RIGHT)
    wait_for(browser, "(s => s && s.step === 1)(window.__rr.socketIn.filter((m) => m.type === 'replayState').pop())")
    tab_to(browser, "e.id === 'replay-back'", limit=4, back=True)
    press(browser, Keys.ENTER)
    wait_for(browser, "(s => s && s.step === 0)(window.__rr.socketIn.filter((m) => m.type === 'replayState').pop())")
    wait_for(browser, "document.getElementById('replay-back').disabled")
    assert browser.execute_script("return document.activeElement.id") == "replay-forward"
    # And the other way: at the last step but one, forward once.
    tab_to(browser, "e.id === 'replay-seek'", limit=4)
    press(browser, Keys.END)
    press(browser, Keys.ARROW_LEFT)
    wait_for(browser, f"(s => s && s.step === {steps - 1})(window.__rr.socketIn.filter((m) => m.type === 'replayState').pop())")
    tab_to(browser, "e.id === 'replay-forward'", limit=4, back=True)
    press(browser, Keys.ENTER)
    wait_for(browser, "document.getElementById('replay-forward').disabled")
    assert browser.execute_script("return document.activeElement.id") == "replay-back"
    no_errors(browser)


def test_racing_a_ghost_shows_its_lane_and_score_beside_yours(server, browser):
    needs_replays(server)
    ada = create_player(server, "Ada")
    rename(server, ada, "Ada")
    over = play_to_score(server, ada, "cruise", 6)
    open_page(browser, server.base_url, f"/replay.html?game={over['gameId']}")
    wait_for(browser, "window.__rr.socketIn.some((m) => m.type === 'replaying')")
    browser.find_element("id", "race-ghost").click()
    wait_for(browser, "window.__rr.socketIn.some((m) => m.type === 'started')")
    sent = browser.execute_script("return window.__rr.socketOut.filter((m) => ['stopWatching', 'raceGhost'].includes(m.type))")
    assert sent == [{"type": "stopWatching"}, {"type": "raceGhost", "gameId": over["gameId"]}]
    started = browser.execute_script("return window.__rr.socketIn.find((m) => m.type === 'started')")
    assert started["game"]["ghost"]["gameId"] == over["gameId"] and started["game"]["practice"] is True
    wait_for(browser, f"{PHASE.format(root='ghost-race')} === 'running'")
    assert browser.execute_script("return document.activeElement.closest('#ghost-race') !== null")
    wait_for(browser, "window.__rr.socketIn.some((m) => m.type === 'ghost')")
    wait_for(browser, "document.querySelector(\"[data-part='ghost-lane']\").textContent !== '—'")
    ghost = browser.execute_script("return window.__rr.socketIn.filter((m) => m.type === 'ghost').pop()")
    lanes = [EN["lanes"]["left"], EN["lanes"]["middle"], EN["lanes"]["right"]]
    wait_for(browser, "document.querySelector(\"#ghost-race .cell.ghost, #ghost-race .cell.ghost-crash\") !== null")
    assert browser.find_element("css selector", "[data-part='ghost-lane']").text in lanes
    assert ghost["state"] in ("racing", "crashed")
    name = browser.find_element("css selector", "[data-part='ghost-name']").text
    assert name == EN["replay"]["ghostOf"].format(name="Ada", score=over["score"])
    # The ghost is not heard unless wanted: no note in the ghost's voice (4x a lane note).
    voices = browser.execute_script("return window.__rr.notes().filter((n) => n.wave === 'triangle' && [261.63, 329.63, 392].some((f) => Math.abs(n.frequency - 4 * f) < 0.5)).length")
    assert voices == 0
    failures = axe_in_every_mode(browser, "ghost-race")
    # The player never moves, so on a slow machine the game may have crashed during the axe
    # passes; then the quit button is gone and the game over is the crash's, which ends the
    # same way (ghostOver in Web/js/pages/replay.js).
    if browser.execute_script("return document.getElementById('game-over').hidden"):
        try:
            browser.find_element("css selector", "#ghost-race [data-part='quit']").click()
        except ElementNotInteractableException:
            assert browser.execute_script("return window.__rr.socketIn.some((m) => m.type === 'crash')")
    wait_for(browser, "!document.getElementById('game-over').hidden")
    assert browser.execute_script("return document.activeElement.id") == "play-again"
    assert "Ada" in browser.find_element("id", "over-text").text
    failures.update({f"over-{k}": v for k, v in axe_in_every_mode(browser, "ghost-over").items()})
    assert not failures, describe_violations(failures)
    no_errors(browser)


def test_racing_a_ghost_keeps_focus_on_the_race_while_it_starts_and_when_it_is_refused(server, browser):
    """"Race this ghost" is hidden as it is pressed: focus goes to the race's heading (where a
    refusal is shown) rather than to the page's start, and the road takes it once the race runs.
    Here the player has a game going on another connection, so the race is refused."""
    needs_replays(server)
    ada = create_player(server, "Ada")
    over = play_to_score(server, ada, "cruise", 6)
    open_page(browser, server.base_url, f"/replay.html?game={over['gameId']}")
    wait_for(browser, "window.__rr.socketIn.some((m) => m.type === 'replaying')")

    async def scenario():
        elsewhere = await GameClient.signed_in(server, device_token(browser))
        try:
            await elsewhere.start("cruise", practice=True)
            browser.execute_script("document.activeElement.blur()")
            tab_to(browser, "e.id === 'race-ghost'")
            press(browser, Keys.ENTER)
            wait_for(browser, "window.__rr.socketIn.some((m) => m.type === 'error' && m.inReplyTo === 'raceGhost')")
            wait_for(browser, "document.getElementById('ghost-message').textContent !== ''")
            assert browser.execute_script("return document.activeElement.id") == "ghost-race-heading"
            assert browser.find_element("id", "ghost-message").text == EN["replay"]["errors"]["game_in_progress"]
        finally:
            await elsewhere.send(type="quit")
            await elsewhere.close()
    run(scenario())
    no_errors(browser)


# ---- The daily road ----------------------------------------------------------------------------

def test_the_daily_road_starts_from_the_play_page_once_scored_then_as_practice(server, browser):
    needs_daily_road(server)
    open_page(browser, server.base_url, "/")
    wait_for(browser, "!document.getElementById('start').disabled")
    browser.find_element("css selector", "label[for='road-daily']").click()
    wait_for(browser, "document.getElementById('daily-status').textContent.startsWith(\"Today's road (\")")
    status = browser.find_element("id", "daily-status").text
    assert "still to come" in status and "free" in status, status
    failures = axe_in_every_mode(browser, "play-daily")
    browser.find_element("id", "start").click()
    wait_for(browser, f"{PHASE.format(root='main')} === 'running'")
    sent = browser.execute_script("return window.__rr.socketOut.filter((m) => m.type === 'start')")
    assert sent == [{"type": "start", "level": "cruise", "road": "daily", "practice": False}]
    started = browser.execute_script("return window.__rr.socketIn.find((m) => m.type === 'started')")
    assert started["game"]["road"] == "daily" and started["game"]["day"]
    browser.find_element("css selector", "[data-part='quit']").click()
    wait_for(browser, "!document.getElementById('game-over').hidden")
    over = browser.execute_script("return window.__rr.socketIn.find((m) => m.type === 'gameOver')")
    assert over["daily"]["day"] == started["game"]["day"]
    wait_for(browser, "!document.getElementById('over-daily').hidden")
    # Used: the status says so and the next run on it is practice, free.
    wait_for(browser, "document.getElementById('daily-status').textContent.includes('is used')")
    assert browser.execute_script("return document.getElementById('daily-practice').checked && document.getElementById('daily-practice').disabled")
    failures.update({f"over-{k}": v for k, v in axe_in_every_mode(browser, "play-daily-used").items()})
    browser.find_element("id", "play-again").click()
    wait_for(browser, "window.__rr.socketIn.filter((m) => m.type === 'started').length === 2")
    sent = browser.execute_script("return window.__rr.socketOut.filter((m) => m.type === 'start').pop()")
    assert sent == {"type": "start", "level": "cruise", "road": "daily", "practice": True}
    browser.find_element("css selector", "[data-part='quit']").click()
    wait_for(browser, "window.__rr.socketIn.filter((m) => m.type === 'gameOver').length === 2")
    assert not failures, describe_violations(failures)
    no_errors(browser)


def test_the_daily_board_lists_the_run_with_its_replay_and_your_recent_games_link_theirs(server, browser):
    needs_daily_road(server)
    open_page(browser, server.base_url, "/leaderboards.html")
    me = device_token(browser)
    rename(server, me, "Bea")

    async def daily_run():
        """The one scored run on today's Cruise road, steered by the cue, quit at a point."""
        client = await GameClient.signed_in(server, me)
        try:
            await client.send(type="start", level="cruise", road="daily", practice=False)
            started = await client.expect("started")
            while True:
                message = await client.recv(timeout=10)
                if message["type"] == "gameOver":
                    return started, message
                if message["type"] != "step":
                    continue
                if message["score"] >= 1:
                    await client.send(type="quit")
                    return started, await client.expect("gameOver")
                direction = nearest_safe_move(message)
                if direction:
                    goal = min(message["safeLanes"], key=lambda lane: abs(lane - message["lane"]))
                    for _ in range(abs(goal - message["lane"])):
                        await client.send(type="move", direction=direction, step=message["step"])
        finally:
            await client.close()
    started, over = run(daily_run())
    assert started["game"]["road"] == "daily" and over["daily"]["day"] == started["game"]["day"]
    open_page(browser, server.base_url, "/leaderboards.html")
    browser.find_element("css selector", "label[for='board-level-cruise']").click()
    browser.find_element("css selector", "label[for='board-period-daily']").click()
    day = started["game"]["day"]
    shown = EN["boards"]["loaded"].format(level="Cruise", period=EN["daily"]["boardOn"].format(day=day))
    wait_for(browser, f"document.getElementById('board-status').textContent === {json.dumps(shown)}")
    assert browser.find_element("id", "board-day").get_attribute("value") == day
    link = browser.find_element("css selector", "#top-table tbody tr a")
    assert link.get_attribute("href").endswith(f"/replay.html?game={over['gameId']}")
    assert link.get_attribute("aria-label") == EN["replay"]["linkLabel"].format(name="Bea", score=over["score"])
    # The recent games: this one, newest first, with its replay.
    wait_for(browser, "document.querySelectorAll('#recent-table tbody tr').length >= 1")
    recent = browser.find_element("css selector", "#recent-table tbody tr a").get_attribute("href")
    assert recent.endswith(f"/replay.html?game={over['gameId']}")
    failures = axe_in_every_mode(browser, "leaderboards-daily")
    assert not failures, describe_violations(failures)
    # Its replay says which road it ran on, as the game's own page did.
    open_page(browser, server.base_url, f"/replay.html?game={over['gameId']}")
    wait_for(browser, "document.getElementById('replay-subject').textContent.length > 0")
    subject = browser.find_element("id", "replay-subject").text
    assert EN["replay"]["dailyRoad"].format(day=day) in subject, subject
    no_errors(browser)


# ---- Spanish -----------------------------------------------------------------------------------

def test_show_more_moves_focus_to_the_first_row_it_adds_on_both_tables(server, browser):
    """"Show more" is hidden once there is no more, and a screen reader would not hear the table
    grow: focus goes to the first new row's replay link (recent games and the top board)."""
    open_page(browser, server.base_url, "/leaderboards.html")

    async def practise(times):
        client = await GameClient.signed_in(server, device_token(browser))
        try:
            for _ in range(times):
                await client.start("cruise", practice=True)
                await client.send(type="quit")
                await client.expect("gameOver")
        finally:
            await client.close()
    run(practise(11))
    for _ in range(11):
        play_to_score(server, create_player(server, "Racer"), "cruise", 1)
    open_page(browser, server.base_url, "/leaderboards.html")
    browser.find_element("css selector", "input[name='board-level'][value='cruise']").click()
    for table, more in (("recent-table", "recent-more"), ("top-table", "top-more")):
        wait_for(browser, f"!document.getElementById('{more}').hidden")
        assert browser.execute_script(f"return document.querySelectorAll('#{table} tbody tr').length") == 10
        browser.execute_script("arguments[0].focus()", browser.find_element("id", more))
        press(browser, Keys.ENTER)
        wait_for(browser, f"document.querySelectorAll('#{table} tbody tr').length === 11")
        wait_for(browser, f"document.getElementById('{more}').hidden")
        focus = browser.execute_script(
            f"const e = document.activeElement; return [e.tagName, e.closest('tr') === document.querySelectorAll('#{table} tbody tr')[10]]")
        assert focus == ["A", True], focus
    no_errors(browser)


def test_the_new_pages_speak_spanish(server, browser):
    open_page(browser, server.base_url, "/settings.html")
    browser.find_element("id", "language").send_keys("Español")
    wait_for(browser, "document.documentElement.lang === 'es'")
    wait_for(browser, "document.getElementById('save-status').textContent.startsWith(arguments[0])".replace(
        "arguments[0]", json.dumps(ES["settings"]["saved"].split(" ")[0])))
    assert browser.find_element("id", "ghost-settings-heading").text == ES["replay"]["settingsHeading"]
    for path, heading in (("/watch.html", ES["watch"]["heading"]), ("/replay.html", ES["replay"]["heading"])):
        open_page(browser, server.base_url, path)
        assert browser.execute_script("return document.documentElement.lang") == "es"
        assert browser.find_element("tag name", "h1").text == heading
        violations = run_axe(browser)
        assert violations == [], describe_violations(violations)
    open_page(browser, server.base_url, "/")
    assert browser.find_element("css selector", "label[for='road-daily']").text == ES["daily"]["today"]
    open_page(browser, server.base_url, "/leaderboards.html")
    assert browser.find_element("id", "recent-heading").text == ES["replay"]["recentHeading"]


def test_one_switch_steps_through_a_page_without_a_race_and_presses_the_highlighted_control(server, browser):
    open_page(browser, server.base_url, "/replay.html")
    me = device_token(browser)
    current = server.request("GET", "/api/v1/settings", token=me).json()
    reply = server.request("PATCH", "/api/v1/settings", {"controls": {"oneSwitch": True, "scanIntervalMs": 1500}}, token=me,
                           headers={"If-Match": f'"{current["version"]}"'})
    assert reply.status == 200, reply.body
    open_page(browser, server.base_url, "/replay.html")
    browser.execute_script("document.activeElement.blur()")
    press(browser, Keys.SPACE)  # the switch: starts the highlight on the page's one choice here
    wait_for(browser, "document.querySelector('.switch-highlight')?.getAttribute('href') === '/leaderboards.html'")
    assert browser.execute_script("return document.activeElement.classList.contains('switch-highlight')")
    said = EN["watch"]["switchScan"].format(count=1, choice=EN["replay"]["noneLink"])
    wait_for(browser, f"window.__rr.announcements.includes({json.dumps(said)})")
    press(browser, Keys.SPACE)  # and presses it
    wait_for(browser, "location.pathname === '/leaderboards.html'")


# ---- A race watched: the standings and the racer followed -----------------------------------

class RacingPair(threading.Thread):
    """Ada and Bo race in a practice room (real clients, steering by the cue) until told to stop;
    then both quit. `code` gets the room's code once the race has started."""

    def __init__(self, server):
        super().__init__(daemon=True)
        self.server = server
        self.code = queue.Queue()
        self.stop = threading.Event()
        self.overs = {}
        self.error = None

    def run(self):
        try:
            run(self._race())
        except BaseException as error:  # reported by the test
            self.error = error
            self.code.put(None)

    async def _race(self):
        ada = await GameClient.signed_in(self.server, create_player(self.server, "Ada"))
        bo = await GameClient.signed_in(self.server, create_player(self.server, "Bo"))
        try:
            await ada.send(type="openRoom", level="cruise", seats=2, practice=True)
            code = (await ada.expect("room"))["room"]["code"]
            await bo.send(type="joinRoom", code=code)
            await bo.expect("room")
            await bo.send(type="ready", ready=True)
            await bo.until(lambda m: m["type"] == "room" and all(r["ready"] for r in m["room"]["racers"] if r["seat"] == 1))
            await ada.send(type="startRace")
            for client in (ada, bo):
                await client.expect("started")
            self.code.put(code)
            await asyncio.gather(self._steer("Ada", ada), self._steer("Bo", bo))
        finally:
            await ada.close()
            await bo.close()

    async def _steer(self, name, client):
        while True:
            if self.stop.is_set():
                await client.send(type="quit")
                self.overs[name], _ = await client.until(lambda m: m["type"] == "gameOver", timeout=15)
                return
            try:
                message = await client.recv(timeout=0.2)
            except asyncio.TimeoutError:
                continue
            if message["type"] == "gameOver":
                self.overs[name] = message
                return
            if message["type"] == "step":
                direction = nearest_safe_move(message)
                if direction:
                    goal = min(message["safeLanes"], key=lambda lane: abs(lane - message["lane"]))
                    for _ in range(abs(goal - message["lane"])):
                        await client.send(type="move", direction=direction, step=message["step"])


def test_a_race_is_watched_with_its_standings_and_the_racer_to_follow(server_factory, browser):
    server = server_factory("--race-countdown-seconds", "1", "--standings-interval-ms", "200")
    racers = RacingPair(server)
    racers.start()
    code = racers.code.get(timeout=20)
    assert code, racers.error
    try:
        open_page(browser, server.base_url, f"/watch.html?room={code}")
        wait_for(browser, "window.__rr.socketIn.some((m) => m.type === 'watching')")
        assert browser.find_element("id", "watch-heading").text == EN["watch"]["headingName"].format(name="Ada")
        wait_for(browser, "document.querySelectorAll('#standings tbody tr').length === 2")
        assert not browser.find_element("id", "standings").get_attribute("hidden")
        names = browser.execute_script("return [...document.querySelectorAll('#standings [name=follow]')].map((r) => [r.labels[0].textContent, r.checked])")
        assert names == [["Ada", True], ["Bo", False]], names
        followed = browser.execute_script("return document.querySelector('#standings tbody tr.me td.name').textContent")
        assert followed == EN["watch"]["followedName"].format(name="Ada")
        # Follow Bo, by keyboard: the radio group's arrow key.
        browser.find_element("id", "follow-seat-0").send_keys(Keys.ARROW_RIGHT)
        wait_for(browser, "window.__rr.socketOut.some((m) => m.type === 'watch' && m.seat === 1)")
        wait_for(browser, f"document.getElementById('watch-heading').textContent === {json.dumps(EN['watch']['headingName'].format(name='Bo'))}")
        assert browser.execute_script("return new URLSearchParams(location.search).get('seat')") == "1"
        wait_for(browser, "document.querySelector('#standings tbody tr.me td.name')?.textContent === " + json.dumps(EN["watch"]["followedName"].format(name="Bo")))
        failures = axe_in_every_mode(browser, "watch-race")
        assert not failures, describe_violations(failures)
    finally:
        racers.stop.set()
        racers.join(timeout=30)
    assert racers.error is None, racers.error
    wait_for(browser, "!document.getElementById('watch-ended').hidden")
    assert str(racers.overs["Bo"]["score"]) in browser.find_element("id", "ended-text").text
    no_errors(browser)
