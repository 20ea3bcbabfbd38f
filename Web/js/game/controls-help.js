// The controls this player has, in words, from their settings: the in-game help (key H) and
// the tutorial list the same lines.
import { t } from "../app/i18n.js";
import { HOLD_MS } from "../input/switch-hold.js";
import { menuIntervalMs } from "../input/menu-scan.js";

/** "ArrowLeft" → "Left arrow", "KeyP" → "P", "Digit1" → "1". */
export function keyName(code) {
  if (!code) return "";
  if (code.startsWith("Key")) return code.slice(3);
  if (code.startsWith("Digit")) return code.slice(5);
  if (code.startsWith("Numpad")) return t("keys.numpad", { key: code.slice(6) });
  const named = t(`keys.${code}`);
  return named === `keys.${code}` ? code : named;
}

/**
 * The ways to move that are switched on, each `{input, text}` (input: keyboard, letterKeys,
 * touch, swipe, wheel, gamepad, oneSwitch). With one-switch mode on (dodge or scan), a tap on the road is
 * the switch, so taps and swipes are not listed as moves of their own (as the inputs behave).
 */
export function movementInputs(settings) {
  const c = settings.controls;
  const k = c.keyBindings;
  const inputs = [];
  if (c.keyboard) {
    inputs.push({ input: "keyboard", text: t("help.moveKeys", { left: keyName(k.left), right: keyName(k.right) }) });
    if (c.letterKeys) inputs.push({ input: "letterKeys", text: t("help.letterKeys") });
  }
  if (c.touch && !c.oneSwitch) inputs.push({ input: "touch", text: t("help.tap") });
  if (c.swipe && !c.oneSwitch) inputs.push({ input: "swipe", text: t("help.swipe") });
  if (c.wheel) inputs.push({ input: "wheel", text: t("help.wheel") });
  if (c.gamepad) inputs.push({ input: "gamepad", text: t("help.gamepad") });
  if (c.oneSwitch && c.switchMode === "scan") {
    inputs.push({ input: "oneSwitch", text: t("help.oneSwitch", { seconds: (c.scanIntervalMs / 1000).toLocaleString(document.documentElement.lang) }) });
  } else if (c.oneSwitch) {
    inputs.push({ input: "oneSwitch", text: t("help.oneSwitchDodge") });
  }
  return inputs;
}

/** What else a race listens to: the cool-down, pause (and the switch's hold), repeat the cue, status, help, start. */
export function raceKeys(settings, helpKey = "KeyH") {
  const c = settings.controls;
  const k = c.keyBindings;
  const lines = [];
  if (c.inputCooldownMs > 0) lines.push(t("help.cooldown", { ms: c.inputCooldownMs }));
  lines.push(t("help.pause", { key: keyName(k.pause) }));
  // The one switch alone pauses, resumes, ends a game and plays again (Web/js/input/hub.js).
  if (c.oneSwitch) {
    const lang = document.documentElement.lang;
    lines.push(t("help.oneSwitchHold", {
      hold: (HOLD_MS / 1000).toLocaleString(lang), seconds: (menuIntervalMs(settings) / 1000).toLocaleString(lang),
    }));
  }
  lines.push(t("help.repeatCue", { key: keyName(k.repeatCue) }));
  lines.push(t("help.status", { key: keyName(k.announceScore) }));
  lines.push(t("help.help", { key: keyName(helpKey) }));
  lines.push(t("help.start"));
  return lines;
}

export function describeControls(settings, helpKey = "KeyH") {
  return [...movementInputs(settings).map(({ text }) => text), ...raceKeys(settings, helpKey)];
}

export function renderControls(list, settings, helpKey) {
  renderLines(list, describeControls(settings, helpKey));
}

/** Fills a list with one item per line; `inputs[i]`, when given, becomes item i's data-input. */
export function renderLines(list, lines, inputs = []) {
  list.replaceChildren(...lines.map((line, index) => {
    const item = document.createElement("li");
    item.textContent = line;
    if (inputs[index]) item.dataset.input = inputs[index];
    return item;
  }));
}
