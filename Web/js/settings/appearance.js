// Applies the appearance settings to <html>: the stylesheet does the rest (style.css reads
// data-theme, data-contrast, data-font, data-motion and --text-scale). Setting a CSS custom
// property through the CSSOM is not an inline style as far as the CSP is concerned.
export function applyAppearance(settings) {
  const root = document.documentElement;
  setOrClear(root, "theme", settings.theme === "system" ? null : settings.theme);
  setOrClear(root, "contrast", settings.contrast === "high" ? "high" : null);
  setOrClear(root, "font", settings.font);
  setOrClear(root, "motion", settings.reduceMotion === "on" ? "reduce" : settings.reduceMotion === "off" ? "full" : null);
  root.style.setProperty("--text-scale", String((settings.textSize ?? 100) / 100));
}

function setOrClear(element, name, value) {
  if (value == null) delete element.dataset[name];
  else element.dataset[name] = value;
}

/** Whether motion should be reduced now: the setting, else the system's preference. */
export function motionReduced(settings) {
  if (settings.reduceMotion === "on") return true;
  if (settings.reduceMotion === "off") return false;
  return window.matchMedia("(prefers-reduced-motion: reduce)").matches;
}
