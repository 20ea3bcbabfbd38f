"""The Leaderboards page against real games: two players race real games on the server (over
the WebSocket, quitting at a known score), one of them in this browser; the page lists them in
score order with their names and scores on the right level's board for each period, marks the
signed-in player, and "around me" shows that player's line and rank."""

import json

from conftest import REPO
from test_client_support import browser, device_token, open_page, screenshot, wait_for, browser_errors  # noqa: F401
from ws_client import create_player, play_to_score

EN = json.loads((REPO / "Web/i18n/en.json").read_text())

ROWS = """
  return [...document.querySelectorAll(arguments[0] + ' tbody tr')].map((tr) => ({
    cells: [...tr.cells].map((td) => td.textContent),
    me: tr.classList.contains('me'),
  }));
"""


def choose(driver, level, period):
    """Picks a board with the page's radios and waits until the page says it shows it."""
    for name, value in (("board-level", level), ("board-period", period)):
        radio = driver.find_element("id", f"{name}-{value}")
        if not radio.is_selected():
            driver.find_element("css selector", f"label[for='{name}-{value}']").click()
    shown = EN["boards"]["loaded"].format(level=EN["levels"][level], period=EN["periods"][period])
    wait_for(driver, f"document.getElementById('board-status').textContent === {json.dumps(shown)}")


def rows(driver, table):
    return [(row["cells"][0], row["cells"][1], row["cells"][2], row["me"]) for row in driver.execute_script(ROWS, table)]


def test_the_boards_list_real_scores_in_order_by_level_and_period_with_around_me(server, browser):
    open_page(browser, server.base_url, "/leaderboards.html")
    me = device_token(browser)
    reply = server.request("PATCH", "/api/v1/me", {"displayName": "Bea"}, token=me)
    assert reply.status == 200, reply.body
    ada = create_player(server, "Ada")

    # Real games, saved with the score each had when it quit.
    ada_rapid = play_to_score(server, ada, "rapid", 6)["score"]
    bea_rapid = play_to_score(server, me, "rapid", 2)["score"]
    bea_fast = play_to_score(server, me, "fast", 1)["score"]
    assert ada_rapid > bea_rapid > 0 and bea_fast > 0, (ada_rapid, bea_rapid, bea_fast)

    open_page(browser, server.base_url, "/leaderboards.html")
    bea = EN["boards"]["you"].format(name="Bea")
    for period in ("today", "thisWeek", "allTime"):
        choose(browser, "rapid", period)
        assert rows(browser, "#top-table") == [("1", "Ada", str(ada_rapid), False), ("2", bea, str(bea_rapid), True)], period
        caption = EN["boards"]["topCaption"].format(level="Rapid", period=EN["periods"][period], total=2)
        assert browser.find_element("id", "top-caption").text == caption
        resets = browser.find_element("id", "board-resets").text
        if period == "allTime":
            assert resets == EN["boards"]["neverResets"]
        else:
            assert resets.startswith(EN["boards"]["resetsAt"].split("{")[0])
        # Around me: the signed-in player's own line, rank and score.
        summary = EN["boards"]["myRank"].format(rank=2, total=2, score=bea_rapid)
        assert browser.find_element("id", "me-summary").text == summary
        assert ("2", bea, str(bea_rapid), True) in rows(browser, "#me-table")
        assert not browser.find_element("id", "top-empty").is_displayed()
    screenshot(browser, "leaderboards-rapid")

    # Another level, another board: only Bea's Fast game, and no Cruise scores at all.
    choose(browser, "fast", "today")
    assert rows(browser, "#top-table") == [("1", bea, str(bea_fast), True)]
    assert browser.find_element("id", "me-summary").text == EN["boards"]["myRank"].format(rank=1, total=1, score=bea_fast)
    choose(browser, "cruise", "today")
    assert rows(browser, "#top-table") == [] and rows(browser, "#me-table") == []
    assert browser.find_element("id", "top-empty").text == EN["boards"]["empty"]
    assert browser.find_element("id", "me-summary").text == EN["boards"]["noScore"]
    assert browser_errors(browser) == []
