"""Rough edges of the client, each seen in a real headless Chromium against the real server:
words and numbers never break inside on a phone or at 200 % text, radios do not touch, the
current page is marked unlike the focus ring, the retro font keeps its word spaces, a paused
road says so, the game-over panel names the level, at 0 plays Start and Play again are off with
the reason beside them, another device's settings are spoken once, summarised, and the
client's and the server's default settings agree (Cruise for a new player)."""

import json
import time

import pytest

from conftest import REPO
from ws_client import create_player, link_second_device, play_to_score
from test_client_support import PAGES, browser, device_token, module_server, new_browser, open_page, wait_for  # noqa: F401

EN = json.loads((REPO / "Web/i18n/en.json").read_text())

# Words (runs between spaces and hyphens) that the layout broke across two lines.
BROKEN_WORDS = """
  const broken = [];
  const selector = "h1, h2, h3, th, td, button, .button, label, legend, caption, .site-nav a, .brand";
  for (const element of document.querySelectorAll(selector)) {
    if (!element.getClientRects().length) continue;
    const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const words = /[^\\s\\-]+/g;
      let m;
      while ((m = words.exec(node.data))) {
        if (m[0].length < 2) continue;
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const lines = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
        if (lines.size > 1) broken.push(`${element.tagName.toLowerCase()}: ${m[0]}`);
      }
    }
  }
  return broken;
"""

PHONE = {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True}


@pytest.fixture(scope="module")
def phone():
    driver = new_browser()
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", PHONE)
    yield driver
    driver.quit()


def text_size(driver, percent):
    """The textSize setting as Web/js/settings/appearance.js applies it."""
    driver.execute_script("document.documentElement.style.setProperty('--text-scale', arguments[0])", str(percent / 100))
    driver.execute_script("return new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")


@pytest.mark.parametrize("text", [100, 200])
@pytest.mark.parametrize("page", PAGES)
def test_no_word_or_number_breaks_inside_on_a_phone(module_server, phone, page, text):
    open_page(phone, module_server.base_url, PAGES[page])
    text_size(phone, text)
    assert phone.execute_script(BROKEN_WORDS) == []


@pytest.mark.parametrize("page", ["play", "leaderboards", "settings"])
def test_radios_keep_apart_at_200_percent_text(module_server, phone, page):
    open_page(phone, module_server.base_url, PAGES[page])
    text_size(phone, 200)
    rects = phone.execute_script("""
        return [...document.querySelectorAll("input[type=radio], input[type=checkbox]")].filter((e) => e.getClientRects().length)
          .map((e) => { const r = e.getBoundingClientRect(); return [e.id, r.left, r.top, r.right, r.bottom]; });
    """)
    assert rects
    for i, (first, *a) in enumerate(rects):
        for second, *b in rects[i + 1:]:
            apart = a[2] + 4 <= b[0] or b[2] + 4 <= a[0] or a[3] + 4 <= b[1] or b[3] + 4 <= a[1]
            assert apart, f"{first} {a} and {second} {b} are less than 4px apart"


def test_the_current_page_marker_is_a_bar_under_the_link_not_a_ring(module_server, phone):
    open_page(phone, module_server.base_url, "/leaderboards.html")
    marker = phone.execute_script("""
        const s = getComputedStyle(document.querySelector("nav a[aria-current='page']"));
        return [s.borderTopWidth, s.borderLeftWidth, s.borderRightWidth, s.borderBottomWidth, s.borderBottomStyle];
    """)
    assert marker[:3] == ["0px", "0px", "0px"] and float(marker[3][:-2]) >= 3 and marker[4] == "solid", marker


def test_the_retro_font_keeps_the_spaces_between_words(module_server, browser):
    open_page(browser, module_server.base_url, "/")  # wide: the space is inside a line, not at its end
    space = browser.execute_async_script("""
        const done = arguments[arguments.length - 1];
        document.documentElement.dataset.font = "retro";
        document.fonts.ready.then(() => {
          const h1 = document.querySelector("h1");
          const node = h1.firstChild;
          const at = node.data.indexOf(" ");
          const range = document.createRange();
          range.setStart(node, at);
          range.setEnd(node, at + 1);
          const style = getComputedStyle(h1);
          done({ font: style.fontFamily, loaded: document.fonts.check(`16px "RR Retro"`),
                 width: range.getBoundingClientRect().width, size: parseFloat(style.fontSize) });
        });
    """)
    assert space["loaded"], space
    assert space["width"] >= 0.4 * space["size"], f"a word space is {space['width']:.1f}px at {space['size']}px: {space}"


def start_race(driver):
    wait_for(driver, "!document.getElementById('start').disabled")
    driver.find_element("id", "start").click()
    wait_for(driver, "document.querySelector(\"[data-part='play-area']\").dataset.phase === 'running'")


def test_a_paused_road_says_paused_on_the_road(server, browser):
    open_page(browser, server.base_url, "/")
    start_race(browser)
    sign = "document.querySelector(\"[data-part='paused-sign']\")"
    assert browser.execute_script(f"return {sign}.hidden")
    browser.find_element("css selector", "[data-part='pause']").click()
    wait_for(browser, "document.querySelector(\"[data-part='play-area']\").dataset.phase === 'paused'")
    facts = browser.execute_script(f"""
        const sign = {sign}, area = document.querySelector("[data-part='play-area']").getBoundingClientRect();
        const r = sign.getBoundingClientRect();
        return {{ text: sign.textContent, visible: sign.checkVisibility(), inside: r.left >= area.left && r.right <= area.right && r.top >= area.top && r.bottom <= area.bottom }};
    """)
    assert facts == {"text": EN["banners"]["paused"], "visible": True, "inside": True}
    browser.find_element("css selector", "[data-part='pause']").click()
    wait_for(browser, "document.querySelector(\"[data-part='play-area']\").dataset.phase === 'running'")
    assert browser.execute_script(f"return {sign}.hidden")


def test_game_over_names_the_level_and_at_0_plays_nothing_offers_to_start(server_factory):
    server = server_factory("--daily-free-plays", "1")
    driver = new_browser()
    try:
        open_page(driver, server.base_url, "/")
        assert driver.execute_script("return document.querySelector('input[name=level]:checked').value") == "cruise"
        start_race(driver)
        driver.find_element("css selector", "[data-part='quit']").click()
        wait_for(driver, "!document.getElementById('game-over').hidden")
        assert driver.find_element("id", "over-level").text == "Cruise"
        # The last play is used: neither button starts, and why is said beside Play again, where focus is.
        wait_for(driver, "document.getElementById('play-again').disabled && document.getElementById('start').disabled")
        note = driver.find_element("id", "over-message")
        assert note.text.startswith(EN["errors"]["noPlaysLeft"].split(".")[0]), note.text
        assert driver.execute_script("return document.activeElement.closest('#over-message') !== null && document.activeElement.getAttribute('href')") == "/unlock.html"
        gap = driver.execute_script("""
            const a = document.getElementById("play-again").getBoundingClientRect(), b = document.getElementById("over-message").getBoundingClientRect();
            return b.top - a.bottom;
        """)
        assert 0 <= gap < 100, gap
        # After a reload too: Start is off and says why.
        open_page(driver, server.base_url, "/")
        wait_for(driver, "document.getElementById('plays-left').textContent === '0'")
        assert driver.execute_script("return document.getElementById('start').disabled")
        assert driver.find_element("id", "start-message").text.startswith(EN["errors"]["noPlaysLeft"].split(".")[0])
    finally:
        driver.quit()


def test_settings_changed_on_another_device_are_spoken_once_summarised(server, browser):
    open_page(browser, server.base_url, "/")
    wait_for(browser, "!document.getElementById('start').disabled")  # the socket carries the pushes
    token = link_second_device(server, device_token(browser))  # the player's other device
    version = server.request("GET", "/api/v1/settings", token=token).json()["version"]
    for patch in ({"theme": "dark"}, {"textSize": 150}, {"mono": True}):
        reply = server.request("PATCH", "/api/v1/settings", body=patch, token=token, headers={"If-Match": f'"{version}"'})
        assert reply.status == 200, reply.body
        version = reply.json()["version"]
    wait_for(browser, "document.documentElement.dataset.theme === 'dark'")
    time.sleep(3)  # well past the summary's settling time and the announcer's spacing
    said = [text for text in browser.execute_script("return window.__rr.announcements") if "another device" in text]
    labels = ", ".join(EN["settings"][field] for field in ("theme", "textSize", "mono"))
    assert said == [EN["common"]["settingsFromOtherDevice"].format(fields=labels)], said


def test_the_clients_default_settings_are_the_servers(server, browser):
    open_page(browser, server.base_url, "/settings.html")
    client = browser.execute_async_script("""
        const done = arguments[arguments.length - 1];
        import("/js/settings/defaults.js").then((m) => done(JSON.parse(JSON.stringify(m.DEFAULT_SETTINGS))));
    """)
    stored = server.request("GET", "/api/v1/settings", token=create_player(server)).json()["settings"]
    assert client == stored
    assert client["speedLevel"] == "cruise"


def test_a_leaderboard_on_a_phone_at_200_percent_keeps_names_numbers_and_its_caption_readable(server, phone):
    for name in ("EarBot6", "Ada Lovelace-Byron"):
        play_to_score(server, create_player(server, name), "cruise", 2)
    open_page(phone, server.base_url, "/leaderboards.html")
    wait_for(phone, "document.querySelectorAll('#top-table tbody tr').length === 2")
    text_size(phone, 200)
    assert phone.execute_script(BROKEN_WORDS) == []
    facts = phone.execute_script("""
        const box = document.querySelector("#top-table").closest(".table-wrap").getBoundingClientRect();
        const caption = document.getElementById("top-caption").getBoundingClientRect();
        const when = document.querySelector("#top-table tbody td.when");
        return { captionInside: caption.left >= box.left - 0.5 && caption.right <= box.right + 0.5,
                 whenLines: Math.round(when.getBoundingClientRect().height / parseFloat(getComputedStyle(when).lineHeight)) };
    """)
    assert facts["captionInside"], "the caption runs past the visible part of its scroll box"
    assert facts["whenLines"] <= 4, f"the date and time take {facts['whenLines']} lines"
