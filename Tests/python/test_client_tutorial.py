"""The tutorial's lessons in a real browser against the real server: Back and Next (and the list
of lessons) by keyboard alone, focus on each lesson's heading and the step said politely; the
controls lesson lists exactly the ways to move this player has switched on, following their
settings (a reload, and live from another device); each safe-lane cue mode's example, pressed
with the keyboard, schedules that mode's notes (observed through the Web Audio calls the page
makes); the practice road stops when its lesson is left; "done" stops the play page offering
the tutorial, which stays replayable."""

import json

from selenium.webdriver.common.action_chains import ActionChains

from conftest import REPO
from test_client_support import (Keys, browser, device_token, open_page, press, screenshot,  # noqa: F401
                                 show_lesson, wait_for, browser_errors)
from ws_client import link_second_device

EN = json.loads((REPO / "Web/i18n/en.json").read_text())
C4, E4, G4 = 261.63, 329.63, 392.0

# The lessons in order, by the id of their section (the page's own structure, read from its HTML).
LESSONS = ["lesson-game", "lesson-controls", "lesson-cues", "lesson-lane-change", "lesson-effects",
           "lesson-practice", "lesson-done"]

# What the page shows of the current lesson, read from the DOM only.
LESSON_STATE = """
  const shown = [...document.querySelectorAll("section.lesson")].filter((s) => !s.hidden);
  const focus = document.activeElement;
  return {
    shown: shown.map((s) => s.id),
    focusTag: focus.tagName,
    focusLesson: focus.closest("section.lesson")?.id ?? null,
    focusText: focus.textContent,
    heading: shown[0]?.querySelector("h2").textContent,
    progress: document.getElementById("lesson-progress").textContent,
    current: [...document.querySelectorAll("#lesson-list [aria-current='step']")].map((b) => b.dataset.goto),
    backHidden: document.getElementById("lesson-back").hidden,
    nextHidden: document.getElementById("lesson-next").hidden,
    nextText: document.getElementById("lesson-next").textContent,
    hash: location.hash,
  };
"""


def tab_to(driver, predicate_js, limit=60):
    """Presses Tab until the focused element `e` satisfies `predicate_js`."""
    for _ in range(limit):
        press(driver, Keys.TAB)
        if driver.execute_script(f"const e = document.activeElement; return {predicate_js};"):
            return
    raise AssertionError(f"Tab never reached {predicate_js}")


def reload(driver):
    """A real reload (a get() of the same address with a #fragment would only scroll)."""
    driver.refresh()
    wait_for(driver, "document.documentElement.dataset.ready === 'true'")


def step_text(step):
    return EN["tutorial"]["progress"].format(step=step, total=len(LESSONS))


def test_the_lessons_go_forward_and_back_by_keyboard_with_focus_on_each_heading(server, browser):
    open_page(browser, server.base_url, "/tutorial.html")
    state = browser.execute_script(LESSON_STATE)
    assert state["shown"] == ["lesson-game"] and state["progress"] == step_text(1)
    assert state["current"] == ["lesson-game"] and state["backHidden"] and not state["nextHidden"]
    assert browser.execute_script("return window.__rr.announcements") == [], "nothing is said at load"
    browser.execute_script("document.activeElement.blur()")

    headings = []
    for number, lesson in enumerate(LESSONS[1:], start=2):
        tab_to(browser, "e.id === 'lesson-next'")
        title = browser.execute_script(f"return document.querySelector('#{lesson} h2').textContent")
        assert browser.execute_script("return document.activeElement.textContent") == EN["tutorial"]["next"].format(title=title)
        press(browser, Keys.ENTER)
        wait_for(browser, f"document.activeElement.closest('section.lesson')?.id === '{lesson}'")
        state = browser.execute_script(LESSON_STATE)
        assert state["shown"] == [lesson], state
        assert state["focusTag"] == "H2" and state["focusText"] == state["heading"] == title, state
        assert state["progress"] == step_text(number) and state["current"] == [lesson] and state["hash"] == f"#{lesson}"
        assert not state["backHidden"]
        wait_for(browser, f"window.__rr.announcements.includes({json.dumps(step_text(number))})", timeout=5,
                 message=f"'{step_text(number)}' was not said in the polite live region")
        headings.append(title)
        screenshot(browser, f"tutorial-{lesson}")
    assert len(set(headings)) == len(LESSONS) - 1
    assert browser.execute_script(LESSON_STATE)["nextHidden"], "the last lesson has no Next"

    # Back goes one lesson back, focus on its heading again.
    tab_to(browser, "e.id === 'lesson-back'")
    press(browser, Keys.ENTER)
    wait_for(browser, "document.activeElement.closest('section.lesson')?.id === 'lesson-practice'")
    state = browser.execute_script(LESSON_STATE)
    assert state["focusTag"] == "H2" and state["progress"] == step_text(6) and state["shown"] == ["lesson-practice"]

    # Any lesson straight from the list (Shift+Tab back up to it): replaying one is one press.
    for _ in range(60):
        ActionChains(browser).key_down(Keys.SHIFT).send_keys(Keys.TAB).key_up(Keys.SHIFT).perform()
        if browser.execute_script("return document.activeElement.dataset.goto === 'lesson-cues'"):
            break
    else:
        raise AssertionError("Shift+Tab never reached the list of lessons")
    press(browser, Keys.ENTER)
    wait_for(browser, "document.activeElement.closest('section.lesson')?.id === 'lesson-cues'")
    assert browser.execute_script(LESSON_STATE)["progress"] == step_text(3)

    # A link within the page to a lesson opens it like the list does.
    browser.execute_script("location.hash = '#lesson-effects'")
    wait_for(browser, "document.activeElement.closest('section.lesson')?.id === 'lesson-effects'")
    # A reload (or a link from elsewhere) opens the lesson the address names, leaving focus alone.
    reload(browser)
    state = browser.execute_script(LESSON_STATE)
    assert state["shown"] == ["lesson-effects"] and state["progress"] == step_text(5) and state["focusLesson"] is None
    assert browser_errors(browser) == []


def listed_inputs(driver):
    return driver.execute_script(
        "return [...document.querySelectorAll('#tutorial-inputs li')].map((li) => [li.dataset.input, li.textContent])")


def patch_settings(server, token, patch):
    version = server.request("GET", "/api/v1/settings", token=token).json()["version"]
    reply = server.request("PATCH", "/api/v1/settings", patch, token=token, headers={"If-Match": f'"{version}"'})
    assert reply.status == 200, reply.body


def test_the_controls_lesson_lists_exactly_the_ways_to_move_that_are_switched_on(server, browser):
    help_ = EN["help"]
    move_keys = help_["moveKeys"].format(left=EN["keys"]["ArrowLeft"], right=EN["keys"]["ArrowRight"])
    everything = [["keyboard", move_keys], ["letterKeys", help_["letterKeys"]], ["touch", help_["tap"]],
                  ["swipe", help_["swipe"]], ["wheel", help_["wheel"]], ["gamepad", help_["gamepad"]]]

    open_page(browser, server.base_url, "/tutorial.html#lesson-controls")
    assert listed_inputs(browser) == everything, "a new player has every way to move but one-switch"
    assert browser.find_element("id", "tutorial-no-inputs").is_displayed() is False
    link = browser.find_element("css selector", "#lesson-controls a[href='/settings.html#controls-heading']")
    assert link.text == EN["tutorial"]["changeControls"]

    # The wheel turned off (on the server): after a reload it is no longer offered.
    token = device_token(browser)
    patch_settings(server, token, {"controls": {"wheel": False}})
    reload(browser)
    assert listed_inputs(browser) == [entry for entry in everything if entry[0] != "wheel"]
    assert help_["wheel"] not in browser.find_element("id", "lesson-controls").text

    # Changed on another of the player's devices: the lesson follows live. Other keys, no
    # gamepad, one-switch scanning (a tap on the road is then the switch, not a move).
    patch_settings(server, link_second_device(server, token), {"controls": {
        "gamepad": False, "oneSwitch": True, "switchMode": "scan", "scanIntervalMs": 2000,
        "keyBindings": {"left": "KeyJ", "right": "KeyL"}}})
    one_switch = help_["oneSwitch"].format(seconds="2")
    wait_for(browser, f"document.querySelector('#tutorial-inputs [data-input=oneSwitch]')?.textContent === {json.dumps(one_switch)}",
             timeout=10)
    assert listed_inputs(browser) == [["keyboard", help_["moveKeys"].format(left="J", right="L")],
                                      ["letterKeys", help_["letterKeys"]], ["oneSwitch", one_switch]]
    screenshot(browser, "tutorial-controls-one-switch")

    # Nothing left to move with: the lesson says so instead of an empty list.
    patch_settings(server, token, {"controls": {"keyboard": False, "touch": False, "swipe": False, "oneSwitch": False}})
    reload(browser)
    assert listed_inputs(browser) == []
    assert browser.find_element("id", "tutorial-no-inputs").text == EN["tutorial"]["noInputs"]


def test_each_cue_modes_example_pressed_by_keyboard_schedules_that_modes_notes(server, browser):
    open_page(browser, server.base_url, "/tutorial.html")
    assert browser.execute_script("return window.__rr.contexts") == 0, "no audio before a gesture"
    browser.execute_script("document.activeElement.blur()")
    tab_to(browser, "e.dataset.goto === 'lesson-cues'")
    press(browser, Keys.ENTER)
    wait_for(browser, "document.activeElement.id === 't-cues'")

    heard = {}
    for mode in ("lanePulse", "arpeggio", "chord"):
        tab_to(browser, f"e.dataset.demo === 'cue' && e.dataset.mode === '{mode}'", limit=10)
        before = len(browser.execute_script("return window.__rr.notes()"))
        press(browser, Keys.ENTER)
        wait_for(browser, f"window.__rr.notes().length >= {before + 2}")
        heard[mode] = browser.execute_script("return window.__rr.notes()")[before:]
        # Seen as well as heard: the box says what plays, and its caption shows what just played.
        box = browser.find_element("css selector", f".demo:has([data-mode='{mode}'])")
        assert EN["tutorial"][f"hear{mode[0].upper()}{mode[1:]}"] in box.text
        caption = box.find_element("css selector", "[data-caption]").text
        assert caption.startswith(f"♪ {EN['cueModes'][mode]}") and "C · G" in caption, caption

    # Middle lane blocked: C4 panned left and G4 panned right in every mode, nothing else.
    for mode, notes in heard.items():
        assert sorted((n["frequency"], n["pan"]) for n in notes) == [(C4, -1), (G4, 1)], (mode, notes)
    pulse, arpeggio, chord = heard["lanePulse"], heard["arpeggio"], heard["chord"]
    # Lane pulse: left, middle, right slots, so G comes two slots after C (a silent slot between).
    pulse_gap = pulse[1]["start"] - pulse[0]["start"]
    # Arpeggio: the safe notes back to back, one slot apart.
    arpeggio_gap = arpeggio[1]["start"] - arpeggio[0]["start"]
    assert pulse[0]["frequency"] == C4 and arpeggio[0]["frequency"] == C4, "left first"
    assert arpeggio_gap > 0.03 and abs(pulse_gap - 2 * arpeggio_gap) < 0.005, (pulse_gap, arpeggio_gap)
    # Chord: together.
    assert abs(chord[0]["start"] - chord[1]["start"]) < 1e-6
    assert browser.execute_script("return window.__rr.contexts") == 1

    # The player's own mode is marked in words (a new player's is lane pulse).
    marked = browser.execute_script(
        "return [...document.querySelectorAll('#lesson-cues .demo')].filter((d) => !d.querySelector('.your-setting').hidden).map((d) => d.dataset.value)")
    assert marked == ["lanePulse"]
    screenshot(browser, "tutorial-cues-played")


def test_leaving_the_practice_lesson_stops_the_practice_road(server, browser):
    open_page(browser, server.base_url, "/tutorial.html#lesson-practice")
    wait_for(browser, "window.__rr.socketIn.some((m) => m.type === 'welcome')")
    browser.find_element("id", "practice-start").send_keys(Keys.ENTER)
    wait_for(browser, "document.querySelector(\"[data-part='play-area']\").dataset.phase === 'running'")
    assert browser.execute_script("return window.__rr.socketOut.filter((m) => m.type === 'start').pop()") == \
        {"type": "start", "level": "cruise", "practice": True}
    show_lesson(browser, "lesson-done")
    wait_for(browser, "window.__rr.socketIn.some((m) => m.type === 'gameOver' && m.practice && m.reason === 'abandoned')")
    assert browser.execute_script("return window.__rr.socketOut.some((m) => m.type === 'quit')")
    quota = server.request("GET", "/api/v1/quota", token=device_token(browser)).json()
    assert quota["playsLeft"] == quota["dailyFreePlays"], "practice uses no play"


def test_done_stops_the_first_visit_offer_and_the_tutorial_stays_replayable(server, browser):
    open_page(browser, server.base_url, "/")
    offer = browser.find_element("id", "first-visit")
    assert offer.is_displayed()
    offer.find_element("css selector", "a[href='/tutorial.html']").click()
    wait_for(browser, "location.pathname === '/tutorial.html' && document.documentElement.dataset.ready === 'true'")
    assert browser.find_element("id", "tutorial-done-before").get_attribute("hidden") is not None
    show_lesson(browser, "lesson-done")
    browser.find_element("id", "tutorial-done").send_keys(Keys.ENTER)
    wait_for(browser, f"document.getElementById('tutorial-done-message').textContent === {json.dumps(EN['tutorial']['doneSaved'])}")
    stored = server.request("GET", "/api/v1/settings", token=device_token(browser)).json()
    assert stored["settings"]["tutorialDone"] is True

    open_page(browser, server.base_url, "/")
    assert not browser.find_element("id", "first-visit").is_displayed()
    # Still one link away, from every page's navigation, and it says it was done before.
    browser.find_element("css selector", "#nav-list a[href='/tutorial.html']").click()
    wait_for(browser, "location.pathname === '/tutorial.html' && document.documentElement.dataset.ready === 'true'")
    show_lesson(browser, "lesson-done")
    assert browser.find_element("id", "tutorial-done-before").text == EN["tutorial"]["doneBefore"]
