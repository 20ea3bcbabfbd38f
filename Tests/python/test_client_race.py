"""The race page (Web/race.html) in real headless Chromium against the real server: a keyboard-
only host opens a room, a second browser joins by its link, both get ready, the host starts,
both race with the keyboard to the end and see the results in the server's finish order; a
wrong code is refused beside the code field; axe finds nothing on every part of the page
(entry, lobby, countdown, race, the player's own end, results) in every display mode; the
strings exist in English and Spanish; rivals' news is spoken at most once every few seconds,
only what matters, and never when the player turned it off."""

import json
import time

import pytest

from conftest import REPO
from test_client_pages import axe_in_every_mode
from test_client_support import (Keys, browser, browser_errors, describe_violations, device_token, new_browser,  # noqa: F401
                                 open_page, press, run_axe, screenshot, wait_for)
from ws_client import GameClient, create_player, run

EN = json.loads((REPO / "Web/i18n/en.json").read_text())
ES = json.loads((REPO / "Web/i18n/es.json").read_text())
PHASE = "document.getElementById('main').dataset.phase"
ROAD_PHASE = "document.querySelector(\"[data-part='play-area']\").dataset.phase"


def require_rooms(server):
    """Checks that `server` answers openRoom with a room (then leaves it again)."""
    async def probe():
        client = await GameClient.signed_in(server, create_player(server, "Probe"))
        try:
            await client.send(type="openRoom", level="cruise", seats=2, practice=True)
            answer, _ = await client.until(lambda m: m["type"] in ("room", "error"), timeout=5)
            if answer["type"] == "room":
                await client.send(type="leaveRoom")
                await client.until(lambda m: m["type"] == "roomLeft", timeout=5)
            return answer
        finally:
            await client.close()
    answer = run(probe())
    assert answer["type"] == "room", answer


def flatten(table, prefix=""):
    for key, value in table.items():
        if isinstance(value, dict):
            yield from flatten(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value


def patch_settings(server, driver, patch):
    token = device_token(driver)
    version = server.request("GET", "/api/v1/settings", token=token).json()["version"]
    reply = server.request("PATCH", "/api/v1/settings", patch, token=token, headers={"If-Match": f'"{version}"'})
    assert reply.status == 200, reply.body


def tab_to(driver, predicate_js, limit=60):
    """Presses Tab until the focused element satisfies `predicate_js` (on `e`)."""
    for _ in range(limit):
        press(driver, Keys.TAB)
        if driver.execute_script(f"const e = document.activeElement; return Boolean({predicate_js});"):
            return
    raise AssertionError(f"Tab never reached {predicate_js}")


def spoken(driver):
    return driver.execute_script("return window.__rr.announcements.slice()")


def received(driver, type_):
    return driver.execute_script("return window.__rr.socketIn.filter((m) => m.type === arguments[0])", type_)


# ---- Without rooms on the server: the page itself ----

def test_the_race_page_is_in_the_navigation_and_in_english_and_spanish(server, browser):
    race_en = dict(flatten(EN["race"]))
    race_es = dict(flatten(ES["race"]))
    assert race_en.keys() == race_es.keys()
    assert all(isinstance(text, str) and text.strip() for text in [*race_en.values(), *race_es.values()])
    assert [key for key in race_en if race_en[key] == race_es[key] and "{" not in race_en[key]] == []

    open_page(browser, server.base_url, "/")
    link = browser.find_element("css selector", "#nav-list a[href='/race.html']")
    assert link.text == EN["race"]["nav"]
    link.click()
    wait_for(browser, "document.documentElement.dataset.ready === 'true'")
    facts = browser.execute_script("""
        return {
          h1: [...document.querySelectorAll("h1")].map((h) => h.textContent),
          current: document.querySelector("nav a[aria-current='page']")?.getAttribute("href"),
          untranslated: [...document.querySelectorAll("[data-i18n]")].filter((e) => e.textContent.trim() === "" || e.textContent === e.dataset.i18n).map((e) => e.dataset.i18n),
          emptyAtLoad: window.__rr.announcerEmptyAtLoad,
          title: document.title,
        };
    """)
    assert facts == {"h1": [EN["race"]["heading"]], "current": "/race.html", "untranslated": [], "emptyAtLoad": True,
                     "title": EN["race"]["pageTitle"]}

    patch_settings(server, browser, {"language": "es"})
    open_page(browser, server.base_url, "/race.html")
    wait_for(browser, "document.documentElement.lang === 'es'")
    assert browser.find_element("tag name", "h1").text == ES["race"]["heading"]
    assert browser.title == ES["race"]["pageTitle"]
    assert browser.find_element("id", "open-plays-note").text == ES["race"]["playsNote"]
    assert browser.find_element("css selector", "#nav-list a[href='/race.html']").text == ES["race"]["nav"]
    violations = run_axe(browser)
    assert violations == [], describe_violations(violations)
    assert browser_errors(browser) == []


def test_the_entry_says_that_a_race_uses_a_play_unless_it_is_practice(server, browser):
    open_page(browser, server.base_url, "/race.html")
    note = browser.find_element("id", "open-plays-note")
    assert note.text == EN["race"]["playsNote"]
    # Said to a screen reader with the button it is about, and with the practice box.
    assert browser.find_element("id", "open-room").get_attribute("aria-describedby") == "open-plays-note"
    assert browser.find_element("id", "open-practice-hint").text == EN["race"]["practiceHint"]
    assert EN["race"]["quickIntro"] in browser.find_element("id", "quick-intro").text


def test_an_empty_code_is_explained_beside_the_field_and_nothing_is_sent(server, browser):
    open_page(browser, server.base_url, "/race.html")
    wait_for(browser, "window.__rr.socketIn.some((m) => m.type === 'welcome')")
    browser.find_element("id", "join-room").click()
    message = browser.find_element("id", "join-message")
    assert message.text.endswith(EN["race"]["errors"]["code_empty"])
    field = browser.find_element("id", "join-code")
    assert field.get_attribute("aria-invalid") == "true"
    assert "join-message" in field.get_attribute("aria-describedby")
    assert browser.execute_script("return document.activeElement.id") == "join-code"
    assert browser.execute_script("return window.__rr.socketOut.filter((m) => m.type === 'joinRoom')") == []


def test_axe_finds_nothing_on_the_entry_part_in_every_mode(server, browser):
    open_page(browser, server.base_url, "/race.html")
    failures = axe_in_every_mode(browser, "race-entry")
    assert not failures, describe_violations(failures)
    assert browser_errors(browser) == []


def test_rivals_are_announced_at_most_once_every_few_seconds_and_only_rank_changes_and_crashes(server, browser):
    """The race's StandingsAnnouncer in the page's own modules, fed a burst of standings: the
    first change is said at once, the rest wait out the spacing and are said together; the
    player's own crash and other racers' scores are not news; nothing when turned off."""
    open_page(browser, server.base_url, "/race.html")
    result = browser.execute_async_script("""
        const done = arguments[arguments.length - 1];
        import("/js/race/standings-announcer.js").then(async ({ StandingsAnnouncer, SPACING_MS }) => {
          const said = [];
          let allowed = true;
          const speaker = { say: (text, options) => said.push({ text, low: options?.low === true, at: performance.now() }) };
          const rivals = new StandingsAnnouncer(speaker, () => allowed);
          const line = (seat, name, score, state, place) => ({ seat, name, score, state, place, lane: 1, step: 1 });
          const t0 = performance.now();
          rivals.update([line(0, "Ada", 0, "racing", 1), line(1, "Bo", 0, "racing", 2), line(2, "Cy", 0, "racing", 3)], 1);
          rivals.update([line(0, "Ada", 3, "racing", 2), line(1, "Bo", 4, "racing", 1), line(2, "Cy", 1, "racing", 3)], 1);
          await new Promise((r) => setTimeout(r, 100));
          for (let i = 0; i < 10; i++) {
            rivals.update([line(0, "Ada", 5 + i, "racing", 1 + (i % 2)), line(1, "Bo", 5 + i, "racing", 2 - (i % 2)), line(2, "Cy", 2, "crashed", 3)], 1);
          }
          await new Promise((r) => setTimeout(r, 200));
          const early = said.length;
          await new Promise((r) => setTimeout(r, SPACING_MS + 300));
          rivals.update([line(0, "Ada", 20, "racing", 1), line(1, "Bo", 6, "crashed", 2), line(2, "Cy", 2, "crashed", 3)], 1);
          allowed = false;
          rivals.update([line(0, "Ada", 30, "crashed", 1), line(1, "Bo", 6, "crashed", 2), line(2, "Cy", 2, "crashed", 3)], 1);
          await new Promise((r) => setTimeout(r, SPACING_MS + 300));
          done({ said: said.map((s) => ({ text: s.text, low: s.low, at: s.at - t0 })), early, spacing: SPACING_MS });
        });
    """)
    said = result["said"]
    assert result["early"] == 1, said
    assert said[0]["text"] == EN["race"]["sayYourPlace"].format(place=1, count=3)
    assert all(entry["low"] for entry in said), said  # dropped when the player's own words wait
    # The burst's news came once, together, after the spacing: Cy's crash (and no place: the
    # flickering place was back at 1, where it was last said... or at 2, said once).
    assert len(said) == 2, said
    assert said[1]["at"] - said[0]["at"] >= result["spacing"] - 50
    assert EN["race"]["sayRivalCrashed"].format(name="Cy", score=2) in said[1]["text"]
    assert "Bo" not in " ".join(entry["text"] for entry in said)  # turned off before Bo's crash was due
    assert not any("Ada" in entry["text"] for entry in said)


def test_the_rival_announcements_setting_is_on_the_settings_page_and_kept_on_this_device(server, browser):
    open_page(browser, server.base_url, "/settings.html")
    box = browser.find_element("id", "rivalAnnouncements")
    label = browser.find_element("css selector", "label[for='rivalAnnouncements']")
    assert label.text == EN["race"]["settingRivals"] and box.is_selected()  # on by default
    version = server.request("GET", "/api/v1/settings", token=device_token(browser)).json()["version"]
    label.click()
    wait_for(browser, f"document.getElementById('rivalAnnouncements-status').textContent === {json.dumps(EN['settings']['deviceSaved'])}")
    assert browser.execute_script("return JSON.parse(localStorage.getItem('retrorapid.deviceSettings'))") == {"rivalAnnouncements": False, "ghostAudio": False}
    # Not sent to the server (its settings document has no such field and would refuse it).
    assert server.request("GET", "/api/v1/settings", token=device_token(browser)).json()["version"] == version
    open_page(browser, server.base_url, "/settings.html")
    assert not browser.find_element("id", "rivalAnnouncements").is_selected()
    violations = run_axe(browser)
    assert violations == [], describe_violations(violations)
    assert browser_errors(browser) == []


# ---- With rooms: the whole race ----

def rooms_server(server_factory, *flags):
    """A server started with `flags` (the race's test settings), with rooms."""
    running = server_factory(*flags)
    require_rooms(running)
    return running


@pytest.fixture
def race_server(server_factory):
    return rooms_server(server_factory, "--race-countdown-seconds", "3")


@pytest.fixture
def second_browser():
    driver = new_browser()
    yield driver
    driver.quit()


FRAME = """
  const road = document.querySelector("[data-part='road']");
  const player = road.querySelector(".cell.player, .cell.crash");
  return {
    step: Number(road.dataset.step),
    lane: player ? Number(player.dataset.lane) : null,
    safe: [...document.querySelectorAll("[data-part='cue-strip'] li.safe")].map((li) => Number(li.dataset.lane)),
    road: document.querySelector("[data-part='play-area']").dataset.phase,
    page: document.getElementById("main").dataset.phase,
  };
"""


def steer_once(driver, frame, seen):
    """One look at the screen and, if the car is in a lane the strip marks blocked, the arrow
    keys toward the nearest safe one; returns the step seen."""
    if frame["step"] > seen and frame["safe"] and frame["lane"] is not None and frame["lane"] not in frame["safe"]:
        target = min(frame["safe"], key=lambda lane: abs(lane - frame["lane"]))
        key = Keys.ARROW_LEFT if target < frame["lane"] else Keys.ARROW_RIGHT
        press(driver, *([key] * abs(target - frame["lane"])))
    return frame["step"]


def open_room_by_keyboard(driver, base_url):
    open_page(driver, base_url, "/race.html")
    wait_for(driver, "window.__rr.socketIn.some((m) => m.type === 'welcome')")
    driver.execute_script("document.activeElement.blur()")
    tab_to(driver, "e.name === 'open-level'")
    assert driver.execute_script("return document.activeElement.value") == "cruise"
    tab_to(driver, "e.id === 'open-room'", limit=6)
    press(driver, Keys.ENTER)
    wait_for(driver, f"{PHASE} === 'lobby'")
    assert driver.execute_script("return document.activeElement.id") == "lobby-heading"
    return driver.execute_script("return window.__rr.socketIn.filter((m) => m.type === 'room').pop().room")


def test_the_hosts_focus_stays_in_the_lobby_when_start_stops_being_possible(race_server, browser, second_browser):
    """A racer stops being ready while the host's focus is on Start: Start is disabled, and
    focus goes to Ready beside it, not to the page's start (a disabled button drops it)."""
    host, guest = browser, second_browser
    open_room_by_keyboard(host, race_server.base_url)
    guest.get(host.find_element("id", "room-link").get_attribute("value"))
    wait_for(guest, f"{PHASE} === 'lobby'")
    guest.find_element("id", "ready").click()
    wait_for(host, "!document.getElementById('start-race').disabled")
    tab_to(host, "e.id === 'start-race'")
    guest.find_element("id", "ready").click()  # not ready any more
    wait_for(host, "document.getElementById('start-race').disabled")
    assert host.execute_script("return document.activeElement.id") == "ready"
    assert host.find_element("id", "start-reason").text.startswith(EN["race"]["waitingReady"].split("{")[0])


def test_a_wrong_code_is_refused_beside_the_code_field_by_hand_and_by_link(race_server, browser):
    open_page(browser, race_server.base_url, "/race.html")
    wait_for(browser, "window.__rr.socketIn.some((m) => m.type === 'welcome')")
    field = browser.find_element("id", "join-code")
    field.send_keys("zz-zz zz")
    press(browser, Keys.ENTER)
    wait_for(browser, "window.__rr.socketIn.some((m) => m.type === 'error' && m.inReplyTo === 'joinRoom')")
    error = received(browser, "error")[-1]
    assert error["code"] == "room_not_found"
    message = browser.find_element("id", "join-message")
    assert message.text.endswith(EN["race"]["errors"]["room_not_found"].format(code="zz-zz zz"))
    assert field.get_attribute("aria-invalid") == "true"
    assert browser.execute_script(f"return {PHASE}") == "entry"
    violations = run_axe(browser)
    assert violations == [], describe_violations(violations)

    # By link: joined at once after load; refused, the field holds the code and has focus.
    open_page(browser, race_server.base_url, "/race.html?room=NOPE42")
    wait_for(browser, "document.getElementById('join-message').textContent !== ''")
    assert browser.find_element("id", "join-message").text.endswith(EN["race"]["errors"]["room_not_found"].format(code="NOPE42"))
    assert browser.execute_script("return document.activeElement.id") == "join-code"
    assert browser.find_element("id", "join-code").get_attribute("value") == "NOPE42"
    sent = browser.execute_script("return window.__rr.socketOut.filter((m) => m.type === 'joinRoom')")
    assert sent == [{"type": "joinRoom", "code": "NOPE42"}]

    # In Spanish, the same refusal in Spanish.
    patch_settings(race_server, browser, {"language": "es"})
    open_page(browser, race_server.base_url, "/race.html?room=NOPE42")
    wait_for(browser, "document.getElementById('join-message').textContent !== ''")
    assert browser.find_element("id", "join-message").text.endswith(ES["race"]["errors"]["room_not_found"].format(code="NOPE42"))
    assert browser_errors(browser) == []


def test_two_keyboard_players_race_to_the_end_and_see_the_results_in_order(race_server, browser, second_browser):
    host, guest = browser, second_browser
    room = open_room_by_keyboard(host, race_server.base_url)
    assert room["state"] == "lobby" and room["you"] == room["hostSeat"] and room["practice"] is False
    link = host.find_element("id", "room-link").get_attribute("value")
    assert link == f"{race_server.base_url}/race.html?room={room['code']}"
    assert host.find_element("id", "lobby-heading").text == EN["race"]["lobbyHeading"].format(code=room["code"])
    # Alone: Start is disabled, and the reason is beside it (and its description).
    assert not host.find_element("id", "start-race").is_enabled()
    assert host.find_element("id", "start-reason").text == EN["race"]["needTwo"]

    # The second browser joins by the link, at once after load.
    guest.get(link)
    wait_for(guest, f"{PHASE} === 'lobby'")
    assert guest.execute_script("return document.activeElement.id") == "lobby-heading"
    assert guest.execute_script("return window.__rr.socketOut.filter((m) => m.type === 'joinRoom').map((m) => m.code)") == [room["code"]]
    assert guest.find_element("id", "start-race").get_attribute("hidden") is not None  # not the host
    wait_for(host, "document.querySelectorAll('#racers li').length === 2")
    wait_for(host, "window.__rr.announcements.some((a) => a.endsWith(' joined.'))")
    assert host.find_element("id", "start-reason").text.startswith(EN["race"]["waitingReady"].split("{")[0])

    # Both ready, by keyboard.
    for driver in (guest, host):
        tab_to(driver, "e.id === 'ready'")
        press(driver, Keys.ENTER)
        wait_for(driver, "document.getElementById('ready').getAttribute('aria-pressed') === 'true'")
    wait_for(host, "!document.getElementById('start-race').disabled")
    assert host.find_element("id", "start-reason").text == EN["race"]["allReady"]
    tab_to(host, "e.id === 'start-race'", limit=4)
    press(host, Keys.ENTER)

    # The countdown: announced, focus on the road, a tone each second, no move sent before it ends.
    for driver in (host, guest):
        wait_for(driver, f"{PHASE} === 'countdown'", timeout=10)
        assert driver.execute_script("return document.activeElement.dataset.part") == "play-area"
    countdown = received(host, "countdown")[-1]
    seconds = -(-countdown["startsInMs"] // 1000)
    wait_for(host, "window.__rr.announcements.some((a) => a.startsWith(arguments[0]))".replace(
        "arguments[0]", json.dumps(EN["race"]["sayCountdown"].split("{")[0])))
    press(host, Keys.ARROW_LEFT)  # too early: the page keeps it
    for driver in (host, guest):
        wait_for(driver, f"{PHASE} === 'racing' && {ROAD_PHASE} === 'running'", timeout=15)
    tones = [note["frequency"] for note in host.execute_script("return window.__rr.notes()")]
    assert tones.count(660) == seconds and tones.count(990) == 1, tones
    assert host.execute_script("return window.__rr.socketOut.filter((m) => m.type === 'move').length") == 0
    started = received(host, "started")[-1]
    assert started["game"]["race"] == room["code"]

    # Both race with the keyboard: the host steers for 15 steps, the guest for 5, then neither.
    seen = {"host": -1, "guest": -1}
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        frames = {"host": host.execute_script(f"return (() => {{{FRAME}}})()"), "guest": guest.execute_script(f"return (() => {{{FRAME}}})()")}
        if all(frame["page"] == "results" for frame in frames.values()):
            break
        for name, driver, steps in (("host", host, 15), ("guest", guest, 5)):
            frame = frames[name]
            if frame["road"] == "running" and frame["step"] <= steps:
                seen[name] = steer_once(driver, frame, seen[name])
        time.sleep(0.1)
    for driver in (host, guest):
        wait_for(driver, f"{PHASE} === 'results'", timeout=30)
        assert driver.execute_script("return document.activeElement.id") == "results-heading"
    screenshot(host, "race-results")

    # The results in the server's finish order, on both pages.
    over = received(host, "raceOver")[-1]
    assert [entry["place"] for entry in over["results"]] == [1, 2]
    scores = [entry["score"] for entry in over["results"]]
    assert scores == sorted(scores, reverse=True)
    for driver in (host, guest):
        rows = driver.execute_script("""
            return [...document.querySelectorAll('#results-rows tr')].map((row) => [...row.children].map((cell) => cell.textContent));
        """)
        assert [int(row[0]) for row in rows] == [1, 2]
        assert [int(row[2].replace(",", "")) for row in rows] == scores
        assert [row[1].replace(" (you)", "") for row in rows] == [entry["name"] for entry in over["results"]]
        mine = [row for row in rows if row[1].endswith(" (you)")]
        assert len(mine) == 1
    # Standings were shown during the race, and every move came from an arrow key on a seen step.
    assert received(host, "standings"), "no standings reached the page"
    moves = host.execute_script("return window.__rr.socketOut.filter((m) => m.type === 'move')")
    assert all(m["direction"] in ("left", "right") and isinstance(m["step"], int) for m in moves)
    winner = over["results"][0]
    words = (EN["race"]["sayYouWon"].format(score=winner["score"]) if winner["seat"] == room["you"]
             else EN["race"]["sayWinner"].format(name=winner["name"], score=winner["score"]))
    wait_for(host, f"window.__rr.announcements.some((a) => a.startsWith({json.dumps(words)}))")

    # Rematch: ready again from the results, by keyboard; the room stays, back in the lobby.
    tab_to(guest, "e.id === 'rematch'", limit=10)
    press(guest, Keys.ENTER)
    wait_for(guest, f"{PHASE} === 'lobby' && document.getElementById('ready').getAttribute('aria-pressed') === 'true'")
    tab_to(host, "e.id === 'to-lobby'", limit=10)
    press(host, Keys.ENTER)
    wait_for(host, f"{PHASE} === 'lobby'")
    assert host.execute_script("return window.__rr.socketIn.filter((m) => m.type === 'room').pop().room.race") >= 1
    for driver in (host, guest):
        assert browser_errors(driver) == []


def test_axe_finds_nothing_on_any_part_of_a_race_in_every_mode(server_factory, browser, second_browser):
    """Lobby, countdown, the race (paused, as the play page's test does, so the road waits while
    axe looks), the player's own end while the other races, and the results."""
    running = rooms_server(server_factory, "--race-countdown-seconds", "60")
    host, guest = browser, second_browser
    room = open_room_by_keyboard(host, running.base_url)
    guest.get(host.find_element("id", "room-link").get_attribute("value"))
    wait_for(guest, f"{PHASE} === 'lobby'")
    failures = {f"lobby-{k}": v for k, v in axe_in_every_mode(host, "race-lobby").items()}
    for driver in (guest, host):
        driver.find_element("id", "ready").click()
        wait_for(driver, "document.getElementById('ready').getAttribute('aria-pressed') === 'true'")
    wait_for(host, "!document.getElementById('start-race').disabled")
    host.find_element("id", "start-race").click()
    wait_for(host, f"{PHASE} === 'countdown'")
    failures.update({f"countdown-{k}": v for k, v in axe_in_every_mode(host, "race-countdown").items()})
    for driver in (host, guest):
        wait_for(driver, f"{PHASE} === 'racing' && {ROAD_PHASE} === 'running'", timeout=90)
    wait_for(host, "document.querySelectorAll('#standings li').length === 2")
    host.find_element("css selector", "[data-part='pause']").click()
    wait_for(host, f"{ROAD_PHASE} === 'paused'")
    failures.update({f"racing-{k}": v for k, v in axe_in_every_mode(host, "race-racing").items()})
    host.find_element("css selector", "[data-part='quit']").click()
    wait_for(host, f"{ROAD_PHASE} === 'over' && !document.getElementById('race-over-note').hidden")
    assert host.execute_script("return document.activeElement.id") == "standings-heading"
    failures.update({f"own-end-{k}": v for k, v in axe_in_every_mode(host, "race-own-end").items()})
    wait_for(host, f"{PHASE} === 'results'", timeout=120)
    failures.update({f"results-{k}": v for k, v in axe_in_every_mode(host, "race-results").items()})
    assert not failures, describe_violations(failures)
    assert room["code"]
    for driver in (host, guest):
        assert browser_errors(driver) == []


def is_highlighted(driver, element_id):
    return driver.execute_script(
        "const e = document.getElementById(arguments[0]); return e.classList.contains('switch-highlight') && document.activeElement === e",
        element_id)


def press_switch_on(driver, element_id, timeout=20):
    """Waits for the one switch's scan to highlight `element_id`, then presses the switch (Space)."""
    wait_for(driver, f"document.getElementById({json.dumps(element_id)}).classList.contains('switch-highlight')", timeout=timeout)
    assert is_highlighted(driver, element_id)
    press(driver, Keys.SPACE)


def test_one_switch_alone_opens_a_room_readies_starts_and_plays_again(server_factory, browser, second_browser):
    """Space and nothing else: the menu scan (Web/js/input/menu-scan.js) steps through each part's
    buttons, says them, and the switch presses the highlighted one."""
    running = rooms_server(server_factory, "--race-countdown-seconds", "2")
    host, guest = browser, second_browser
    for driver in (host, guest):
        open_page(driver, running.base_url, "/race.html")
        patch_settings(running, driver, {"speedLevel": "cruise", "controls": {"oneSwitch": True, "switchMode": "dodge", "scanIntervalMs": 1000}})
    open_page(host, running.base_url, "/race.html")
    wait_for(host, "window.__rr.socketIn.some((m) => m.type === 'welcome')")
    press(host, Keys.SPACE)  # the switch on the page as it loads: the scan begins
    wait_for(host, "window.__rr.announcements.some((a) => a.startsWith('Your switch steps through'))")
    press_switch_on(host, "open-room")
    wait_for(host, f"{PHASE} === 'lobby'")
    sent = host.execute_script("return window.__rr.socketOut.filter((m) => m.type === 'openRoom')")
    assert sent == [{"type": "openRoom", "level": "cruise", "seats": 4, "practice": False}]
    link = host.find_element("id", "room-link").get_attribute("value")

    guest.get(link)
    wait_for(guest, f"{PHASE} === 'lobby'")
    press_switch_on(guest, "ready")  # the lobby's first choice
    wait_for(guest, "document.getElementById('ready').getAttribute('aria-pressed') === 'true'")
    wait_for(host, "!document.getElementById('start-race').disabled")
    press_switch_on(host, "start-race")
    for driver in (host, guest):
        wait_for(driver, f"{PHASE} === 'racing'", timeout=15)
    # Nobody presses: each road ends by itself, and the results' scan starts on Rematch.
    for driver in (host, guest):
        wait_for(driver, f"{PHASE} === 'results'", timeout=180)
    press_switch_on(guest, "rematch")
    wait_for(guest, f"{PHASE} === 'lobby' && document.getElementById('ready').getAttribute('aria-pressed') === 'true'")
    for driver in (host, guest):
        assert browser_errors(driver) == []


def test_a_quick_race_says_how_many_wait_and_when_it_starts(server_factory, browser, second_browser):
    running = rooms_server(server_factory, "--race-countdown-seconds", "2", "--quick-race-wait-seconds", "3")
    first, second = browser, second_browser
    for driver in (first, second):
        open_page(driver, running.base_url, "/race.html")
        wait_for(driver, "window.__rr.socketIn.some((m) => m.type === 'welcome')")
    first.find_element("id", "quick-race").click()
    wait_for(first, f"{PHASE} === 'queue'")
    assert first.execute_script("return document.activeElement.id") == "queue-heading"
    level = EN["levels"]["cruise"]
    waiting_one = EN["race"]["queueWaiting"].format(level=level, count=1) + " " + EN["race"]["queueNeedsMore"]
    assert first.find_element("id", "queue-status").text == waiting_one
    wait_for(first, f"window.__rr.announcements.includes({json.dumps(waiting_one)})")

    second.find_element("id", "quick-race").click()
    waiting_two = EN["race"]["queueWaiting"].format(level=level, count=2)
    wait_for(first, f"document.getElementById('queue-status').textContent.startsWith({json.dumps(waiting_two + ' ' + EN['race']['queueStartsIn'].split('{')[0])})")
    violations = run_axe(first)
    assert violations == [], describe_violations(violations)
    for driver in (first, second):
        wait_for(driver, f"{PHASE} === 'countdown' || {PHASE} === 'racing'", timeout=20)
        wait_for(driver, f"{PHASE} === 'racing'", timeout=20)
    room = first.execute_script("return window.__rr.socketIn.filter((m) => m.type === 'room').pop().room")
    assert room["quick"] is True and room["practice"] is False
    assert first.find_element("id", "room-kind").get_attribute("textContent") == EN["race"]["kindQuick"]
    for driver in (first, second):
        driver.find_element("css selector", "[data-part='quit']").click()
    for driver in (first, second):
        wait_for(driver, f"{PHASE} === 'results'", timeout=30)
        assert browser_errors(driver) == []


def test_a_reload_keeps_the_seat_in_the_lobby_and_gives_the_race_back(server_factory, browser, second_browser):
    """The address keeps the room (`?room=CODE`), so a reload joins again and takes the seat
    back; during a race the page offers the waiting road first, and takes it back on the road."""
    running = rooms_server(server_factory, "--race-countdown-seconds", "2")
    host, guest = browser, second_browser
    room = open_room_by_keyboard(host, running.base_url)
    assert host.current_url.endswith(f"/race.html?room={room['code']}")
    host.refresh()
    wait_for(host, f"{PHASE} === 'lobby'")
    again = received(host, "room")[-1]["room"]
    assert again["code"] == room["code"] and again["you"] == room["you"] and len(again["racers"]) == 1
    assert host.find_element("id", "join-message").text == ""

    guest.get(host.find_element("id", "room-link").get_attribute("value"))
    wait_for(guest, f"{PHASE} === 'lobby'")
    guest.find_element("id", "ready").click()
    wait_for(host, "!document.getElementById('start-race').disabled")
    host.find_element("id", "start-race").click()
    wait_for(host, f"{PHASE} === 'racing' && {ROAD_PHASE} === 'running'", timeout=15)
    host.refresh()
    wait_for(host, "!document.getElementById('resume-box').hidden")
    assert host.execute_script("return document.activeElement.id") == "resume-race"
    assert host.find_element("id", "resume-text").text.startswith(EN["race"]["waitingRace"].format(code=room["code"], score=0).split(" at ")[0])
    press(host, Keys.ENTER)
    wait_for(host, f"{PHASE} === 'racing' && {ROAD_PHASE} === 'running'")
    assert host.execute_script("return document.activeElement.dataset.part") == "play-area"
    wait_for(host, "document.querySelectorAll('#standings li').length === 2")
    for driver in (host, guest):
        driver.find_element("css selector", "[data-part='quit']").click()
    for driver in (host, guest):
        wait_for(driver, f"{PHASE} === 'results'", timeout=30)
        assert browser_errors(driver) == []


def test_tab_reaches_every_control_of_the_entry_and_the_lobby_with_a_visible_focus_ring(server_factory, browser):
    from test_client_keyboard import FOCUS, REACHABLE
    running = rooms_server(server_factory)
    open_page(browser, running.base_url, "/race.html")
    wait_for(browser, "window.__rr.socketIn.some((m) => m.type === 'welcome')")

    def walk(name):
        expected = set(browser.execute_script(REACHABLE))
        # From the top of the page (the skip link), wherever the phase had put focus.
        browser.execute_script("document.querySelector('.skip-link').focus(); window.scrollTo(0, 0);")
        reached, order = set(), []
        for index in range(len(expected) * 3 + 10):
            if index:
                press(browser, Keys.TAB)
            focus = browser.execute_script(FOCUS)
            if focus["tag"] == "BODY" or (order and focus["key"] == order[0]):
                break
            order.append(focus["key"])
            reached.add(focus["key"])
            if index == 0:
                continue  # focused by script, not by a key: no focus-visible ring asked for
            assert focus["outline"] != "none" and focus["width"] >= 2, f"{name}: no visible focus on {focus}"
            assert focus["ratio"] >= 3, f"{name}: focus ring contrast {focus['ratio']:.2f}:1 on {focus}"
        assert expected <= reached, f"{name}: never reached by Tab: {sorted(expected - reached)} (order {order})"
        assert "skip" in order[0]
        return order

    entry = walk("entry")
    assert entry.index("radio:open-level") < entry.index("open-seats") < entry.index("open-practice") < entry.index("open-room") \
        < entry.index("join-code") < entry.index("join-room") < entry.index("radio:quick-level") < entry.index("quick-race")
    browser.find_element("id", "open-room").click()
    wait_for(browser, f"{PHASE} === 'lobby'")
    lobby = walk("lobby")
    assert lobby.index("room-link") < lobby.index("copy-link") < lobby.index("ready") < lobby.index("leave-room")
