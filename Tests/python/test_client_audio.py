"""The sound layer, observed through the Web Audio calls the page really makes (an init script
records every oscillator's frequency, start time and the pan of the panner it feeds): lane
notes C4/E4/G4 panned −1/0/+1, each cue mode's schedule, mono, the lane-change styles, no
context before a user gesture, and a real server step turned into its cue."""

import pytest

from test_client_support import Keys, browser, module_server, open_page, press, show_lesson, wait_for  # noqa: F401

C4, E4, G4 = 261.63, 329.63, 392.0


def notes_after(driver, count_before):
    return driver.execute_script("return window.__rr.notes()")[count_before:]


def click_demo(driver, selector):
    before = len(driver.execute_script("return window.__rr.notes()"))
    driver.find_element("css selector", selector).click()
    wait_for(driver, f"window.__rr.notes().length > {before}")
    driver.execute_script("return new Promise((r) => setTimeout(r, 50))")
    return notes_after(driver, before)


def test_no_audio_context_exists_before_the_first_gesture(module_server, browser):
    open_page(browser, module_server.base_url, "/tutorial.html#lesson-cues")
    assert browser.execute_script("return window.__rr.contexts") == 0
    browser.find_element("css selector", "[data-demo='cue'][data-mode='chord']").click()
    wait_for(browser, "window.__rr.contexts === 1")


def test_each_cue_mode_schedules_the_safe_lanes_notes_and_pans(module_server, browser):
    # The tutorial's examples: the middle lane blocked, left and right safe.
    open_page(browser, module_server.base_url, "/tutorial.html#lesson-cues")

    pulse = click_demo(browser, "[data-demo='cue'][data-mode='lanePulse']")
    assert [(n["frequency"], n["pan"]) for n in pulse] == [(C4, -1), (G4, 1)]
    slot = (pulse[1]["start"] - pulse[0]["start"]) / 2
    assert slot > 0.05, "lane pulse keeps an equal silence where the blocked middle lane's note would be"

    arpeggio = click_demo(browser, "[data-demo='cue'][data-mode='arpeggio']")
    assert [(n["frequency"], n["pan"]) for n in arpeggio] == [(C4, -1), (G4, 1)]
    gap = arpeggio[1]["start"] - arpeggio[0]["start"]
    assert 0.04 < gap < 2 * slot - 0.01, "arpeggio plays the safe notes one after the other, with no gap for the blocked lane"

    chord = click_demo(browser, "[data-demo='cue'][data-mode='chord']")
    assert sorted((n["frequency"], n["pan"]) for n in chord) == [(C4, -1), (G4, 1)]
    assert abs(chord[0]["start"] - chord[1]["start"]) < 1e-6, "a chord's notes start together"

    caption = browser.find_element("css selector", ".demo:has([data-mode='chord']) [data-caption]").text
    assert "C · G" in caption, "every sound is shown too"


def test_lane_change_cues_play_the_lane_note_and_the_safe_or_unsafe_sound(module_server, browser):
    open_page(browser, module_server.base_url, "/tutorial.html#lesson-lane-change")
    for lane, frequency, pan in ((0, C4, -1), (1, E4, 0), (2, G4, 1)):
        notes = click_demo(browser, f"[data-demo='lane'][data-lane='{lane}']")
        assert [(n["frequency"], n["pan"]) for n in notes] == [(frequency, pan)]
    safe = click_demo(browser, "[data-demo='success'][data-safe='true']")
    unsafe = click_demo(browser, "[data-demo='success'][data-safe='false']")
    assert len(safe) == 2 and safe[0]["frequency"] < safe[1]["frequency"], "safe: a short rising pair"
    assert len(unsafe) == 1 and unsafe[0]["frequency"] < C4, "unsafe: one low sound"
    assert {n["frequency"] for n in safe + unsafe}.isdisjoint({C4, E4, G4})
    both = click_demo(browser, "[data-demo='both']")
    assert (both[0]["frequency"], both[0]["pan"]) == (G4, 1), "both: the lane's note first"
    assert [n["frequency"] for n in both[1:]] == [n["frequency"] for n in safe], "then the safe sound"
    show_lesson(browser, "lesson-effects")
    for effect in ("bump", "speedUpSoon", "speedUp", "crash"):
        assert click_demo(browser, f"[data-demo='effect'][data-effect='{effect}']"), effect


def test_mono_centres_every_note_and_keeps_the_pitch(module_server, browser):
    open_page(browser, module_server.base_url, "/settings.html")
    browser.find_element("id", "mono").click()
    wait_for(browser, "document.getElementById('save-status').textContent.startsWith('Saved')")
    open_page(browser, module_server.base_url, "/tutorial.html#lesson-cues")
    pulse = click_demo(browser, "[data-demo='cue'][data-mode='lanePulse']")
    assert [(n["frequency"], n["pan"]) for n in pulse] == [(C4, 0), (G4, 0)]
    open_page(browser, module_server.base_url, "/settings.html")
    browser.find_element("id", "mono").click()
    wait_for(browser, "document.getElementById('save-status').textContent.startsWith('Saved')")


@pytest.mark.parametrize("mode", ["lanePulse", "arpeggio", "chord", "off"])
def test_a_real_server_step_is_played_as_its_safe_lanes_in_the_chosen_mode(server, browser, mode):
    open_page(browser, server.base_url, "/settings.html")
    if not browser.find_element("id", f"audioCueMode-{mode}").is_selected():  # lane pulse is the default
        browser.find_element("id", f"audioCueMode-{mode}").click()
        wait_for(browser, "document.getElementById('save-status').textContent.startsWith('Saved')")
    open_page(browser, server.base_url, "/")
    wait_for(browser, "!document.getElementById('start').disabled")
    browser.find_element("id", "start").send_keys(Keys.ENTER)  # the gesture that starts the audio
    wait_for(browser, "window.__rr.socketIn.filter((m) => m.type === 'step').length >= 3", timeout=15)
    press(browser, "p")
    # In the recorder's log, the oscillators made after a step message are that step's cue.
    steps = browser.execute_script("""
        const log = window.__rr.log, notes = window.__rr.notes();
        const out = [];
        log.forEach((entry, index) => {
          if (entry.kind !== "in" || entry.message.type !== "step") return;
          let end = log.findIndex((e, i) => i > index && e.kind === "in");
          if (end < 0) end = log.length;
          out.push({ safe: entry.message.safeLanes, notes: notes.filter((n) => n.seq > index && n.seq < end) });
        });
        return out;
    """)
    assert len(steps) >= 3
    lane_of = {C4: 0, E4: 1, G4: 2}
    pan_of = {0: -1, 1: 0, 2: 1}
    for step in steps:
        heard = [(lane_of[n["frequency"]], n["pan"]) for n in step["notes"] if n["frequency"] in lane_of]
        if mode == "off":
            assert heard == []
            continue
        assert sorted(heard) == [(lane, pan_of[lane]) for lane in sorted(step["safe"])], step
        starts = [n["start"] for n in step["notes"]]
        if mode == "chord" and len(starts) > 1:
            assert max(starts) - min(starts) < 1e-6
        if mode in ("lanePulse", "arpeggio") and len(starts) > 1:
            assert starts == sorted(starts) and len(set(starts)) == len(starts)
