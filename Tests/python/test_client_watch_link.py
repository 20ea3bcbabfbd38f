"""The links to watch, in real headless Chromium against the real server: on the play page a
keyboard player's running game offers "Share a link to watch", which copies the game's absolute
watch address to the clipboard, says so and shows it, without taking focus from the road; a
second browser opening that address watches that very game, its score moving as the player
scores; the player hears, seldom, that someone watches and that nobody does any more; the one
switch's pause menu reaches the button. The race lobby offers a second link, for watchers, with
its own Copy; opened before the start it waits for the race and then watches it. axe finds
nothing in each new state in every display mode."""

import json
import time

from conftest import REPO
from test_client_game import NEXT_FRAME
from test_client_pages import axe_in_every_mode
from test_client_race import PHASE, open_room_by_keyboard, patch_settings, race_server, second_browser  # noqa: F401
from test_client_support import (Keys, browser, browser_errors, describe_violations, new_browser,  # noqa: F401
                                 open_page, press, wait_for)

EN = json.loads((REPO / "Web/i18n/en.json").read_text())
ES = json.loads((REPO / "Web/i18n/es.json").read_text())
ROAD = "document.querySelector(\"[data-part='play-area']\")"
ROAD_PHASE = f"{ROAD}.dataset.phase"
SHARE = "document.querySelector(\"[data-part='share-watch']\")"
NEW_PLAY_KEYS = ["shareWatch", "shareWatchHint", "watchLinkCopied", "watchLinkNotCopied", "sayWatchLinkCopied",
                 "sayWatchLinkNotCopied", "sayWatched", "sayUnwatched"]
NEW_RACE_KEYS = ["watchLinkLabel", "watchLinkHint", "copyWatchLink", "watchLinkCopied"]


def allow_clipboard(driver, base_url):
    """What a person's click gets in a real browser: the page may write the clipboard (and the
    test may read it back)."""
    driver.execute_cdp_cmd("Browser.grantPermissions", {
        "origin": base_url, "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]})


def clipboard(driver):
    return driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        navigator.clipboard.readText().then(done, (e) => done("error: " + e));
    """)


def tab_to(driver, predicate_js, limit=40):
    for _ in range(limit):
        press(driver, Keys.TAB)
        if driver.execute_script(f"const e = document.activeElement; return Boolean({predicate_js});"):
            return
    raise AssertionError(f"Tab never reached {predicate_js}")


def steer(driver, until_js, seconds):
    """Plays by the marks on screen (arrow keys, wherever focus is) until `until_js` holds or
    `seconds` pass; fails if the game ends first."""
    deadline = time.monotonic() + seconds
    frame = {"step": -1}
    while time.monotonic() < deadline:
        if driver.execute_script(f"return Boolean({until_js})"):
            return
        frame = driver.execute_async_script(NEXT_FRAME, frame["step"])
        assert frame["phase"] == "running", f"the game ended while the test steered: {frame}"
        if frame["safe"] and frame["lane"] is not None and frame["lane"] not in frame["safe"]:
            target = min(frame["safe"], key=lambda lane: abs(lane - frame["lane"]))
            key = Keys.ARROW_LEFT if target < frame["lane"] else Keys.ARROW_RIGHT
            press(driver, *([key] * abs(target - frame["lane"])))
    raise AssertionError(f"never: {until_js}")


def spoken(driver):
    return driver.execute_script("return window.__rr.announcements.slice()")


def watcher_news(driver):
    said = {EN["play"]["sayUnwatched"]}
    prefix = EN["play"]["sayWatched"].split("{")[0]
    return [text for text in spoken(driver) if text in said or text.startswith(prefix)]


def test_the_new_strings_are_there_in_english_and_spanish():
    for section, keys in (("play", NEW_PLAY_KEYS), ("race", NEW_RACE_KEYS), ("watch", ["waitingForRace"])):
        for key in keys:
            en, es = EN[section][key], ES[section][key]
            assert en.strip() and es.strip() and en != es, (section, key)
            assert sorted(part.split("}")[0] for part in en.split("{")[1:]) == sorted(part.split("}")[0] for part in es.split("{")[1:])


def test_a_keyboard_player_shares_a_link_that_watches_that_very_game(server, browser):
    base = server.base_url
    open_page(browser, base, "/")
    allow_clipboard(browser, base)
    wait_for(browser, "!document.getElementById('start').disabled")
    # Before a game there is nothing to watch: no button.
    assert browser.execute_script(f"return {SHARE}.hidden") is True
    browser.execute_script("document.activeElement.blur()")
    tab_to(browser, "e.id === 'start'")
    press(browser, Keys.ENTER)
    wait_for(browser, f"{ROAD_PHASE} === 'running'")
    game_id = browser.execute_script("return window.__rr.socketIn.find((m) => m.type === 'started').game.gameId")
    assert browser.execute_script(f"return document.activeElement === {ROAD}")

    # Tab from the road to the button (the game goes on), Enter: copied, said, shown.
    tab_to(browser, "e.dataset.part === 'share-watch'", limit=8)
    assert browser.execute_script(f"return {ROAD_PHASE}") == "running"
    press(browser, Keys.ENTER)
    wait_for(browser, "!document.getElementById('watch-link-note').hidden")
    url = f"{base}/watch.html?game={game_id}"
    assert browser.find_element("id", "watch-link").text == url
    assert browser.find_element("id", "watch-link-words").text == EN["play"]["watchLinkCopied"]
    assert clipboard(browser) == url
    wait_for(browser, f"window.__rr.announcements.includes({json.dumps(EN['play']['sayWatchLinkCopied'])})")
    # Focus stays where the player put it, and the arrow keys still steer from there.
    assert browser.execute_script("return document.activeElement.dataset.part") == "share-watch"
    moves = browser.execute_script("return window.__rr.socketOut.filter((m) => m.type === 'move').length")
    press(browser, Keys.ARROW_LEFT)
    wait_for(browser, f"window.__rr.socketOut.filter((m) => m.type === 'move').length > {moves}", timeout=5)
    assert browser.execute_script("return window.__rr.socketOut.filter((m) => m.type === 'watch').length") == 0

    watcher = new_browser()
    try:
        watcher.get(url)
        wait_for(watcher, "window.__rr.socketIn.some((m) => m.type === 'watching')")
        watching = watcher.execute_script("return window.__rr.socketIn.find((m) => m.type === 'watching')")
        assert watching["gameId"] == game_id
        assert watcher.execute_script("return window.__rr.socketOut.filter((m) => m.type === 'watch')") == [{"type": "watch", "gameId": game_id}]
        # The player sees the watcher, and hears once (after a moment) that someone watches.
        wait_for(browser, "!document.getElementById('watcher-count').hidden")
        assert browser.find_element("id", "watcher-count").text == EN["watch"]["watchingYou"].format(count=1)
        said = EN["play"]["sayWatched"].format(count=1)
        steer(browser, f"window.__rr.announcements.includes({json.dumps(said)})", 20)
        # The watched score moves as the player scores: the same game, live.
        seen = int(watcher.execute_script("return document.querySelector(\"#watch-game [data-part='score']\").textContent"))
        steer(browser, f"Number(document.querySelector(\"[data-part='score']\").textContent) > {seen + 1}", 30)
        mine = int(browser.execute_script("return document.querySelector(\"[data-part='score']\").textContent"))
        wait_for(watcher, f"Number(document.querySelector(\"#watch-game [data-part='score']\").textContent) >= {mine}", timeout=10)
        assert watcher.execute_script("return window.__rr.socketIn.filter((m) => m.type === 'watching').length") == 1
    finally:
        watcher.quit()

    # The watcher gone: the count hides, and "nobody watches" is said once, no sooner than the
    # spacing after the first news.
    steer(browser, "document.getElementById('watcher-count').hidden", 20)
    steer(browser, f"window.__rr.announcements.includes({json.dumps(EN['play']['sayUnwatched'])})", 25)
    assert watcher_news(browser) == [said, EN["play"]["sayUnwatched"]]

    # Paused, the link still shown: axe finds nothing in any display mode.
    press(browser, "p")
    wait_for(browser, f"{ROAD_PHASE} === 'paused'")
    failures = axe_in_every_mode(browser, "play-watch-link")
    assert not failures, describe_violations(failures)

    # The game over, the link goes with it.
    browser.find_element("css selector", "[data-part='quit']").click()
    wait_for(browser, "!document.getElementById('game-over').hidden")
    assert browser.execute_script(f"return {SHARE}.hidden && document.getElementById('watch-link-note').hidden")
    assert browser_errors(browser) == []


def test_the_one_switch_pause_menu_reaches_the_link_to_watch(server, browser):
    base = server.base_url
    open_page(browser, base, "/")
    patch_settings(server, browser, {"speedLevel": "cruise", "controls": {
        "oneSwitch": True, "switchMode": "dodge", "scanIntervalMs": 1300, "inputCooldownMs": 0}})
    open_page(browser, base, "/")
    allow_clipboard(browser, base)
    wait_for(browser, "!document.getElementById('start').disabled")
    press(browser, Keys.SPACE)  # the switch starts the game
    wait_for(browser, f"{ROAD_PHASE} === 'running'")
    press(browser, "p")
    wait_for(browser, f"{ROAD_PHASE} === 'paused'")
    words = "the highlight steps through Resume, End game, and Share a link to watch. Now: Resume."
    wait_for(browser, f"window.__rr.announcements.some((t) => t.endsWith({json.dumps(words)}))")
    wait_for(browser, f"document.querySelector('.switch-highlight') === {SHARE}", timeout=10)
    press(browser, Keys.SPACE)
    wait_for(browser, "!document.getElementById('watch-link-note').hidden")
    game_id = browser.execute_script("return window.__rr.socketIn.find((m) => m.type === 'started').game.gameId")
    assert browser.find_element("id", "watch-link").text == f"{base}/watch.html?game={game_id}"
    assert clipboard(browser) == f"{base}/watch.html?game={game_id}"
    assert browser.execute_script(f"return {ROAD_PHASE}") == "paused"  # sharing neither resumed nor ended it
    assert browser_errors(browser) == []


def test_the_race_lobby_offers_a_watch_link_that_waits_for_the_race_and_watches_it(race_server, browser, second_browser):
    host, guest = browser, second_browser
    base = race_server.base_url
    room = open_room_by_keyboard(host, base)
    code = room["code"]
    allow_clipboard(host, base)
    url = f"{base}/watch.html?room={code}"
    assert host.find_element("id", "room-watch-link").get_attribute("value") == url
    # Keyboard only: from the invite link's Copy to the watch link's own Copy.
    tab_to(host, "e.id === 'copy-link'")
    press(host, Keys.TAB)
    assert host.execute_script("return document.activeElement.id") == "room-watch-link"
    press(host, Keys.TAB)
    assert host.execute_script("return document.activeElement.id") == "copy-watch-link"
    press(host, Keys.ENTER)
    wait_for(host, f"document.getElementById('copy-watch-message').textContent === {json.dumps(EN['race']['watchLinkCopied'])}")
    assert clipboard(host) == url
    assert host.find_element("id", "copy-message").text == ""  # the invite link's line says nothing
    failures = axe_in_every_mode(host, "race-lobby-watch-link")
    assert not failures, describe_violations(failures)

    watcher = new_browser()
    try:
        # Opened in the lobby: it waits, says so, and watches once the race starts.
        watcher.get(url)
        waiting = EN["watch"]["waitingForRace"].format(room=code)
        wait_for(watcher, f"document.getElementById('watch-message').textContent === {json.dumps(waiting)}")
        failures = axe_in_every_mode(watcher, "watch-waiting-for-race")
        assert not failures, describe_violations(failures)

        guest.get(room["link"] if room["link"].startswith("http") else base + room["link"])
        wait_for(guest, f"{PHASE} === 'lobby'")
        tab_to(guest, "e.id === 'ready'")
        press(guest, Keys.ENTER)
        wait_for(host, "!document.getElementById('start-race').disabled")
        host.find_element("id", "start-race").send_keys(Keys.ENTER)
        wait_for(watcher, "window.__rr.socketIn.some((m) => m.type === 'watching')", timeout=20)
        watching = watcher.execute_script("return window.__rr.socketIn.find((m) => m.type === 'watching')")
        assert watching["room"] == code
        host_game = host.execute_script("return window.__rr.socketIn.find((m) => m.type === 'started' && m.game.race).game.gameId")
        assert watching["gameId"] == host_game  # the first racer: the host, seat 0
        sent = watcher.execute_script("return window.__rr.socketOut.filter((m) => m.type === 'watch')")
        assert sent and all(m == {"type": "watch", "room": code} for m in sent)
        wait_for(watcher, "window.__rr.socketIn.some((m) => m.type === 'standings')", timeout=10)
        assert watcher.find_element("id", "watch-heading").text == EN["watch"]["headingName"].format(name=watching["player"]["name"])
        assert [e for e in browser_errors(watcher) if "Failed to load resource" not in e] == []
    finally:
        watcher.quit()
    assert browser_errors(host) == []
