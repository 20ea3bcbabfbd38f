"""The tutorial's lessons in a real browser against the real server: Back and Next (and the list
of lessons) by keyboard alone, focus on each lesson's heading and the step said politely; the
controls lesson lists exactly the ways to move this player has switched on, following their
settings (a reload, and live from another device); each safe-lane cue mode's example, pressed
with the keyboard, schedules that mode's notes (observed through the Web Audio calls the page
makes); every cue pattern in every cue mode is played (the right notes asked of Web Audio),
drawn and described; the guided drill waits for the right move by keys, tap, gamepad, buttons
and the one switch, explains a wrong one and sums up; the advice for fast levels matches the
notes the game schedules and switches the setting on the server; the road picture and its text
alternative; practice at a level other than Cruise, using no play, and the crash notice gone
when the next run starts; the practice road stops when its lesson is left; the new lessons
pass axe in every display mode and at phone sizes; "done" stops the play page offering the
tutorial, which stays replayable."""

import json
import time

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.support.ui import Select

from conftest import REPO
from test_client_inputs import FAKE_PAD
from test_client_pages import axe_in_every_mode
from test_client_support import (Keys, browser, describe_violations, device_token, open_page, press, reset_zoom,  # noqa: F401
                                 run_axe, screenshot, show_lesson, wait_for, browser_errors)
from ws_client import link_second_device

EN = json.loads((REPO / "Web/i18n/en.json").read_text())
C4, E4, G4 = 261.63, 329.63, 392.0

# The lessons in order, by the id of their section (the page's own structure, read from its HTML).
LESSONS = ["lesson-game", "lesson-road", "lesson-controls", "lesson-cues", "lesson-drill", "lesson-fast-cues",
           "lesson-lane-change", "lesson-effects", "lesson-practice", "lesson-done"]

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
    practice = LESSONS.index("lesson-practice") + 1
    assert state["focusTag"] == "H2" and state["progress"] == step_text(practice) and state["shown"] == ["lesson-practice"]

    # Any lesson straight from the list (Shift+Tab back up to it): replaying one is one press.
    for _ in range(60):
        ActionChains(browser).key_down(Keys.SHIFT).send_keys(Keys.TAB).key_up(Keys.SHIFT).perform()
        if browser.execute_script("return document.activeElement.dataset.goto === 'lesson-cues'"):
            break
    else:
        raise AssertionError("Shift+Tab never reached the list of lessons")
    press(browser, Keys.ENTER)
    wait_for(browser, "document.activeElement.closest('section.lesson')?.id === 'lesson-cues'")
    assert browser.execute_script(LESSON_STATE)["progress"] == step_text(LESSONS.index("lesson-cues") + 1)

    # A link within the page to a lesson opens it like the list does.
    browser.execute_script("location.hash = '#lesson-effects'")
    wait_for(browser, "document.activeElement.closest('section.lesson')?.id === 'lesson-effects'")
    # A reload (or a link from elsewhere) opens the lesson the address names, leaving focus alone.
    reload(browser)
    state = browser.execute_script(LESSON_STATE)
    assert state["shown"] == ["lesson-effects"] and state["progress"] == step_text(LESSONS.index("lesson-effects") + 1) \
        and state["focusLesson"] is None
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


# ---- Every cue pattern, heard, seen and described ----

FREQUENCIES, PANS, LETTERS = [C4, E4, G4], [-1, 0, 1], ["C", "E", "G"]
PATTERNS = {"leftOnly": [0], "middleOnly": [1], "rightOnly": [2], "leftBlocked": [1, 2], "middleBlocked": [0, 2],
            "rightBlocked": [0, 1], "allSafe": [0, 1, 2]}
MODES = ["lanePulse", "arpeggio", "chord", "off"]
SIDES = ["fromLeft", "fromCentre", "fromRight"]
TUTORIAL = EN["tutorial"]

# The pattern picture as drawn: which cells hold a car, where the player's car is, the strip's marks.
PICTURE = """
  const root = arguments[0];
  const rows = [...root.querySelectorAll(".road-row")].map((row) => [...row.querySelectorAll(".cell")]);
  return {
    lit: rows.map((cells) => cells.map((c) => c.classList.contains("lit") ? 1 : 0)),
    player: rows.flatMap((cells, r) => cells.map((c, l) => c.classList.contains("player") ? [r, l] : null)).filter(Boolean),
    safe: [...root.querySelectorAll(".cue-strip li.safe")].map((li) => Number(li.dataset.lane)),
    unsafe: [...root.querySelectorAll(".cue-strip li.unsafe")].map((li) => Number(li.dataset.lane)),
    label: root.querySelector("[data-part='road']").getAttribute("aria-label"),
  };
"""


def choose(driver, name, value):
    """Picks a radio by clicking its label, as a pointer user does."""
    driver.find_element("css selector", f"label[for='{driver.find_element('css selector', f'input[name={name!r}][value={value!r}]').get_attribute('id')}']").click()


def notes_after(driver, before, count):
    if count:
        wait_for(driver, f"window.__rr.notes().length >= {before + count}", timeout=5)
    return driver.execute_script("return window.__rr.notes()")[before:]


def test_every_cue_pattern_in_every_cue_mode_is_heard_drawn_and_described(server, browser):
    open_page(browser, server.base_url, "/tutorial.html#lesson-cues")
    explorer = browser.find_element("css selector", "#lesson-cues .explorer")
    play = browser.find_element("id", "explorer-play")
    assert explorer.find_element("tag name", "h3").text == TUTORIAL["explorerHeading"]
    assert browser.execute_script("return document.querySelector(\"input[name='explore-mode']:checked\").value") == "lanePulse", \
        "it starts on the player's own mode"
    played = set()
    for pattern, safe in PATTERNS.items():
        choose(browser, "pattern", pattern)
        blocked = [lane for lane in range(3) if lane not in safe]
        # Seen at once, before any sound: the row about to reach the car holds a car in each blocked lane.
        picture = browser.execute_script(PICTURE, browser.find_element("id", "explorer-picture"))
        assert picture["lit"] == [[0, 0, 0], [1 if lane in blocked else 0 for lane in range(3)], [0, 0, 0]], (pattern, picture)
        assert picture["player"] == [[2, 1]] and picture["safe"] == safe and picture["unsafe"] == blocked, (pattern, picture)
        assert picture["label"], "the picture has the road's text alternative"
        for mode in MODES:
            choose(browser, "explore-mode", mode)
            description = browser.find_element("id", "explorer-description").text
            assert description.startswith(f"{EN['cueModes'][mode]}: "), description
            for lane in blocked:
                assert EN["lanes"][["left", "middle", "right"][lane]] in description.split("Blocked:")[1], description
            if mode != "off":
                for lane in safe:
                    assert TUTORIAL["sound"][SIDES[lane]].format(note=LETTERS[lane]) in description, (mode, pattern, description)
            if mode == "lanePulse":
                for lane in blocked:
                    assert TUTORIAL["sound"]["silence"].format(note=LETTERS[lane]) in description, description
            before = len(browser.execute_script("return window.__rr.notes()"))
            if (pattern, mode) == ("leftOnly", "lanePulse"):
                play.send_keys(Keys.ENTER)  # by keyboard once; by pointer for the rest
            else:
                play.click()
            wait_for(browser, f"document.querySelector('#lesson-cues .explorer').dataset.played === '{pattern}:{mode}'")
            notes = notes_after(browser, before, 0 if mode == "off" else len(safe))
            caption = browser.find_element("id", "explorer-caption").text
            if mode == "off":
                browser.execute_script("return new Promise((r) => setTimeout(r, 100))")
                assert browser.execute_script("return window.__rr.notes().length") == before, "off plays nothing"
                assert caption == TUTORIAL["explorerSilent"]
                continue
            # The real engine was asked for exactly the safe lanes' notes, each from its side.
            assert sorted((n["frequency"], n["pan"]) for n in notes) == [(FREQUENCIES[l], PANS[l]) for l in safe], (pattern, mode, notes)
            starts = [n["start"] for n in sorted(notes, key=lambda n: n["frequency"])]
            if mode == "chord":
                assert max(starts) - min(starts) < 1e-6, (pattern, starts)
            elif len(safe) > 1:
                gaps = [b - a for a, b in zip(starts, starts[1:])]
                assert all(g > 0.03 for g in gaps), (pattern, mode, starts)
                if mode == "lanePulse":  # a slot per lane: the gap counts the lanes between
                    slot = min(g / (safe[i + 1] - safe[i]) for i, g in enumerate(gaps))
                    for i, gap in enumerate(gaps):
                        assert abs(gap - slot * (safe[i + 1] - safe[i])) < 0.005, (pattern, starts)
                else:  # arpeggio: back to back, whatever lies between
                    assert max(gaps) - min(gaps) < 0.005, (pattern, starts)
            assert caption.startswith(f"♪ {EN['cueModes'][mode]}"), caption
            assert caption.split(":")[1].split("(")[0].split() == [LETTERS[l] if l in safe else "·" for l in range(3)], caption
            played.add((pattern, mode))
    assert len(played) == len(PATTERNS) * 3
    screenshot(browser, "tutorial-cues-every-pattern")
    assert browser_errors(browser) == []


# ---- The guided drill ----

DRILL = TUTORIAL["drill"]
DRILL_STATE = """
  const root = document.getElementById("lesson-drill");
  return {
    progress: root.querySelector("[data-drill='progress']").textContent,
    prompt: root.querySelector("[data-drill='prompt']").textContent,
    feedback: root.querySelector("[data-drill='feedback']").textContent,
    state: root.dataset.state,
    focus: document.activeElement.dataset.drill ?? document.activeElement.id,
    lane: Number(root.querySelector(".pattern-picture").dataset.lane),
  };
"""


def drill(driver):
    return driver.execute_script(DRILL_STATE)


def progress(number):
    return DRILL["progress"].format(number=number, total=8)


def wait_for_pattern(driver, number):
    wait_for(driver, f"document.querySelector(\"#lesson-drill [data-drill='progress']\").textContent === {json.dumps(progress(number))}"
                     " && document.getElementById('lesson-drill').dataset.state === 'running'"
                     " && document.querySelector(\"#lesson-drill [data-drill='feedback']\").textContent === ''", timeout=10)


def wait_for_feedback(driver, text):
    wait_for(driver, f"document.querySelector(\"#lesson-drill [data-drill='feedback']\").textContent === {json.dumps(text)}",
             timeout=5, message=f"the drill did not say {text!r}: {drill(driver)}")
    wait_for(driver, f"window.__rr.announcements.includes({json.dumps(text)})", timeout=5, message=f"{text!r} was not announced")


def lane(name):
    return EN["lanes"][name]


def test_the_drill_waits_for_the_right_move_explains_a_wrong_one_and_sums_up(server, browser):
    open_page(browser, server.base_url, "/tutorial.html#lesson-drill")
    browser.execute_script(FAKE_PAD)
    assert drill(browser)["prompt"] == DRILL["idle"]
    before = len(browser.execute_script("return window.__rr.notes()"))
    browser.find_element("css selector", "[data-drill='start']").send_keys(Keys.ENTER)
    wait_for_pattern(browser, 1)

    # 1. C only, from the middle: said in full, played (C from the left, in the player's lane pulse).
    first = drill(browser)
    assert first["focus"] == "surface", "focus moves onto the drill's road"
    expected_prompt = (f"{DRILL['heard'].format(notes='C only')} {DRILL['means'].format(meaning=TUTORIAL['sound']['oneSafe'].format(lane=lane('left')))}"
                       f" {DRILL['youAre'].format(lane=lane('middle'))} {DRILL['actionLeft']}.")
    assert first["prompt"] == expected_prompt
    assert [(n["frequency"], n["pan"]) for n in notes_after(browser, before, 1)] == [(C4, -1)]
    wait_for(browser, f"window.__rr.announcements.includes({json.dumps(expected_prompt)})", timeout=5)
    # It waits: nothing moves on by itself (no time limit was chosen).
    browser.execute_script("return new Promise((r) => setTimeout(r, 2500))")
    assert drill(browser)["progress"] == progress(1) and drill(browser)["feedback"] == ""
    # A wrong move is explained, and the same pattern waits for the right one.
    press(browser, Keys.ARROW_RIGHT)
    why = f"{DRILL['whyMove'].format(lane=lane('right'), note='G')} {DRILL['tryAgain'].format(action=DRILL['actionLeft'])}"
    wait_for_feedback(browser, why)
    assert drill(browser)["progress"] == progress(1)
    press(browser, Keys.ARROW_LEFT)
    wait_for_feedback(browser, f"{DRILL['rightMove'].format(lane=lane('left'))} {DRILL['nextComing']}")
    assert drill(browser)["lane"] == 0, "the car moved left on the drill's road"

    # 2. G only, from the middle: a tap on the right half of the road.
    wait_for_pattern(browser, 2)
    road = browser.find_element("css selector", "[data-drill='surface']")
    ActionChains(browser).move_to_element_with_offset(road, road.size["width"] // 4, 0).click().perform()
    wait_for_feedback(browser, f"{DRILL['rightMove'].format(lane=lane('right'))} {DRILL['nextComing']}")

    # 3. E only, from the left: the gamepad's d-pad right.
    wait_for_pattern(browser, 3)
    browser.execute_script("window.__pad.buttons[15] = { pressed: true, value: 1 }")
    browser.execute_script("return new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
    browser.execute_script("window.__pad.buttons[15] = { pressed: false, value: 0 }")
    wait_for_feedback(browser, f"{DRILL['rightMove'].format(lane=lane('middle'))} {DRILL['nextComing']}")

    # 4. C and G, from the middle: staying (Enter on the road) is a crash; D (a letter key) is right.
    wait_for_pattern(browser, 4)
    assert drill(browser)["prompt"].startswith(DRILL["heard"].format(notes="C and G"))
    press(browser, Keys.RETURN)  # "Enter" (Selenium's ENTER is the keypad's)
    wait_for_feedback(browser, f"{DRILL['whyStay'].format(lane=lane('middle'), note='E')} {DRILL['tryAgain'].format(action=DRILL['actionEither'])}")
    press(browser, "d")
    wait_for_feedback(browser, f"{DRILL['rightMove'].format(lane=lane('right'))} {DRILL['nextComing']}")

    # 5. E and G, from the left: the on-screen button.
    wait_for_pattern(browser, 5)
    browser.find_element("css selector", "#lesson-drill [data-answer='right']").click()
    wait_for_feedback(browser, f"{DRILL['rightMove'].format(lane=lane('middle'))} {DRILL['nextComing']}")

    # 6. C and E, from the right: further right is the edge (explained), then left.
    wait_for_pattern(browser, 6)
    browser.execute_script("document.querySelector(\"[data-drill='surface']\").focus()")
    press(browser, Keys.ARROW_RIGHT)
    wait_for_feedback(browser, f"{DRILL['whyEdge'].format(side=lane('right'))} {DRILL['tryAgain'].format(action=DRILL['actionLeft'])}")
    press(browser, Keys.ARROW_LEFT)
    wait_for_feedback(browser, f"{DRILL['rightMove'].format(lane=lane('middle'))} {DRILL['nextComing']}")

    # 7. E and G, from the middle: Space on the road stays.
    wait_for_pattern(browser, 7)
    press(browser, Keys.SPACE)
    wait_for_feedback(browser, f"{DRILL['rightStay'].format(lane=lane('middle'))} {DRILL['nextComing']}")

    # 8. All safe: the Stay button; the last one has no "next".
    wait_for_pattern(browser, 8)
    browser.find_element("css selector", "#lesson-drill [data-answer='stay']").click()
    wait_for_feedback(browser, DRILL["rightStay"].format(lane=lane("middle")))

    # The summary: focus on its heading, the score said once, each pattern listed.
    score = DRILL["score"].format(right=5, total=8)
    wait_for(browser, "document.getElementById('lesson-drill').dataset.state === 'finished'", timeout=10)
    assert browser.execute_script("return document.activeElement.id") == "drill-summary-heading"
    assert browser.find_element("css selector", "[data-drill='score']").text == score
    wait_for(browser, f"window.__rr.announcements.includes({json.dumps(score)})", timeout=5)
    wrong = browser.execute_script("return [...document.querySelectorAll(\"[data-drill='list'] li\")].map((li) => Number(li.dataset.wrong))")
    assert wrong == [1, 0, 0, 1, 0, 1, 0, 0]
    # Every sentence was said once, not twice (the live region is the announcer's alone).
    said = browser.execute_script("return window.__rr.announcements")
    assert said.count(expected_prompt) == 1 and said.count(score) == 1 and said.count(why) == 1, said
    screenshot(browser, "tutorial-drill-summary")

    # It can be repeated.
    browser.find_element("css selector", "[data-drill='again']").click()
    wait_for_pattern(browser, 1)
    assert drill(browser)["focus"] == "surface"
    assert browser_errors(browser) == []


def test_the_drill_takes_the_one_switch_as_a_dodge_and_is_timed_only_on_request(server, browser):
    open_page(browser, server.base_url, "/tutorial.html#lesson-drill")
    patch_settings(server, device_token(browser), {"controls": {"oneSwitch": True, "switchMode": "dodge"}})
    reload(browser)
    browser.find_element("css selector", "[data-drill='start']").click()
    wait_for_pattern(browser, 1)
    # The switch (Space) in the middle with only C safe: the dodge goes left, which is right.
    press(browser, Keys.SPACE)
    wait_for_feedback(browser, f"{DRILL['rightMove'].format(lane=lane('left'))} {DRILL['nextComing']}")
    wait_for_pattern(browser, 2)
    # A tap anywhere on the road is the switch too: G only, the dodge goes right.
    browser.find_element("css selector", "[data-drill='surface']").click()
    wait_for_feedback(browser, f"{DRILL['rightMove'].format(lane=lane('right'))} {DRILL['nextComing']}")

    # Without "tell me the answer": only what is heard and "which way?", the cars hidden until
    # the answer; with a time limit asked for (a Rapid step), an answer that does not come is "too late".
    browser.find_element("css selector", "label[for='drill-guided']").click()
    Select(browser.find_element("id", "drill-timing")).select_by_value("420")
    browser.find_element("css selector", "[data-drill='start']").click()
    wait_for_pattern(browser, 1)
    assert drill(browser)["prompt"] == f"{DRILL['heard'].format(notes='C only')} {DRILL['youAre'].format(lane=lane('middle'))} {DRILL['which']}"
    picture = browser.execute_script(PICTURE, browser.find_element("css selector", "#lesson-drill .pattern-picture"))
    assert picture["lit"] == [[0, 0, 0]] * 3 and picture["safe"] == [] and picture["unsafe"] == []
    assert picture["label"] == DRILL["hiddenRoad"].format(lane=lane("middle"))
    wait_for_feedback(browser, f"{DRILL['whyLate']} {DRILL['tryAgain'].format(action=DRILL['actionLeft'])}")
    assert drill(browser)["progress"] == progress(1)
    picture = browser.execute_script(PICTURE, browser.find_element("css selector", "#lesson-drill .pattern-picture"))
    assert picture["lit"][1] == [0, 1, 1] and picture["safe"] == [0], "the reason is shown as well as said"
    assert browser_errors(browser) == []


# ---- Cues at fast levels ----

def test_the_fast_level_advice_matches_the_notes_played_and_switches_the_setting(server, browser):
    open_page(browser, server.base_url, "/tutorial.html#lesson-fast-cues")
    rows = browser.execute_script("""return [...document.querySelectorAll('#fast-timings li')].map((li) =>
        ({level: li.dataset.level, pulse: Number(li.dataset.pulseFloor), chord: Number(li.dataset.chordFloor), text: li.textContent}))""")
    assert [row["level"] for row in rows] == ["cruise", "fast", "rapid"]
    rapid = rows[2]
    assert rapid["text"].startswith(EN["levels"]["rapid"]) and "210\u00a0ms" in rapid["text"], "a number and its unit never part"

    # What the advice says of lane pulse at Rapid's top speed is what the audio engine is asked for:
    # the right lane's slot (the third) ends late in a 210 ms step.
    # A note whose time had passed before the engine got to it starts at once (the engine never
    # schedules into the past), which shortens the gap measured below: on a busy machine the page
    # can be that late, so the example is played again until both notes started when asked.
    for _ in range(5):
        before = len(browser.execute_script("return window.__rr.notes()"))
        browser.find_element("css selector", "#lesson-fast-cues [data-mode='lanePulse']").click()
        pulse = notes_after(browser, before, 2)
        assert [n["frequency"] for n in pulse] == [C4, E4]
        if all(note["start"] > note["contextTime"] for note in pulse):
            break
        time.sleep(1)
    else:
        raise AssertionError(f"the page was too late for its own notes five times: {pulse}")
    # The chord is known when it starts, lane pulse's right lane three slots later (the same short
    # lead before both: the audio clock moves in 3 ms quanta, too coarse to measure it here).
    slot_ms = (pulse[1]["start"] - pulse[0]["start"]) * 1000
    assert abs((rapid["chord"] - rapid["pulse"]) - 3 * slot_ms) <= 1, (slot_ms, rapid)
    assert rapid["pulse"] < 0.15 * 210, "lane pulse leaves little of a Rapid step"
    before = len(browser.execute_script("return window.__rr.notes()"))
    browser.find_element("css selector", "#lesson-fast-cues [data-mode='chord']").click()
    chord = notes_after(browser, before, 2)
    assert abs(chord[0]["start"] - chord[1]["start"]) < 1e-6
    assert rapid["chord"] > 5 * rapid["pulse"], rapid

    # The advice switches the player's setting, saved on the server.
    current = browser.find_element("id", "fast-current")
    assert current.text == TUTORIAL["fastCurrent"].format(mode=EN["cueModes"]["lanePulse"])
    button = browser.find_element("id", "use-chord")
    assert button.get_attribute("aria-pressed") == "false"
    button.send_keys(Keys.ENTER)
    saved = TUTORIAL["fastSaved"].format(mode=EN["cueModes"]["chord"])
    wait_for(browser, f"document.getElementById('fast-message').textContent === {json.dumps(saved)}", timeout=10)
    stored = server.request("GET", "/api/v1/settings", token=device_token(browser)).json()
    assert stored["settings"]["audioCueMode"] == "chord"
    assert current.text == TUTORIAL["fastCurrent"].format(mode=EN["cueModes"]["chord"])
    assert button.get_attribute("aria-pressed") == "true"
    wait_for(browser, f"window.__rr.announcements.includes({json.dumps(saved)})", timeout=5)
    assert browser.execute_script("return window.__rr.announcements").count(saved) == 1
    # The cues lesson marks the new setting as the player's.
    show_lesson(browser, "lesson-cues")
    marked = browser.execute_script(
        "return [...document.querySelectorAll('#lesson-cues .demo[data-setting]')].filter((d) => !d.querySelector('.your-setting').hidden).map((d) => d.dataset.value)")
    assert marked == ["chord"]
    assert browser_errors(browser) == []


# ---- The road picture ----

def test_the_road_picture_shows_the_races_road_labelled_with_a_text_alternative(server, browser):
    open_page(browser, server.base_url, "/tutorial.html#lesson-road")
    lesson = browser.find_element("id", "lesson-road")
    picture = browser.execute_script(PICTURE, lesson)
    assert len(picture["lit"]) == 7 and sum(map(sum, picture["lit"])) == 4
    assert picture["player"] == [[6, 1]] and picture["safe"] == [0, 2] and picture["unsafe"] == [1]
    # The road's own words (as in a race) and the figure's caption.
    assert EN["road"]["youAre"].format(lane=lane("middle")) in picture["label"], picture["label"]
    figure = lesson.find_element("tag name", "figure")
    caption = figure.find_element("tag name", "figcaption")
    assert caption.text == TUTORIAL["roadCaption"]
    assert figure.get_attribute("aria-labelledby") == caption.get_attribute("id")
    legend = [" ".join(li.get_attribute("textContent").split()) for li in lesson.find_elements("css selector", ".legend li")]
    assert legend == [TUTORIAL[key] for key in ("legendCar", "legendPlayer", "legendEmpty", "legendCrash")] + \
        [f"C ✓ {TUTORIAL['legendStrip']}"]
    # Drawn with the race's shapes: the legend's samples are the road's own cell classes.
    assert browser.execute_script("""
        const road = document.querySelector('#lesson-road .road .cell.player .car');
        const sample = document.querySelector('#lesson-road .legend-cell.player .car');
        return getComputedStyle(road).clipPath === getComputedStyle(sample).clipPath && getComputedStyle(road).clipPath !== 'none';""")
    assert [li.text for li in lesson.find_elements("css selector", ".lane-labels li")] == \
        [TUTORIAL["laneLeft"], TUTORIAL["laneMiddle"], TUTORIAL["laneRight"]]
    assert browser_errors(browser) == []


# ---- Practice at any level, and the crash notice ----

def test_practice_runs_at_a_faster_level_uses_no_play_and_the_crash_notice_leaves_with_its_run(server, browser):
    open_page(browser, server.base_url, "/tutorial.html#lesson-practice")
    wait_for(browser, "window.__rr.socketIn.some((m) => m.type === 'welcome')")
    choose(browser, "practice-level", "rapid")
    browser.find_element("id", "practice-start").send_keys(Keys.ENTER)
    wait_for(browser, "document.querySelector(\"#lesson-practice [data-part='play-area']\").dataset.phase === 'running'")
    assert browser.execute_script("return window.__rr.socketOut.filter((m) => m.type === 'start').pop()") == \
        {"type": "start", "level": "rapid", "practice": True}
    started = browser.execute_script("return window.__rr.socketIn.find((m) => m.type === 'started')")
    assert started["game"]["level"] == "rapid" and started["game"]["practice"] is True
    assert browser.find_element("id", "practice-levels").get_attribute("disabled") is not None, "fixed for the run"

    # Nobody steers: a car reaches the middle lane soon at Rapid. The notice says so...
    wait_for(browser, f"document.getElementById('practice-message').textContent === {json.dumps(TUTORIAL['crashContinue'])}", timeout=60)
    screenshot(browser, "tutorial-practice-crashed")
    # ...and is gone once the next run has started (at the same level).
    wait_for(browser, "window.__rr.socketIn.filter((m) => m.type === 'started').length >= 2", timeout=10)
    browser.execute_script("return new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
    assert browser.find_element("id", "practice-message").text == ""
    assert browser.execute_script("return document.querySelector(\"#lesson-practice [data-part='banner']\").textContent") == ""
    assert browser.execute_script("return document.querySelectorAll('#lesson-practice .cell.crash').length") == 0
    assert [m["level"] for m in browser.execute_script("return window.__rr.socketOut.filter((m) => m.type === 'start')")] == ["rapid", "rapid"]
    assert int(browser.find_element("id", "practice-crashes").text) >= 1
    screenshot(browser, "tutorial-practice-next-run")

    browser.find_element("id", "practice-stop").click()
    wait_for(browser, "!document.getElementById('practice-start').hidden", timeout=10)
    assert browser.find_element("id", "practice-levels").get_attribute("disabled") is None
    quota = server.request("GET", "/api/v1/quota", token=device_token(browser)).json()
    assert quota["playsLeft"] == quota["dailyFreePlays"], "practice uses no play"
    assert browser_errors(browser) == []


# ---- The new lessons in every display mode and at phone sizes ----

FOCUS_PART = {"lesson-road": "#lesson-road figure", "lesson-cues": "#lesson-cues .explorer-result",
              "lesson-drill": "#lesson-drill .drill-layout", "lesson-fast-cues": "#fast-timings",
              "lesson-practice": "#practice-levels"}


@pytest.mark.parametrize("lesson", ["lesson-road", "lesson-cues", "lesson-drill", "lesson-fast-cues", "lesson-practice"])
def test_the_new_lessons_pass_axe_in_every_display_mode_and_fit_a_phone(server, browser, lesson):
    open_page(browser, server.base_url, f"/tutorial.html#{lesson}")
    if lesson == "lesson-cues":
        choose(browser, "pattern", "rightOnly")
        browser.find_element("id", "explorer-play").click()
    if lesson == "lesson-drill":  # mid-drill, just after a wrong move
        browser.find_element("css selector", "[data-drill='start']").click()
        wait_for_pattern(browser, 1)
        press(browser, Keys.ARROW_RIGHT)
        wait_for(browser, "document.querySelector(\"#lesson-drill [data-drill='feedback']\").textContent !== ''")
    if lesson == "lesson-fast-cues":
        browser.find_element("id", "use-chord").click()
        wait_for(browser, "document.getElementById('fast-message').textContent !== ''", timeout=10)
    browser.execute_script("document.getElementById(arguments[0]).scrollIntoView()", lesson)
    failures = axe_in_every_mode(browser, f"tutorial-new-{lesson}")
    browser.execute_script("document.documentElement.dataset.contrast = 'high'")
    violations = run_axe(browser)
    if violations:
        failures["setting-high-contrast"] = violations
    browser.execute_script("delete document.documentElement.dataset.contrast")
    assert not failures, describe_violations(failures)
    # Phones either way up, and 200 % text on a phone: nothing scrolls sideways.
    for name, (width, height, scale) in {"phone": (390, 844, 1), "phone-landscape": (844, 390, 1), "phone-text-200": (390, 844, 2)}.items():
        browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": True})
        browser.execute_script("document.documentElement.style.setProperty('--text-scale', arguments[0])", str(scale))
        try:
            browser.execute_script("return new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
            overflow = browser.execute_script("return document.documentElement.scrollWidth - document.documentElement.clientWidth")
            # The lesson's working part in view: the explorer, the drill's road, the advice, the level choice.
            browser.execute_script("arguments[0].scrollIntoView()", browser.find_element("css selector", FOCUS_PART[lesson]))
            screenshot(browser, f"tutorial-{lesson}-{name}")
            assert overflow <= 1, f"{lesson} scrolls sideways by {overflow}px ({name})"
        finally:
            browser.execute_script("document.documentElement.style.setProperty('--text-scale', '1')")
            reset_zoom(browser)
    assert browser_errors(browser) == []
