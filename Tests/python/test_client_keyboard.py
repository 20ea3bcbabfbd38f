"""Keyboard alone: Tab reaches every control of every page, in order, each with a visible focus
ring of at least 3:1 against the page (WCAG 2.1.1, 2.4.7, 1.4.11)."""

import pytest

from test_client_support import PAGES, Keys, module_browser, module_server, open_page, press, screenshot  # noqa: F401

# Every control a keyboard user should reach: visible, enabled, not inside something hidden.
# Radios count once per group (Tab enters a group at its checked radio; arrows move inside).
REACHABLE = """
  const visible = (e) => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== "hidden";
  const all = [...document.querySelectorAll("a[href], button, input, select, textarea, [tabindex]")]
    .filter((e) => !e.disabled && e.tabIndex >= 0 && visible(e));
  const keys = new Set();
  for (const e of all) keys.add(e.type === "radio" ? "radio:" + e.name : e.id || e.outerHTML.slice(0, 80));
  return [...keys];
"""

FOCUS = """
  const e = document.activeElement;
  const key = e.type === "radio" ? "radio:" + e.name : e.id || e.outerHTML.slice(0, 80);
  const s = getComputedStyle(e);
  const rgb = (c) => (c.match(/[\\d.]+/g) || []).slice(0, 3).map(Number);
  const lum = ([r, g, b]) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  // The colour behind the element: the first ancestor with an opaque background.
  let n = e.parentElement, bg = "rgb(255, 255, 255)";
  while (n) { const b = getComputedStyle(n).backgroundColor; if (b && !b.startsWith("rgba(0, 0, 0, 0)") && b !== "transparent") { bg = b; break; } n = n.parentElement; }
  const a = lum(rgb(s.outlineColor)), b = lum(rgb(bg));
  const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
  return { key, outline: s.outlineStyle, width: parseFloat(s.outlineWidth), ratio, tag: e.tagName };
"""


@pytest.mark.parametrize("page", PAGES)
def test_tab_reaches_every_control_with_a_visible_focus_ring(module_server, module_browser, page):
    browser = module_browser
    open_page(browser, module_server.base_url, PAGES[page])
    expected = set(browser.execute_script(REACHABLE))
    browser.execute_script("document.activeElement.blur(); window.scrollTo(0, 0);")
    reached, order = set(), []
    for _ in range(len(expected) * 3 + 10):
        press(browser, Keys.TAB)
        focus = browser.execute_script(FOCUS)
        if focus["tag"] == "BODY" or (order and focus["key"] == order[0]):
            break
        order.append(focus["key"])
        reached.add(focus["key"])
        assert focus["outline"] != "none" and focus["width"] >= 2, f"no visible focus on {focus}"
        assert focus["ratio"] >= 3, f"focus ring contrast {focus['ratio']:.2f}:1 on {focus}"
        if len(order) == 2:
            screenshot(browser, f"{page}-focus-visible")
    assert expected <= reached, f"never reached by Tab: {sorted(expected - reached)}"
    assert order[0].startswith("<a class=\"skip-link\"") or "skip" in order[0]


def test_the_skip_link_moves_focus_to_the_main_content(module_server, module_browser):
    browser = module_browser
    open_page(browser, module_server.base_url, "/settings.html")
    browser.execute_script("document.activeElement.blur()")
    press(browser, Keys.TAB, Keys.ENTER)
    assert browser.execute_script("return document.activeElement.id") == "main"
