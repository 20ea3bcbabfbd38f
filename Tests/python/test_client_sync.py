"""Settings that follow the player, in two real browser sessions of the same player (joined
through the Devices page's link code): a change in one appears live in the other; two changes
made at once end in the player's choice, never in a silent loss; a code redeemed on the Unlock
page unlocks unlimited play."""

import json
import re
import subprocess

from test_client_support import browser, device_token, new_browser, open_page, screenshot, wait_for  # noqa: F401

# Holds this page's settings writes until the test lets them go: another device can then save
# first, as happens when two people change settings at the same moment.
HOLD_SETTINGS_WRITES = """
  const real = window.fetch;
  let release;
  const gate = new Promise((r) => { release = r; });
  window.__releaseWrites = release;
  window.__heldWrites = 0;
  window.fetch = async (url, init = {}) => {
    if (String(url).includes("/api/v1/settings") && init.method === "PATCH") {
      window.__heldWrites++;
      await gate;
    }
    return real(url, init);
  };
"""


def cli(server, *args):
    binary = server.process.args[0]
    migrations = server.process.args[server.process.args.index("--migrations-path") + 1]
    done = subprocess.run([binary, *args, *server.database_args, "--migrations", migrations],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_setting_changed_in_one_browser_appears_live_in_the_other_and_a_clash_asks(server, browser):
    laptop = browser
    open_page(laptop, server.base_url, "/devices.html")
    laptop.find_element("id", "make-code").click()
    wait_for(laptop, "!document.getElementById('code-box').hidden")
    code = laptop.find_element("id", "link-code").text

    phone = new_browser(width=420, height=900)
    try:
        open_page(phone, server.base_url, "/devices.html")
        phone.find_element("id", "claim-code").send_keys(code.lower().replace("-", " "))
        phone.find_element("css selector", "#claim-form button[type='submit']").click()
        wait_for(phone, "document.getElementById('claim-result').textContent.startsWith('Joined')")
        assert device_token(phone) != device_token(laptop)
        wait_for(phone, "document.querySelectorAll('#device-table tbody tr').length === 2")

        # Live: the laptop changes the cue mode; the phone's settings page shows it at once.
        open_page(phone, server.base_url, "/settings.html")
        open_page(laptop, server.base_url, "/settings.html")
        laptop.find_element("id", "audioCueMode-chord").click()
        wait_for(laptop, "document.getElementById('save-status').textContent.startsWith('Saved')")
        wait_for(phone, "document.getElementById('audioCueMode-chord').checked", timeout=10)
        wait_for(phone, "document.getElementById('save-status').textContent.startsWith('Updated from another device')")
        screenshot(phone, "settings-updated-from-other-device")

        # A clash: the phone's write is held while the laptop saves first.
        phone.execute_script(HOLD_SETTINGS_WRITES)
        phone.find_element("id", "theme-dark").click()
        wait_for(phone, "window.__heldWrites === 1")
        laptop.find_element("id", "theme-light").click()
        wait_for(laptop, "document.getElementById('save-status').textContent.startsWith('Saved')")
        phone.execute_script("window.__releaseWrites()")
        wait_for(phone, "!document.getElementById('conflict').hidden")
        assert phone.execute_script("return document.activeElement.id") == "conflict-heading"
        assert "theme: yours dark, theirs light" in phone.find_element("id", "conflict-fields").text
        screenshot(phone, "settings-conflict")
        phone.find_element("id", "keep-mine").click()
        wait_for(phone, "document.getElementById('save-status').textContent.startsWith('Saved')")
        stored = server.request("GET", "/api/v1/settings", token=device_token(phone)).json()
        assert stored["settings"]["theme"] == "dark" and stored["settings"]["audioCueMode"] == "chord"
        # The laptop hears about the player's choice too.
        wait_for(laptop, "document.getElementById('theme-dark').checked", timeout=10)
        assert laptop.execute_script("return document.documentElement.dataset.theme") == "dark"
    finally:
        phone.quit()


def test_a_code_redeemed_on_the_unlock_page_unlocks_unlimited_play(server, browser):
    open_page(browser, server.base_url, "/unlock.html")
    wait_for(browser, "document.getElementById('plays-summary').textContent.startsWith('5 of 5')")
    cli(server, "codes", "create", "PRESS-2026", "--force", "--unlock")
    cli(server, "codes", "create", "ARCTICCONF", "--force", "--discount", "0.99", "--currency", "GBP", "--expires", "2099-02-28T23:59:59Z")

    field = browser.find_element("id", "redeem-code")
    submit = browser.find_element("css selector", "#redeem-form button[type='submit']")
    field.send_keys("NO-SUCH-CODE")
    submit.click()
    wait_for(browser, "document.getElementById('redeem-result').className.includes('bad')")
    assert "does not exist" in browser.find_element("id", "redeem-result").text
    assert field.get_attribute("aria-invalid") == "true"

    # A discount code lowers the price due. This server has no payment provider: it says it
    # sells nothing and offers no buy button (buying: test_client_unlock.py).
    field.clear()
    field.send_keys("arctic-conf")
    submit.click()
    wait_for(browser, "document.getElementById('redeem-result').textContent.includes('£0.99')")
    wait_for(browser, "document.getElementById('price-line').textContent.includes('£0.99')")
    assert "does not sell" in browser.find_element("id", "buy-unavailable").text
    assert not browser.find_element("id", "buy").is_displayed()

    field.send_keys("press 2026")
    submit.click()
    wait_for(browser, "document.getElementById('redeem-result').textContent.includes('unlimited play')")
    assert field.get_attribute("aria-invalid") is None
    wait_for(browser, "document.getElementById('plays-summary').textContent === 'You have unlimited play.'")
    screenshot(browser, "unlock-redeemed")
    me = server.request("GET", "/api/v1/me", token=device_token(browser)).json()
    assert me["entitlements"]["unlimited"] is True


def test_the_clients_default_settings_are_the_servers(server, browser):
    """Web/js/settings/defaults.js must equal PlayerSettings' defaults: a new player's document."""
    open_page(browser, server.base_url, "/settings.html")
    client = browser.execute_async_script("""
        const done = arguments[arguments.length - 1];
        import("/js/settings/defaults.js").then(({ DEFAULT_SETTINGS }) => done(DEFAULT_SETTINGS));
    """)
    fresh = server.request("GET", "/api/v1/settings", token=device_token(browser)).json()
    assert fresh["version"] == 0  # nothing written yet: the server's defaults
    assert client == fresh["settings"]


# Every KeyboardEvent.code the UI Events spec names (https://www.w3.org/TR/uievents-code/),
# plus a few that are not codes at all: the candidates both sides must judge alike.
KEY_CODES = (
    [f"Key{chr(c)}" for c in range(ord("A"), ord("Z") + 1)] + [f"Digit{d}" for d in range(10)]
    + [f"Numpad{d}" for d in range(10)] + [f"F{n}" for n in range(1, 25)] + [f"Lang{n}" for n in range(1, 6)]
    + """Backquote Backslash BracketLeft BracketRight Comma Equal IntlBackslash IntlRo IntlYen Minus Period
    Quote Semicolon Slash AltLeft AltRight Backspace CapsLock ContextMenu ControlLeft ControlRight Enter
    MetaLeft MetaRight ShiftLeft ShiftRight Space Tab Convert KanaMode NonConvert Delete End Help Home
    Insert PageDown PageUp ArrowDown ArrowLeft ArrowRight ArrowUp NumLock NumpadAdd NumpadBackspace
    NumpadClear NumpadClearEntry NumpadComma NumpadDecimal NumpadDivide NumpadEnter NumpadEqual NumpadHash
    NumpadMemoryAdd NumpadMemoryClear NumpadMemoryRecall NumpadMemoryStore NumpadMemorySubtract
    NumpadMultiply NumpadParenLeft NumpadParenRight NumpadStar NumpadSubtract Escape Fn FnLock PrintScreen
    ScrollLock Pause BrowserBack BrowserFavorites BrowserForward BrowserHome BrowserRefresh BrowserSearch
    BrowserStop Eject LaunchApp1 LaunchApp2 LaunchMail MediaPlayPause MediaSelect MediaStop MediaTrackNext
    MediaTrackPrevious Power Sleep WakeUp AudioVolumeDown AudioVolumeMute AudioVolumeUp
    arrowleft KeyAA Key1 a""".split()
)


def patch_for(path, value):
    """`{"a": {"b": value}}` from "a.b"."""
    for part in reversed(path.split(".")):
        value = {part: value}
    return value


def test_the_clients_setting_ranges_actions_and_bindable_keys_are_the_servers(server, browser):
    """RANGES, INTEGER_CHOICES, KEY_ACTIONS and ALLOWED_KEYS in Web/js/settings/defaults.js must
    be what the real server enforces (PlayerSettings' ranges, scoreAnnouncementChoices, KeyAction
    and allowedKeys): each integer field is written out of range and the server's refusal says
    its range, or, for a field that takes only listed values, every value from -1 to 100 is
    tried; each candidate key is bound and the server's answer must match whether the client
    allows it."""
    open_page(browser, server.base_url, "/settings.html")
    client = browser.execute_async_script("""
        const done = arguments[arguments.length - 1];
        import("/js/settings/defaults.js").then((m) =>
          done({ ranges: m.RANGES, choices: m.INTEGER_CHOICES, actions: m.KEY_ACTIONS, keys: m.ALLOWED_KEYS }));
    """)
    token = device_token(browser)
    version = server.request("GET", "/api/v1/settings", token=token).json()["version"]

    def patch(path, value):
        nonlocal version
        reply = server.request("PATCH", "/api/v1/settings", patch_for(path, value), token=token,
                               headers={"If-Match": f'"{version}"'})
        if reply.status == 200:
            version = reply.json()["version"]
        else:
            assert reply.status == 400, (path, value, reply.status, reply.body)
        return reply

    def integer_fields(node, prefix=""):
        for name, value in node.items():
            if isinstance(value, dict):
                yield from integer_fields(value, f"{prefix}{name}.")
            elif isinstance(value, int) and not isinstance(value, bool):
                yield f"{prefix}{name}", value

    defaults = server.request("GET", "/api/v1/settings", token=token).json()["settings"]
    server_ranges, listed = {}, set()
    for path, default in integer_fields(defaults):
        refused = patch(path, 10**9)
        if refused.status == 200:  # no range: put it back
            patch(path, default)
            continue
        error = refused.json()["error"]
        assert error["field"] == f"settings.{path}", error
        if path in client["choices"]:  # listed values, not a range
            accepted = [value for value in range(-1, 101) if patch(path, value).status == 200]
            assert sorted(client["choices"][path]) == accepted, (path, accepted)
            listed.add(path)
            patch(path, default)
            continue
        low, high = re.search(r"must be from (-?\d+) to (-?\d+)", error["message"]).groups()
        server_ranges[path] = [int(low), int(high)]
        assert patch(path, int(low)).status == 200 and patch(path, int(high)).status == 200, path
        assert patch(path, int(low) - 1).status == 400, path
        patch(path, default)
    assert client["ranges"] == server_ranges
    assert listed == set(client["choices"])

    assert sorted(client["actions"]) == sorted(defaults["controls"]["keyBindings"])

    assert patch("controls.letterKeys", False).status == 200  # so that A and D may be bound
    bindings = defaults["controls"]["keyBindings"]
    owner = {key: action for action, key in bindings.items()}
    allowed = set(client["keys"])
    assert allowed <= set(KEY_CODES), sorted(allowed - set(KEY_CODES))
    differing = []
    for key in KEY_CODES:
        action = owner.get(key, "left")  # a key another action holds is tried on that action
        accepted = patch(f"controls.keyBindings.{action}", key).status == 200
        if accepted != (key in allowed):
            differing.append(key)
        if accepted and action == "left":
            patch("controls.keyBindings.left", bindings["left"])
    assert differing == [], f"the server and the client disagree on binding {differing}"


# Holds the first two settings writes, each until the test releases it: the first write's
# answer then arrives while a later change is still on its way.
HOLD_TWO_SETTINGS_WRITES = """
  const real = window.fetch;
  const gates = [0, 1].map(() => { let release; const gate = new Promise((r) => { release = r; }); return { gate, release }; });
  window.__releaseWrite = (n) => gates[n].release();
  window.__settingsWrites = 0;
  window.fetch = async (url, init = {}) => {
    if (String(url).includes("/api/v1/settings") && init.method === "PATCH") {
      const n = window.__settingsWrites++;
      if (n < 2) await gates[n].gate;
    }
    return real(url, init);
  };
"""


def test_a_save_answered_late_does_not_undo_a_later_change(server, browser):
    """Two quick changes (Cruise → Fast → Rapid with the arrow keys): the server's answer to
    the first must not put Fast back while Rapid is still being saved (a Start pressed then
    started a Fast race; seen under load in the keyboard game test)."""
    open_page(browser, server.base_url, "/")
    wait_for(browser, "!document.getElementById('start').disabled")
    browser.execute_script(HOLD_TWO_SETTINGS_WRITES)
    browser.execute_script("document.querySelector(\"input[name='level'][value='fast']\").click()")
    browser.execute_script("document.querySelector(\"input[name='level'][value='rapid']\").click()")
    wait_for(browser, "window.__settingsWrites === 1")
    browser.execute_script("window.__releaseWrite(0)")  # Fast's answer, while Rapid waits
    # The second write starts only once the first one's answer has been taken in.
    wait_for(browser, "window.__settingsWrites === 2")
    checked = "return document.querySelector(\"input[name='level']:checked\").value"
    kept = "return JSON.parse(localStorage.getItem('retrorapid.settings')).settings.speedLevel"
    assert browser.execute_script(kept) == "rapid"  # the page's own record of the choice
    assert browser.execute_script(checked) == "rapid"
    browser.execute_script("window.__releaseWrite(1)")
    wait_for(browser, "JSON.parse(localStorage.getItem('retrorapid.settings') || '{}').settings?.speedLevel === 'rapid'")
    assert browser.execute_script(checked) == "rapid"
