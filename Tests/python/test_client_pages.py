"""Every page of the browser client against WCAG 2.2 AA and axe's best practices in a real
headless Chromium: axe-core finds nothing in light, dark, high contrast (the system's
prefers-contrast and forced colours, and the player's own setting), reduced motion, at 200 %
text and 200% zoom, on a phone either way up; each page has one h1, a language, a skip link,
landmarks and an empty polite live region from load; strings exist in English and Spanish."""

import json
import re

import pytest

from conftest import REPO
from test_client_support import (PAGES, module_browser, describe_violations, emulate, module_server, open_page,  # noqa: F401
                                  reset_zoom, run_axe, screenshot, show_lesson, wait_for, zoom, browser_errors)

MODES = {
    "light": dict(scheme="light"),
    "dark": dict(scheme="dark"),
    "more-contrast": dict(scheme="light", contrast="more"),
    "dark-more-contrast": dict(scheme="dark", contrast="more"),
    "forced-colors": dict(scheme="dark", forced="active"),
    "reduced-motion": dict(scheme="light", motion="reduce"),
}

# The player's own text size (Web/js/settings/appearance.js) and a phone, each with and without.
SIZES = {
    "text-200": dict(text=2.0),
    "phone": dict(phone=(390, 844)),
    "phone-landscape": dict(phone=(844, 390)),
    "phone-text-200": dict(phone=(390, 844), text=2.0),
    "phone-dark": dict(phone=(390, 844), scheme="dark"),
}


def next_frames(browser):
    browser.execute_script("return new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")


def axe_in_every_mode(browser, name):
    """axe in each emulated mode and at 200% zoom (with the reflow check); returns the failures."""
    failures = {}
    for mode, media in MODES.items():
        emulate(browser, **media)
        browser.execute_script("return new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
        violations = run_axe(browser)
        if violations:
            failures[mode] = violations
        screenshot(browser, f"{name}-{mode}")
    for mode, size in SIZES.items():
        emulate(browser, scheme=size.get("scheme", "light"))
        if "phone" in size:
            width, height = size["phone"]
            browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
                "width": width, "height": height, "deviceScaleFactor": 1, "mobile": True})
        browser.execute_script("document.documentElement.style.setProperty('--text-scale', arguments[0])", str(size.get("text", 1)))
        try:
            next_frames(browser)
            violations = run_axe(browser)
            if violations:
                failures[mode] = violations
            screenshot(browser, f"{name}-{mode}")
        finally:
            browser.execute_script("document.documentElement.style.setProperty('--text-scale', '1')")
            reset_zoom(browser)
    emulate(browser, scheme="light")
    zoom(browser, 2.0)
    try:
        browser.execute_script("return new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
        violations = run_axe(browser)
        if violations:
            failures["zoom-200"] = violations
        screenshot(browser, f"{name}-zoom-200")
        # Reflow: at 200% nothing needs sideways scrolling of the whole page (WCAG 1.4.10).
        overflow = browser.execute_script("return document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 1, f"{name} scrolls sideways by {overflow}px at 200% zoom"
    finally:
        reset_zoom(browser)
    return failures


@pytest.mark.parametrize("page", PAGES)
def test_axe_finds_no_violation_in_any_theme_or_at_200_percent_zoom(module_server, module_browser, page):
    browser = module_browser
    open_page(browser, module_server.base_url, PAGES[page])
    failures = axe_in_every_mode(browser, page)
    assert not failures, describe_violations(failures)
    assert browser_errors(browser) == []


def test_axe_finds_no_violation_on_the_play_page_during_a_race_and_after_it(module_server, module_browser):
    """The racing layout (score and lane beside the road, the pause sign on it) and the
    game-over panel, in every mode."""
    browser = module_browser
    open_page(browser, module_server.base_url, "/")
    wait_for(browser, "!document.getElementById('start').disabled")
    browser.find_element("id", "start").click()
    wait_for(browser, "document.querySelector(\"[data-part='play-area']\").dataset.phase === 'running'")
    wait_for(browser, "window.__rr.socketIn.some((m) => m.type === 'step')")
    browser.find_element("css selector", "[data-part='pause']").click()
    wait_for(browser, "document.querySelector(\"[data-part='play-area']\").dataset.phase === 'paused'")
    failures = axe_in_every_mode(browser, "play-paused")
    browser.find_element("css selector", "[data-part='quit']").click()
    wait_for(browser, "!document.getElementById('game-over').hidden")
    failures.update({f"over-{mode}": v for mode, v in axe_in_every_mode(browser, "play-over").items()})
    assert not failures, describe_violations(failures)
    assert browser_errors(browser) == []


TUTORIAL_LESSONS = ["lesson-game", "lesson-road", "lesson-controls", "lesson-cues", "lesson-drill", "lesson-fast-cues",
                    "lesson-lane-change", "lesson-effects", "lesson-practice", "lesson-done"]


@pytest.mark.parametrize("lesson", TUTORIAL_LESSONS)
def test_axe_finds_no_violation_in_any_tutorial_lesson(module_server, module_browser, lesson):
    """Each lesson as the player sees it after using it: its examples played (their captions
    filled), the practice road paused mid-run, "done" pressed; in every mode, and in the
    player's own high contrast setting."""
    browser = module_browser
    open_page(browser, module_server.base_url, "/tutorial.html")
    show_lesson(browser, lesson)
    for button in browser.find_elements("css selector", f"#{lesson} [data-demo]"):
        button.click()
    practising = lesson == "lesson-practice"
    if practising:
        wait_for(browser, "window.__rr.socketIn.some((m) => m.type === 'welcome')")
        browser.find_element("id", "practice-start").click()
        wait_for(browser, "document.querySelector(\"[data-part='play-area']\").dataset.phase === 'running'")
        wait_for(browser, "window.__rr.socketIn.some((m) => m.type === 'step')")
        browser.find_element("css selector", "[data-part='pause']").click()
        wait_for(browser, "document.querySelector(\"[data-part='play-area']\").dataset.phase === 'paused'")
    if lesson == "lesson-done":
        browser.find_element("id", "tutorial-done").click()
        wait_for(browser, "document.getElementById('tutorial-done-message').textContent !== ''")
    try:
        failures = axe_in_every_mode(browser, f"tutorial-{lesson}")
        browser.execute_script("document.documentElement.dataset.contrast = 'high'")
        violations = run_axe(browser)
        if violations:
            failures["setting-high-contrast"] = violations
        assert not failures, describe_violations(failures)
        assert browser_errors(browser) == []
    finally:
        if practising:  # this module's browser is one player for every test: end the road
            browser.find_element("id", "practice-stop").click()
            wait_for(browser, "!document.getElementById('practice-start').hidden", timeout=10)


@pytest.mark.parametrize("page", PAGES)
def test_the_players_high_contrast_and_dark_settings_pass_too(module_server, module_browser, page):
    browser = module_browser
    open_page(browser, module_server.base_url, PAGES[page])
    for theme in ("dark", "light"):
        browser.execute_script(
            "document.documentElement.dataset.contrast = 'high'; document.documentElement.dataset.theme = arguments[0];", theme)
        violations = run_axe(browser)
        assert violations == [], describe_violations(violations)
        screenshot(browser, f"{page}-setting-high-contrast-{theme}")


@pytest.mark.parametrize("page", PAGES)
def test_each_page_has_one_h1_a_language_landmarks_a_skip_link_and_a_quiet_live_region(module_server, module_browser, page):
    browser = module_browser
    open_page(browser, module_server.base_url, PAGES[page])
    facts = browser.execute_script("""
        const region = document.getElementById("announcer");
        const style = getComputedStyle(region);
        const first = document.querySelector("a, button, input, select, [tabindex]");
        return {
          h1: document.querySelectorAll("h1").length,
          lang: document.documentElement.lang,
          main: document.querySelectorAll("main").length,
          nav: document.querySelectorAll("nav").length,
          header: document.querySelectorAll("header").length,
          firstIsSkip: first && first.classList.contains("skip-link") && first.getAttribute("href") === "#main",
          live: region.getAttribute("aria-live"),
          display: style.display,
          visibility: style.visibility,
          ariaHidden: region.closest("[aria-hidden='true'], [hidden]") !== null,
          emptyAtLoad: window.__rr.announcerEmptyAtLoad,
          current: document.querySelector("nav a[aria-current='page']")?.getAttribute("href"),
          untranslated: [...document.querySelectorAll("[data-i18n]")].filter((e) => e.textContent.trim() === "" || e.textContent === e.dataset.i18n).map((e) => e.dataset.i18n),
          viewport: document.querySelector("meta[name=viewport]").content,
        };
    """)
    assert facts["h1"] == 1 and facts["lang"] == "en" and facts["main"] == 1 and facts["nav"] == 1 and facts["header"] == 1
    assert facts["firstIsSkip"], "the skip link must be the first thing to tab to"
    assert facts["live"] == "polite" and facts["display"] != "none" and facts["visibility"] != "hidden" and not facts["ariaHidden"]
    assert facts["emptyAtLoad"] is True
    # The replay page needs a game (chosen on the leaderboards), so the navigation has no link to it.
    assert facts["current"] == (None if page == "replay" else PAGES[page])
    assert facts["untranslated"] == []
    assert "user-scalable" not in facts["viewport"] and "maximum-scale" not in facts["viewport"]
    # In the served HTML too: the region is there and empty before any script runs.
    html = module_server.request("GET", PAGES[page]).body.decode()
    assert re.search(r'<div id="announcer"[^>]*aria-live="polite"[^>]*></div>', html)


@pytest.mark.parametrize("page", ["play", "settings"])
def test_portrait_and_landscape_phones_show_the_page_without_sideways_scrolling(module_server, module_browser, page):
    browser = module_browser
    open_page(browser, module_server.base_url, PAGES[page])
    for name, (width, height) in {"portrait": (360, 740), "landscape": (740, 360)}.items():
        browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": height, "deviceScaleFactor": 2, "mobile": True})
        browser.execute_script("return new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
        overflow = browser.execute_script("return document.documentElement.scrollWidth - document.documentElement.clientWidth")
        screenshot(browser, f"{page}-{name}")
        assert overflow <= 1, f"{page} in {name} scrolls sideways by {overflow}px"
    reset_zoom(browser)


def test_spanish_replaces_every_string_and_the_language_attribute(module_server, module_browser):
    browser = module_browser
    open_page(browser, module_server.base_url, "/settings.html")
    select = browser.find_element("id", "language")
    select.send_keys("Español")  # a native select takes typed text
    wait_for(browser, "document.documentElement.lang === 'es'")
    es = json.loads((REPO / "Web/i18n/es.json").read_text())
    assert browser.find_element("tag name", "h1").text == es["settings"]["heading"]
    # Saved on the server (the status says so in Spanish), so every page opens in Spanish.
    wait_for(browser, "document.getElementById('save-status').textContent.startsWith(arguments[0])".replace("arguments[0]", json.dumps(es["settings"]["saved"].split(" ")[0])))
    try:
        for page in PAGES.values():
            open_page(browser, module_server.base_url, page)
            assert browser.execute_script("return document.documentElement.lang") == "es"
            violations = run_axe(browser)
            assert violations == [], describe_violations(violations)
        screenshot(browser, "play-spanish")
    finally:
        # This module's browser is one player for every test: back to English.
        open_page(browser, module_server.base_url, "/settings.html")
        browser.find_element("id", "language").send_keys("English")
        wait_for(browser, "document.getElementById('save-status').textContent.startsWith('Saved')")


def flatten(table, prefix=""):
    for key, value in table.items():
        if isinstance(value, dict):
            yield from flatten(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}"


def test_every_string_key_the_client_uses_exists_in_english_and_spanish():
    web = REPO / "Web"
    used = set()
    # The game view writes its markup for each mode with that mode's words ("${words}.…").
    view = (web / "js/game/game-view-element.js").read_text()
    words = set(re.findall(r'words: "([^"]+)"', view))
    assert {"play", "watch", "replay"} <= words
    # Pages, and the elements that write a page's markup for it.
    # (Web/js/app/i18n.js only describes the attributes, in a comment.)
    for page in [*web.glob("*.html"), *(script for script in web.glob("js/**/*.js") if script.name != "i18n.js")]:
        text = page.read_text()
        if "${words}" in text:
            text = "\n".join(text.replace("${words}", word) for word in sorted(words))
        used |= set(re.findall(r'data-i18n="([^"]+)"', text))
        for attribute in re.findall(r'data-i18n-attr="([^"]+)"', text):
            used |= {pair.split(":")[1].strip() for pair in attribute.split(";")}
        used |= set(re.findall(r'data-unit="([^"]+)"', text))
    for script in web.glob("js/**/*.js"):
        used |= set(re.findall(r'\bt\("([^"$]+)"', script.read_text()))
    # The navigation's links name their keys in its list (Web/js/app/nav.js), not through t().
    nav = re.findall(r'key: "([^"]+)"', (web / "js/app/nav.js").read_text())
    assert "watch.nav" in nav and "race.nav" in nav
    used |= set(nav)
    english = set(flatten(json.loads((web / "i18n/en.json").read_text())))
    spanish = set(flatten(json.loads((web / "i18n/es.json").read_text())))
    assert used - english == set()
    assert english == spanish, (sorted(english - spanish), sorted(spanish - english))
