// The settings page: every field of the settings document as a native labelled control named
// after its path ("controls.keyBindings.left"). A change is applied at once and saved with the
// version it was based on; a clash with another device asks the player to choose.
import { startPage, pageReady } from "../app/page.js";
import { t, formatNumber } from "../app/i18n.js";
import { DEFAULT_SETTINGS, ALLOWED_KEYS, KEY_ACTIONS, getPath, patchFor, merge, bindingProblems, clone } from "../settings/defaults.js";
import { PRESETS } from "../settings/presets.js";
import { keyName } from "../game/controls-help.js";
import { AudioEngine } from "../audio/engine.js";
import { SoundBoard } from "../audio/sounds.js";
import { captionFor } from "../game/effects-view.js";

const { store, announcer } = await startPage();
const form = document.getElementById("settings-form");
const status = document.getElementById("save-status");
/** The status shown, as a string key, so a language switch can say it again in the new language. */
let shownStatus = null;

function showStatus(tone, key, values = {}) {
  shownStatus = { tone, key, values };
  status.className = tone ? `message ${tone}` : "message";
  status.textContent = t(key, values);
}
// A save can answer before the new language's strings have loaded: re-say the status once they have.
document.addEventListener("i18n", () => { if (shownStatus) showStatus(shownStatus.tone, shownStatus.key, shownStatus.values); });
const conflictPanel = document.getElementById("conflict");
const audio = new AudioEngine();
const sounds = new SoundBoard(audio);
const SLIDER_SAVE_MS = 400;  // a slider dragged saves once it rests, not at every pixel
let sliderTimer = null;

function fillKeyOptions() {
  for (const select of form.querySelectorAll("select[data-keys]")) {
    const value = select.value;
    select.replaceChildren(...ALLOWED_KEYS.map((code) => new Option(keyName(code), code)));
    if (value) select.value = value;
  }
}

function valueOf(control) {
  if (control.type === "checkbox") return control.checked;
  if (control.type === "range" || control.type === "number") return Number(control.value);
  // A radio group over a number (how often the score is said) sends the number, not its text:
  // the server refuses "5" where it takes 5.
  if (typeof getPath(DEFAULT_SETTINGS, control.name) === "number") return Number(control.value);
  return control.value;
}

function showValue(control) {
  const output = document.getElementById(`${control.id}-value`);
  if (output) output.textContent = t(control.dataset.unit, { value: formatNumber(Number(control.value)) });
}

/** Puts the document into the controls (never while the player is dragging one of them). */
function render(settings) {
  for (const control of form.elements) {
    if (!control.name) continue;
    const value = getPath(settings, control.name);
    if (value === undefined) continue;
    if (control.type === "checkbox") control.checked = Boolean(value);
    else if (control.type === "radio") control.checked = control.value === String(value);
    else if (document.activeElement !== control || control.tagName === "SELECT") control.value = String(value);
    if (control.type === "range") showValue(control);
  }
  // Per-type haptics only matter while haptics are on.
  for (const name of ["haptics.crash", "haptics.step", "haptics.move"]) {
    form.elements.namedItem(name).disabled = !settings.haptics.enabled;
  }
  // The score is said by itself only with announcements on (the status key works either way).
  for (const radio of form.querySelectorAll("input[name='scoreAnnouncementEvery']")) radio.disabled = !settings.announcements;
  // The interval paces the race scan and the pause and game-over buttons' scan, so it counts in either mode.
  form.elements.namedItem("controls.scanIntervalMs").disabled = !settings.controls.oneSwitch;
  for (const radio of form.querySelectorAll("input[name='controls.switchMode']")) radio.disabled = !settings.controls.oneSwitch;
  showBindingProblems(settings.controls);
}

function showBindingProblems(controls) {
  const problems = bindingProblems(controls);
  for (const action of KEY_ACTIONS) {
    const select = form.elements.namedItem(`controls.keyBindings.${action}`);
    const problem = problems.find((p) => p.action === action);
    const output = document.getElementById(`${select.id}-problem`);
    select.setAttribute("aria-invalid", String(Boolean(problem)));
    output.textContent = !problem ? ""
      : problem.kind === "duplicate" ? t("settings.keyDuplicate", { key: keyName(problem.key), other: t(`settings.keys.${problem.other}`) })
        : t("settings.keyLetter", { key: keyName(problem.key) });
  }
  return problems;
}

function save(patch) {
  const next = merge(store.settings, patch);
  if (showBindingProblems(next.controls).length > 0) return;  // explained beside the key; not sent
  showStatus("", "settings.saving");
  store.update(patch);
}

form.addEventListener("change", (event) => {
  const control = event.target;
  if (!control.name) return;
  clearTimeout(sliderTimer);
  save(patchFor(control.name, valueOf(control)));
});
form.addEventListener("input", (event) => {
  const control = event.target;
  if (control.type !== "range") return;
  showValue(control);
  clearTimeout(sliderTimer);
  sliderTimer = setTimeout(() => save(patchFor(control.name, valueOf(control))), SLIDER_SAVE_MS);
});
form.addEventListener("submit", (event) => event.preventDefault());

for (const button of document.querySelectorAll("[data-preset]")) {
  button.addEventListener("click", () => {
    const name = button.dataset.preset;
    if (name === "defaults") {
      // Keep the language and tutorial progress: resetting looks should not undo those.
      const defaults = clone(DEFAULT_SETTINGS);
      defaults.language = store.settings.language;
      defaults.tutorialDone = store.settings.tutorialDone;
      save(defaults);
    } else {
      save(PRESETS[name]);
    }
    announcer.say(t("settings.presetApplied", { name: button.textContent }));
  });
}

document.getElementById("test-sound").addEventListener("click", () => {
  audio.unlock();
  audio.configure(store.settings);
  sounds.cue(store.settings.audioCueMode === "off" ? "lanePulse" : store.settings.audioCueMode, [0, 1, 2], 800);
});
sounds.on("sound", (sound) => { document.getElementById("test-caption").textContent = captionFor(sound); });

store.on("change", ({ settings, source }) => {
  render(settings);
  audio.configure(settings);
  if (source === "remote") {
    showStatus("", "settings.updatedElsewhere", { version: store.document.version });
  }
});
store.on("saved", ({ version }) => {
  showStatus("good", "settings.saved", { version });
});
store.on("error", ({ error }) => {
  showStatus("bad", "settings.saveFailed", { message: error.message });
});
store.on("conflict", ({ mine, theirs }) => {
  const list = document.getElementById("conflict-fields");
  list.replaceChildren(...changedPaths(mine).map((path) => {
    const item = document.createElement("li");
    item.textContent = t("settings.conflictLine", {
      field: path, mine: String(getPath(merge(theirs.settings, mine), path)), theirs: String(getPath(theirs.settings, path)),
    });
    return item;
  }));
  showStatus("bad", "settings.conflictStatus");
  conflictPanel.hidden = false;
  document.getElementById("conflict-heading").focus();
});

function changedPaths(patch, prefix = "") {
  return Object.entries(patch).flatMap(([key, value]) =>
    value && typeof value === "object" ? changedPaths(value, `${prefix}${key}.`) : [`${prefix}${key}`]);
}

function closeConflict(key) {
  conflictPanel.hidden = true;
  showStatus("good", key);
  document.getElementById("presets-heading").scrollIntoView({ block: "nearest" });
  form.querySelector("input, select")?.focus();
}

document.getElementById("keep-theirs").addEventListener("click", () => {
  store.keepTheirs();
  closeConflict("settings.keptTheirs");
});
document.getElementById("keep-mine").addEventListener("click", () => {
  store.keepMine();
  closeConflict("settings.keptMine");
});
document.addEventListener("i18n", () => {
  fillKeyOptions();
  render(store.settings);
});

fillKeyOptions();
render(store.settings);
pageReady();
