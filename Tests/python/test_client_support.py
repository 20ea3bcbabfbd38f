"""Browser plumbing for the client tests (test_client_*.py): Debian's headless Chromium driven
by Selenium against the real server, axe-core injected from the axe-playwright-python wheel,
media emulation through DevTools, screenshots under test-artifacts/screenshots/.

No tests live here; the file is named like the client tests so it sits with them. Fixtures
are imported by the test modules that use them."""

import importlib.util
import json
import os
import re
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from conftest import REPO, start_server

SCREENSHOTS = REPO / "test-artifacts" / "screenshots"
CHROMIUM = os.environ.get("CHROMIUM_BINARY", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")

PAGES = {
    "play": "/",
    "tutorial": "/tutorial.html",
    "settings": "/settings.html",
    "leaderboards": "/leaderboards.html",
    "unlock": "/unlock.html",
    "devices": "/devices.html",
    "accessibility": "/accessibility.html",
    "race": "/race.html",
    "watch": "/watch.html",
    "replay": "/replay.html",
}

# Records what the page asks of Web Audio and what arrives on its WebSocket, so tests observe
# the page's real calls (never the client's own constants). Runs before any page script.
RECORDER = r"""
(() => {
  const log = [];
  let nextId = 1;
  const ids = new WeakMap();
  const idOf = (node) => { if (!ids.has(node)) ids.set(node, nextId++); return ids.get(node); };
  const edges = new Map();      // node id -> [destination ids]
  const kinds = new Map();      // node id -> "oscillator" | "panner" | "gain"
  const params = new Map();     // AudioParam -> [node id, name]
  const values = new Map();     // "id:name" -> first value set
  const oscillators = [];
  window.__rr = { log, oscillators, contexts: 0, socketIn: [], socketOut: [], announcements: [] };

  const Base = window.BaseAudioContext || window.AudioContext;
  const RealContext = window.AudioContext;
  window.AudioContext = function (...args) { window.__rr.contexts++; return new RealContext(...args); };
  window.AudioContext.prototype = RealContext.prototype;

  const wrapCreate = (method, kind, paramNames) => {
    const real = Base.prototype[method];
    Base.prototype[method] = function (...args) {
      const node = real.apply(this, args);
      const id = idOf(node);
      kinds.set(id, kind);
      for (const name of paramNames) params.set(node[name], [id, name]);
      if (kind === "oscillator") {
        const entry = { id, seq: log.length, frequency: null, start: null, wave: null };
        oscillators.push(entry);
        log.push({ kind: "oscillator", id });
        const realStart = node.start.bind(node);
        node.start = (when = 0) => { entry.start = when; entry.wave = node.type; entry.contextTime = this.currentTime; return realStart(when); };
      }
      return node;
    };
  };
  wrapCreate("createOscillator", "oscillator", ["frequency"]);
  wrapCreate("createStereoPanner", "panner", ["pan"]);
  wrapCreate("createGain", "gain", ["gain"]);

  const realSet = AudioParam.prototype.setValueAtTime;
  AudioParam.prototype.setValueAtTime = function (value, time) {
    const owner = params.get(this);
    if (owner) {
      const key = owner.join(":");
      if (!values.has(key)) values.set(key, value);
    }
    return realSet.call(this, value, time);
  };
  const realConnect = AudioNode.prototype.connect;
  AudioNode.prototype.connect = function (destination, ...rest) {
    const from = idOf(this);
    if (!edges.has(from)) edges.set(from, []);
    edges.get(from).push(idOf(destination));
    return realConnect.call(this, destination, ...rest);
  };

  // Each oscillator with its frequency and the pan of the first panner downstream of it.
  window.__rr.notes = () => oscillators.map((o) => {
    let pan = null;
    const seen = new Set();
    const queue = [o.id];
    while (queue.length) {
      const id = queue.shift();
      if (seen.has(id)) continue;
      seen.add(id);
      if (kinds.get(id) === "panner" && pan === null) pan = values.get(`${id}:pan`) ?? 0;
      for (const next of edges.get(id) ?? []) queue.push(next);
    }
    return { seq: o.seq, frequency: values.get(`${o.id}:frequency`) ?? null, pan, start: o.start, wave: o.wave,
             contextTime: o.contextTime ?? null };
  });

  const RealSocket = window.WebSocket;
  window.WebSocket = function (...args) {
    const ws = new RealSocket(...args);
    ws.addEventListener("message", (event) => {
      try { log.push({ kind: "in", message: JSON.parse(event.data) }); window.__rr.socketIn.push(JSON.parse(event.data)); } catch {}
    });
    const realSend = ws.send.bind(ws);
    ws.send = (data) => { try { window.__rr.socketOut.push(JSON.parse(data)); } catch {} return realSend(data); };
    return ws;
  };
  window.WebSocket.prototype = RealSocket.prototype;
  Object.assign(window.WebSocket, { CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3 });

  // Every text the polite live region is given, in order.
  document.addEventListener("DOMContentLoaded", () => {
    const region = document.getElementById("announcer");
    if (!region) return;
    window.__rr.announcerEmptyAtLoad = region.textContent === "";
    new MutationObserver(() => {
      if (region.textContent) window.__rr.announcements.push(region.textContent);
    }).observe(region, { childList: true, characterData: true, subtree: true });
  });
})();
"""


def axe_source() -> str:
    spec = importlib.util.find_spec("axe_playwright_python")
    assert spec and spec.submodule_search_locations, "axe-playwright-python is not installed (Tests/python/requirements.txt)"
    found = list(Path(spec.submodule_search_locations[0]).rglob("axe.min.js"))
    assert found, "axe.min.js not found inside axe-playwright-python"
    return found[0].read_text()


def new_browser(width=1280, height=900, language="en-GB", record=True):
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     f"--window-size={width},{height}", f"--lang={language}", "--mute-audio"):
        options.add_argument(argument)
    options.add_experimental_option("prefs", {"intl.accept_languages": language})
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_script_timeout(30)
    if record:
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORDER})
    return driver


@pytest.fixture
def browser():
    driver = new_browser()
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def module_browser():
    """One browser, so one player, for a module's checks: the server allows 10 new players per
    address per 10 minutes, and each fresh browser profile is a new player."""
    driver = new_browser()
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def module_server(tmp_path_factory):
    """One server for a module's read-only checks (each test still gets a fresh browser)."""
    running = start_server(tmp_path_factory.mktemp("client-server"))
    yield running
    if running.process.poll() is None:
        running.stop()


def open_page(driver, base_url, path, timeout=15):
    driver.get(base_url + path)
    wait_for(driver, "document.documentElement.dataset.ready === 'true'", timeout)


def wait_for(driver, condition, timeout=15, message=None):
    """Waits until the JavaScript expression `condition` is truthy; returns its value."""
    return WebDriverWait(driver, timeout, poll_frequency=0.05).until(
        lambda d: d.execute_script(f"return ({condition});"), message or condition)


def emulate(driver, scheme=None, contrast=None, forced=None, motion=None):
    features = []
    if scheme:
        features.append({"name": "prefers-color-scheme", "value": scheme})
    if contrast:
        features.append({"name": "prefers-contrast", "value": contrast})
    if forced:
        features.append({"name": "forced-colors", "value": forced})
    if motion:
        features.append({"name": "prefers-reduced-motion", "value": motion})
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "", "features": features})


def zoom(driver, factor=2.0, width=1280, height=900):
    """Browser zoom as WCAG 1.4.4/1.4.10 mean it: the CSS viewport shrinks by the factor."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": int(width / factor), "height": int(height / factor), "deviceScaleFactor": factor, "mobile": False})


def reset_zoom(driver):
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def run_axe(driver):
    """WCAG 2.0–2.2 A and AA rules and axe's best practices (unique landmarks, one main, headings
    in order, …), with target-size switched on; returns the violations."""
    if not driver.execute_script("return typeof window.axe !== 'undefined'"):
        driver.execute_script(axe_source())
    result = driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        axe.run(document, {
          runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"] },
          rules: { "target-size": { enabled: true } },
          resultTypes: ["violations"],
        }).then((r) => done(r.violations.map((v) => ({
            id: v.id, impact: v.impact, help: v.help,
            nodes: v.nodes.map((n) => ({ target: n.target.join(" "), summary: n.failureSummary })) }))),
          (e) => done({ error: String(e) }));
    """)
    assert not isinstance(result, dict), result
    return result


def describe_violations(violations):
    return json.dumps(violations, indent=1)[:6000]


def show_lesson(driver, lesson):
    """Opens one of the tutorial's lessons (e.g. "lesson-cues") from its list of lessons."""
    driver.find_element("css selector", f"#lesson-list [data-goto='{lesson}']").click()
    wait_for(driver, f"!document.getElementById('{lesson}').hidden && document.activeElement.closest('section.lesson')?.id === '{lesson}'")


def screenshot(driver, name):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{re.sub(r'[^a-z0-9-]+', '-', name.lower())}.png"
    driver.save_screenshot(str(path))
    return path


def press(driver, *keys):
    """Real key presses (trusted events through DevTools), to whatever has focus."""
    actions = ActionChains(driver)
    for key in keys:
        actions.send_keys(key)
    actions.perform()


def browser_errors(driver):
    return [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def device_token(driver):
    return driver.execute_script("return localStorage.getItem('retrorapid.token')")


__all__ = ["Keys", "PAGES", "browser", "module_browser", "module_server", "new_browser", "open_page", "wait_for", "emulate",
           "zoom", "reset_zoom", "run_axe", "describe_violations", "screenshot", "press", "browser_errors",
           "device_token", "show_lesson", "SCREENSHOTS"]
