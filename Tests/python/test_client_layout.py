"""The race fits the screen: during a game the road, the C/E/G strip under it, the score and the
lane are all inside the viewport at once, none overlapping another, without scrolling after
Start, at phone portrait (390×844), phone landscape (844×390) and 1280×800, at 100 % and 200 %
text (the ways it can fail: the strip pushed below the road in portrait, the road cut off in
landscape or at 1280×800, a 4-digit score wrapped). Screenshots go to the test's tmp folder."""

import pytest

from test_client_support import new_browser, open_page, wait_for  # noqa: F401

VIEWPORTS = {"portrait": (390, 844, True), "landscape": (844, 390, True), "laptop": (1280, 800, False)}

PARTS = {
    "road": "[data-part='play-area']",
    "cue strip": "[data-part='cue-strip']",
    "score": "[data-part='score-digits']",
    "score label": ".hud-score dt",
    "lane": "[data-part='lane']",
    "lane label": ".hud-list > div:nth-child(2) dt",
}

RECTS = """
  const out = {};
  for (const [name, selector] of Object.entries(arguments[0])) {
    const r = document.querySelector(selector).getBoundingClientRect();
    out[name] = [r.left, r.top, r.right, r.bottom];
  }
  const digits = document.querySelector("[data-part='score-digits']");
  return { rects: out, width: innerWidth, height: innerHeight,
           scoreLines: Math.round(digits.getBoundingClientRect().height / parseFloat(getComputedStyle(digits).lineHeight)),
           sideways: document.documentElement.scrollWidth - document.documentElement.clientWidth };
"""


@pytest.fixture(scope="module")
def many_plays_server(tmp_path_factory):
    from conftest import start_server
    running = start_server(tmp_path_factory.mktemp("layout-server"), "--daily-free-plays", "50")
    yield running
    if running.process.poll() is None:
        running.stop()


@pytest.fixture(scope="module")
def phone_browser():
    driver = new_browser()
    yield driver
    driver.quit()


def overlaps(a, b):
    return a[0] < b[2] - 0.5 and b[0] < a[2] - 0.5 and a[1] < b[3] - 0.5 and b[1] < a[3] - 0.5


@pytest.mark.parametrize("text", [100, 200])
@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_road_strip_score_and_lane_are_all_on_screen_during_a_race(many_plays_server, phone_browser, tmp_path, viewport, text):
    browser = phone_browser
    width, height, mobile = VIEWPORTS[viewport]
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})
    try:
        open_page(browser, many_plays_server.base_url, "/")
        # 200 % text as the textSize setting applies it (Web/js/settings/appearance.js).
        browser.execute_script("document.documentElement.style.setProperty('--text-scale', arguments[0])", str(text / 100))
        wait_for(browser, "!document.getElementById('start').disabled")
        browser.find_element("id", "start").click()
        wait_for(browser, "document.querySelector(\"[data-part='play-area']\").dataset.phase === 'running'")
        wait_for(browser, "window.__rr.socketIn.some((m) => m.type === 'step')")
        browser.execute_script("return new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
        facts = browser.execute_script(RECTS, PARTS)
        browser.save_screenshot(str(tmp_path / f"race-{viewport}-{text}.png"))
        rects = facts["rects"]
        for name, (left, top, right, bottom) in rects.items():
            assert left >= -0.5 and top >= -0.5 and right <= facts["width"] + 0.5 and bottom <= facts["height"] + 0.5, \
                f"{name} at {rects[name]} is not inside the {facts['width']}×{facts['height']} viewport ({viewport}, {text} % text)"
        names = list(rects)
        for i, first in enumerate(names):
            for second in names[i + 1:]:
                if {first, second} in ({"score", "score label"}, {"lane", "lane label"}):
                    continue  # a label and its value share a line
                assert not overlaps(rects[first], rects[second]), f"{first} {rects[first]} overlaps {second} {rects[second]}"
        assert facts["scoreLines"] == 1, "the 4-digit score wraps"
        assert facts["sideways"] <= 1
    finally:
        for button in browser.find_elements("css selector", "[data-part='quit']"):
            if button.is_displayed():
                button.click()
                wait_for(browser, "!document.getElementById('game-over').hidden")
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
