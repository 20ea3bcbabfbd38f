"""Two bots that play in the real page, for the one-switch test (test_client_inputs.py) and the
benchmark (scripts/bench-switch.py, figures in docs/BENCHMARKS.md). Both react to what a player
hears: each `step` message's cue (its `safeLanes`) against the car's lane, and nothing else.

- "switch": one-switch mode with the dodge scheme; when the cue says its lane is not safe it
  presses the switch (Space) once, at a time drawn uniformly from 0–300 ms after the cue.
- "keyboard": the arrow keys; when its lane is not safe it presses towards the nearest safe
  lane (a tie picked at random, as a person might) after a human-like reaction: normal,
  mean 226 ms, sd 40 ms, never under 150 ms; a second press for a two-lane move 120 ms later.
- "scan": for comparison, the timed scan (switchMode "scan", 1 s a choice, half the old
  preset's 2 s): it presses 0–300 ms after the highlight reaches the way to the nearest safe lane.

Presses are key events dispatched on the road, so the page's own input code handles them
(keyboard.js, hub.js, dodge.js, controller.js). Delays come from a seeded generator (mulberry32)
so a run presses at the same offsets each time; the road is the server's (its own seed)."""

BOT = r"""
  const [mode, seed] = arguments;
  let s = seed >>> 0;
  const rand = () => {
    s = (s + 0x6D2B79F5) >>> 0; let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1); t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const normal = () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
  const area = document.querySelector("[data-part='play-area']");
  const key = (code) => {
    if (bot.off) return;
    for (const type of ["keydown", "keyup"]) area.dispatchEvent(new KeyboardEvent(type, { code, key: code, bubbles: true }));
  };
  const bot = window.__bot = { presses: 0, delays: [], off: false };  // off: a test takes the switch over
  const react = (m) => {
    if (mode === "switch") {
      const delay = rand() * 300;
      bot.delays.push(delay);
      setTimeout(() => { bot.presses++; key("Space"); }, delay);
      return;
    }
    const nearest = Math.min(...m.safeLanes.map((lane) => Math.abs(lane - m.lane)));
    const choices = m.safeLanes.filter((lane) => Math.abs(lane - m.lane) === nearest);
    const target = choices[Math.floor(rand() * choices.length)];
    const code = target < m.lane ? "ArrowLeft" : "ArrowRight";
    const delay = Math.max(150, 226 + 40 * normal());
    bot.delays.push(delay);
    for (let i = 0; i < Math.abs(target - m.lane); i++) setTimeout(() => { bot.presses++; key(code); }, delay + 120 * i);
  };
  // "scan": the timed scan (switchMode "scan"); the bot presses 0–300 ms after the highlight
  // reaches the direction towards the nearest safe lane (the old one-switch scheme, for comparison).
  let want = null, target = null, lane = null, shown = null;
  if (mode === "scan") {
    setInterval(() => {
      const now = document.querySelector("[data-part='scan'] li.highlighted")?.dataset.option ?? null;
      if (now !== shown && now !== null && now === want) {
        const delay = rand() * 300;
        bot.delays.push(delay);
        setTimeout(() => { bot.presses++; key("Space"); }, delay);
      }
      shown = now;
    }, 10);
  }
  const aim = () => { want = target === null || target === lane ? null : target < lane ? "left" : "right"; };
  const list = window.__rr.socketIn;
  list.push = function (...items) {
    for (const m of items) {
      if (mode === "scan") {
        if (m.type === "step") {
          lane = m.lane;
          const d = Math.min(...m.safeLanes.map((l) => Math.abs(l - m.lane)));
          target = m.safeLanes.length ? m.safeLanes.filter((l) => Math.abs(l - m.lane) === d)[0] : null;
          aim();
        } else if (m.type === "moved") { lane = m.lane; aim(); }
      } else if (m.type === "step" && m.safeLanes?.length && !m.safeLanes.includes(m.lane)) react(m);
    }
    return Array.prototype.push.apply(this, items);
  };
"""

RUNNING = "document.querySelector(\"[data-part='play-area']\").dataset.phase === 'running'"


def setup(server, driver, mode, patch_settings, open_page, wait_for):
    """Opens the play page as a player whose settings suit `mode` (the switch: one-switch dodge)."""
    open_page(driver, server.base_url, "/")
    controls = {"oneSwitch": mode in ("switch", "scan"), "switchMode": "scan" if mode == "scan" else "dodge",
                "scanIntervalMs": 1000, "inputCooldownMs": 0}
    patch_settings(server, driver, {"speedLevel": "cruise", "controls": controls})
    open_page(driver, server.base_url, "/")
    wait_for(driver, "!document.getElementById('start').disabled")


def play(driver, mode, seed, level, max_steps, wait_for, timeout_per_step=3.0):
    """One game with the bot: until it ends or reaches `max_steps` (then quit). Returns
    {"steps", "score", "crashed"}."""
    import time

    driver.execute_script("window.__rr.socketIn.length = 0")  # this game's messages alone
    driver.execute_script(BOT, mode, seed)
    driver.execute_script(f"document.querySelector(\"input[name='level'][value='{level}']\").checked = true")
    button = "play-again" if driver.execute_script("return !document.getElementById('game-over').hidden") else "start"
    driver.execute_script(f"document.getElementById('{button}').click()")
    # A start waits for its commit (an fsync) and the countdown: on a machine whose disk other
    # work keeps busy that has taken longer than the usual 15 s. What is measured here is the
    # game, in steps, not how soon it starts.
    wait_for(driver, RUNNING, timeout=45)
    deadline = time.monotonic() + max_steps * timeout_per_step
    last = "window.__rr.socketIn.filter((m) => m.type === 'step' || m.type === 'gameOver').pop()"
    while time.monotonic() < deadline:
        message = driver.execute_script(f"return {last}") or {}
        if message.get("type") == "gameOver":
            return {"steps": message["steps"], "score": message["score"], "crashed": True}
        if message.get("step", 0) >= max_steps:
            driver.execute_script("document.querySelector(\"[data-part='quit']\").click()")
            over = wait_for(driver, "window.__rr.socketIn.filter((m) => m.type === 'gameOver').pop()")
            return {"steps": over["steps"], "score": over["score"], "crashed": False}
        time.sleep(0.2)
    raise AssertionError(f"the {mode} bot's game neither ended nor reached {max_steps} steps in time")

