// The controls this player has, in words, from their settings: the in-game help (key H) and
// the tutorial list the same lines.
import { t } from "../app/i18n.js";

/** "ArrowLeft" → "Left arrow", "KeyP" → "P", "Digit1" → "1". */
export function keyName(code) {
  if (!code) return "";
  if (code.startsWith("Key")) return code.slice(3);
  if (code.startsWith("Digit")) return code.slice(5);
  if (code.startsWith("Numpad")) return t("keys.numpad", { key: code.slice(6) });
  const named = t(`keys.${code}`);
  return named === `keys.${code}` ? code : named;
}

export function describeControls(settings, helpKey = "KeyH") {
  const c = settings.controls;
  const k = c.keyBindings;
  const lines = [];
  if (c.keyboard) {
    lines.push(t("help.moveKeys", { left: keyName(k.left), right: keyName(k.right) }));
    if (c.letterKeys) lines.push(t("help.letterKeys"));
  }
  if (c.touch && !c.oneSwitch) lines.push(t("help.tap"));
  if (c.swipe && !c.oneSwitch) lines.push(t("help.swipe"));
  if (c.wheel) lines.push(t("help.wheel"));
  if (c.gamepad) lines.push(t("help.gamepad"));
  if (c.oneSwitch) lines.push(t("help.oneSwitch", { seconds: (c.scanIntervalMs / 1000).toLocaleString(document.documentElement.lang) }));
  if (c.inputCooldownMs > 0) lines.push(t("help.cooldown", { ms: c.inputCooldownMs }));
  lines.push(t("help.pause", { key: keyName(k.pause) }));
  lines.push(t("help.repeatCue", { key: keyName(k.repeatCue) }));
  lines.push(t("help.status", { key: keyName(k.announceScore) }));
  lines.push(t("help.help", { key: keyName(helpKey) }));
  lines.push(t("help.start"));
  return lines;
}

export function renderControls(list, settings, helpKey) {
  list.replaceChildren(...describeControls(settings, helpKey).map((line) => {
    const item = document.createElement("li");
    item.textContent = line;
    return item;
  }));
}
