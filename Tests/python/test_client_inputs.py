"""Every way to play reaches the server as a move (or is held back as it should be): taps on
either half of the road, swipes, the mouse wheel, a gamepad's d-pad and stick, the one-switch
scan, and the input cool-down; vibration follows its per-type toggles; the practice road goes
on after a crash without using a play."""

import time

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.actions.wheel_input import ScrollOrigin

from test_client_support import Keys, browser, device_token, open_page, press, wait_for  # noqa: F401
from ws_client import link_second_device

ROAD = "[data-part='play-area']"
RUNNING = f"document.querySelector(\"{ROAD}\").dataset.phase === 'running'"

# A stand-in pad (no gamepad here) that the page reads through navigator.getGamepads.
FAKE_PAD = """
  const pad = { index: 0, id: "test pad", connected: true, mapping: "standard", axes: [0, 0, 0, 0],
                buttons: Array.from({ length: 17 }, () => ({ pressed: false, value: 0 })) };
  window.__pad = pad;
  navigator.getGamepads = () => [pad];
  window.dispatchEvent(new Event("gamepadconnected"));
"""


def moves(driver):
    return driver.execute_script("return window.__rr.socketOut.filter((m) => m.type === 'move').map((m) => m.direction)")


def start_cruise(driver):
    if not driver.execute_script(f"return {RUNNING}"):
        driver.execute_script("document.querySelector(\"input[name='level'][value='cruise']\").checked = true")
        button = "play-again" if driver.execute_script("return !document.getElementById('game-over').hidden") else "start"
        driver.find_element("id", button).send_keys(Keys.ENTER)
        wait_for(driver, RUNNING)


def expect_move(driver, action, direction, attempts=3):
    """Does `action` during a race and expects one more move that way (a new race if a crash got in first)."""
    for _ in range(attempts):
        start_cruise(driver)
        before = len(moves(driver))
        action()
        try:
            wait_for(driver, f"window.__rr.socketOut.filter((m) => m.type === 'move').length > {before}", timeout=3)
        except Exception:
            if driver.execute_script(f"return {RUNNING}"):
                raise
            continue  # the road ended the race first: try again
        assert moves(driver)[before:] == [direction]
        return
    raise AssertionError(f"no {direction} move seen")


def patch_settings(server, driver, patch, token=None):
    token = token or device_token(driver)
    version = server.request("GET", "/api/v1/settings", token=token).json()["version"]
    reply = server.request("PATCH", "/api/v1/settings", patch, token=token, headers={"If-Match": f'"{version}"'})
    assert reply.status == 200, reply.body


def test_tap_swipe_wheel_and_gamepad_each_move_the_car(server, browser):
    open_page(browser, server.base_url, "/")
    wait_for(browser, "!document.getElementById('start').disabled")
    road = browser.find_element("css selector", ROAD)
    width = road.size["width"]

    expect_move(browser, lambda: ActionChains(browser).move_to_element_with_offset(road, -width // 4, 0).click().perform(), "left")
    expect_move(browser, lambda: ActionChains(browser).move_to_element_with_offset(road, width // 4, 0).click().perform(), "right")
    expect_move(browser, lambda: ActionChains(browser).move_to_element_with_offset(road, 0, 0).click_and_hold()
                .move_by_offset(-width // 3, 4).release().perform(), "left")
    expect_move(browser, lambda: ActionChains(browser).scroll_from_origin(ScrollOrigin.from_element(road), 0, 120).perform(), "right")

    browser.execute_script(FAKE_PAD)

    def dpad_left():
        browser.execute_script("window.__pad.buttons[14] = { pressed: true, value: 1 }")
        time.sleep(0.1)
        browser.execute_script("window.__pad.buttons[14] = { pressed: false, value: 0 }")

    def stick_right():
        browser.execute_script("window.__pad.axes[0] = 0.9")
        time.sleep(0.1)
        browser.execute_script("window.__pad.axes[0] = 0")

    expect_move(browser, dpad_left, "left")
    expect_move(browser, stick_right, "right")


def test_the_cooldown_counts_close_presses_once_and_the_one_switch_scan_chooses(server, browser):
    open_page(browser, server.base_url, "/")
    patch_settings(server, browser, {"controls": {"inputCooldownMs": 400}})
    open_page(browser, server.base_url, "/")
    wait_for(browser, "!document.getElementById('start').disabled")
    start_cruise(browser)
    before = len(moves(browser))
    press(browser, Keys.ARROW_LEFT)
    time.sleep(0.1)
    press(browser, Keys.ARROW_RIGHT)  # 100 ms later: inside the cool-down
    time.sleep(0.3)
    if browser.execute_script(f"return {RUNNING}"):
        assert moves(browser)[before:] == ["left"]
    browser.find_element("css selector", "[data-part='quit']").click()
    wait_for(browser, "!document.getElementById('game-over').hidden")

    patch_settings(server, browser, {"controls": {"inputCooldownMs": 0, "oneSwitch": True, "switchMode": "scan", "scanIntervalMs": 500}})
    open_page(browser, server.base_url, "/")
    wait_for(browser, "!document.getElementById('start').disabled")
    start_cruise(browser)
    wait_for(browser, "!document.querySelector(\"[data-part='scan']\").hidden")

    def choose_left():
        wait_for(browser, "document.querySelector(\"[data-part='scan'] li.highlighted\")?.dataset.option === 'left'", timeout=5)
        press(browser, Keys.SPACE)

    expect_move(browser, choose_left, "left")
    # Arrow keys still work beside the switch; "stay" sends nothing.
    wait_for(browser, "document.querySelector(\"[data-part='scan'] li.highlighted\")?.dataset.option === 'stay'", timeout=5)
    before = len(moves(browser))
    press(browser, Keys.SPACE)
    time.sleep(0.2)
    assert len(moves(browser)) == before


def test_vibration_follows_each_toggle(server, browser):
    open_page(browser, server.base_url, "/")
    browser.execute_script("window.__vibrations = []; navigator.vibrate = (p) => { window.__vibrations.push(p); return true; };")
    wait_for(browser, "!document.getElementById('start').disabled")
    start_cruise(browser)
    wait_for(browser, "window.__vibrations.some((p) => JSON.stringify(p) === '[12]')", timeout=5)
    # Changed on the player's other device, so the server pushes it to this page live.
    patch_settings(server, browser, {"haptics": {"step": False}}, token=link_second_device(server, device_token(browser)))
    wait_for(browser, "window.__rr.socketIn.some((m) => m.type === 'settings')", timeout=5)
    count = browser.execute_script("return window.__vibrations.filter((p) => JSON.stringify(p) === '[12]').length")
    time.sleep(2)
    if browser.execute_script(f"return {RUNNING}"):
        assert browser.execute_script("return window.__vibrations.filter((p) => JSON.stringify(p) === '[12]').length") == count


def test_the_practice_road_goes_on_after_a_crash_and_uses_no_play(server, browser):
    open_page(browser, server.base_url, "/tutorial.html#lesson-practice")
    wait_for(browser, "!document.getElementById('practice-start').hidden")
    time.sleep(0.5)  # the socket's welcome
    browser.find_element("id", "practice-start").click()
    # Nobody steers, so the road crashes the car; a new practice road follows by itself.
    wait_for(browser, "document.getElementById('practice-crashes').textContent === '1'", timeout=60)
    wait_for(browser, "window.__rr.socketOut.filter((m) => m.type === 'start' && m.practice === true).length >= 2", timeout=10)
    wait_for(browser, RUNNING, timeout=10)
    browser.find_element("id", "practice-stop").click()
    wait_for(browser, "document.getElementById('practice-message').textContent.startsWith('Practice stopped')", timeout=10)
    quota = server.request("GET", "/api/v1/quota", token=device_token(browser)).json()
    assert quota["playsLeft"] == 5


def test_the_one_switch_dodge_keeps_up_with_cruise(server_factory, browser):
    """A switch player who presses within 0–300 ms of each cue that says "not your lane" survives
    at Cruise (the bot in switch_bots.py; the long measurement is in docs/BENCHMARKS.md). Counted
    in steps, never timed: at least 25 steps in most of three games (the road is the server's)."""
    import switch_bots

    server = server_factory("--daily-free-plays", "100")
    switch_bots.setup(server, browser, "switch", patch_settings, open_page, wait_for)
    # The switch dodges: no highlight scans, and the help names the dodge.
    assert browser.execute_script("return document.querySelector(\"[data-part='scan']\").hidden")
    # The switch alone starts a race (Space on the road), and a press in a paused race resumes it.
    browser.execute_script("document.querySelector(\"input[name='level'][value='cruise']\").checked = true")
    browser.find_element("css selector", ROAD).click()  # the tap is the switch too: it starts the race
    wait_for(browser, RUNNING)
    press(browser, "p")
    wait_for(browser, "document.querySelector(\"[data-part='play-area']\").dataset.phase === 'paused'")
    press(browser, Keys.SPACE)
    wait_for(browser, RUNNING)
    browser.find_element("css selector", "[data-part='quit']").click()
    wait_for(browser, "!document.getElementById('game-over').hidden")
    results = [switch_bots.play(browser, "switch", seed, "cruise", 25, wait_for) for seed in (1, 2, 3)]
    assert sum(result["steps"] >= 25 for result in results) >= 2, results
    # Every move went out as the page's dodge: left or right, naming a step it had seen.
    sent = browser.execute_script("return window.__rr.socketOut.filter((m) => m.type === 'move')")
    assert sent and all(m["direction"] in ("left", "right") and isinstance(m["step"], int) for m in sent)
    assert browser.execute_script("return window.__bot.presses") > 0


def test_a_dodge_goes_to_the_nearest_safe_lane_and_left_on_a_tie(browser, server):
    """The dodge's rule (Web/js/input/dodge.js) on every case the cue can name."""
    open_page(browser, server.base_url, "/")
    cases = browser.execute_async_script("""
        const done = arguments[arguments.length - 1];
        import("/js/input/dodge.js").then(({ dodgeMoves }) => done([
          dodgeMoves(1, [0, 2]), dodgeMoves(1, [2]), dodgeMoves(1, [0]), dodgeMoves(1, [1, 2]),
          dodgeMoves(0, [2]), dodgeMoves(0, [1, 2]), dodgeMoves(2, [0]), dodgeMoves(2, [0, 1]),
          dodgeMoves(0, [0]), dodgeMoves(1, []),
        ]));
    """)
    assert cases == [["left"], ["right"], ["left"], [], ["right", "right"], ["right"], ["left", "left"], ["left"], [], []]
